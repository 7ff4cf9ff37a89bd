// Phase 2 routing for real: pipelines submitting to a migrating Slurm site (the ten-node migration
// bed, through slurmrestd) land on Tandem's partition or the legacy one by the configured share, and
// the SLO gate judges those routed pipelines' jobs: when Tandem's pool fails them, Phase 2 falls back
// to 0% and the pilot nodes go back. Everything is real (Temporal, Slurm, the worker's activities).
//
// Tolerance: a pipeline's pool is its workflow id's FNV-1a bucket against the share, so N pipelines put
// ~Binomial(N, p) on Tandem. With N = 16 the expectation is 4 ± 3 at 25% (96% of id sets) and 8 ± 3 at
// 50% (92%). The ids here are fixed, so the test is deterministic; each pipeline's pool is also checked
// exactly against the decision function.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { MigrationPlanSchema, type SiteSnapshot } from '../../contract/migration.js';
import { routingBucket } from '../../contract/routing.js';
import type { PipelineStatus, TimelineEntry } from '../../contract/status.js';
import { SlurmrestdJobBackend } from '../../backends/slurm/slurmrestd-backend.js';
import { migrationStatusQuery, pauseSignal, resumeSignal, stagedMigration } from '../../workflows/migration.js';
import { spec, startWorker, tempDir, uniqueQueue, waitFor } from '../helpers.js';
import { useMigrationSite } from './slurm-site.js';

const N = 16;
const bed = useMigrationSite('rte');

const snapshot = async (): Promise<SiteSnapshot> => ({ partitions: await bed.site.admin.partitions() });
const routingOf = (home: string) => {
  try {
    return JSON.parse(readFileSync(join(home, 'sites', 'rte', 'routing.json'), 'utf8')) as { percent: number };
  } catch {
    return undefined;
  }
};

// Two tiny Slurm jobs per pipeline. FAIL_ON names a partition where the job fails (the injected
// breach): Slurm tells the job its partition. The pipelines end at the checkpoint stage (these jobs
// write none); what matters here is where their jobs ran and how they ended.
const job = { runtime: 'slurm' as const, command: ['/bin/sh', '-c', 'test "$SLURM_JOB_PARTITION" != "$FAIL_ON" || exit 3; sleep 1'], resources: { memoryMB: 64, walltime: '2m' } };
const pipelineSpec = (failOn: string) =>
  spec({ name: 'route', retry: { maxAttempts: 1, initialInterval: '100ms' }, stages: { preprocess: { ...job, env: { FAIL_ON: failOn } }, train: { ...job, env: { FAIL_ON: failOn } }, deploy: { runtime: 'local' } } });

interface Ran {
  id: string;
  status: PipelineStatus;
  timeline: TimelineEntry[];
  partitions: string[];
}

describe('Phase 2 routes real pipelines by the share', () => {
  test(`${N} pipelines at 25%, then ${N} at 50%, land on both partitions in proportion; failures on Tandem's pool fall back`, async () => {
    const before = await snapshot();
    const home = tempDir('route-home');
    process.env.TANDEM_SLURM_SITES = `rte=${bed.site.cluster.slurmConf}`;
    const slurm = new SlurmrestdJobBackend({ site: 'rte', workDir: bed.site.cluster.workDir, statusIntervalMs: 250, rest: { socketPath: bed.site.cluster.restSocket } });
    const taskQueue = uniqueQueue('route');
    const w = await startWorker({ taskQueue, home, backends: { slurm } });
    let h: WorkflowHandle<typeof stagedMigration> | undefined;
    try {
      const plan = MigrationPlanSchema.parse({
        site: 'rte',
        requireApproval: false,
        gate: { maxCompletionRatio: 4, maxWaitRatio: 4, waitSlack: '30s', timeout: '3m' },
        // Long enough for the test to pause the step before it is judged; judged right after resume.
        phase2: { steps: [25, 50], observeFor: '20s' },
      });
      h = await bed.client.workflow.start(stagedMigration, { taskQueue, workflowId: uniqueQueue('route-mig'), args: [{ plan }] });

      /** Holds the step at `percent`, runs N pipelines through it, and lets the gate judge them. */
      const step = async (percent: number, failOn: string): Promise<Ran[]> => {
        const failed = await waitFor(`routing ${percent}%`, async () => (routingOf(home)?.percent === percent ? 'no' : (await h!.query(migrationStatusQuery)).state === 'failed' ? 'yes' : undefined), 150_000, 100);
        if (failed === 'yes') throw new Error(`the migration failed before routing ${percent}%: ${JSON.stringify((await h!.query(migrationStatusQuery)).gates.at(-1))}`);
        await h!.signal(pauseSignal);
        // Somebody else's job failing in Tandem's pool is not a routed pipeline's: the gate ignores it.
        await bed.site.admin.run('sbatch', ['-p', 'tandem', '-J', `wrf-train-${percent}`, '-D', bed.site.cluster.workDir, '-o', '/dev/null', '--wrap', 'exit 3']);
        const handles = await Promise.all(Array.from({ length: N }, (_, i) => w.tandem.launch(pipelineSpec(failOn), { id: `route-${percent}-${i}` })));
        const ran = await Promise.all(
          handles.map(async (p) => {
            await p.result().catch(() => undefined);
            const timeline = await p.timeline();
            const ids = timeline.filter((e) => e.kind === 'job-submitted' && e.jobId).map((e) => e.jobId!);
            const partitions = await Promise.all(ids.map(async (id) => (await bed.site.admin.job(id))?.Partition ?? '?'));
            return { id: p.id, status: await p.status(), timeline, partitions };
          }),
        );
        await h!.signal(resumeSignal);
        return ran;
      };
      const expectRouted = (ran: Ran[], percent: number) => {
        for (const r of ran) {
          const pool = routingBucket(r.id) < percent ? 'tandem' : 'legacy';
          const partition = pool === 'tandem' ? 'tandem' : 'batch';
          expect({ id: r.id, routing: r.status.routing?.pool, partitions: r.partitions }).toEqual({ id: r.id, routing: pool, partitions: r.partitions.map(() => partition) });
          expect(r.partitions.length).toBeGreaterThan(0);
          expect(r.timeline.find((e) => e.kind === 'routing')?.message).toMatch(new RegExp(`^routed to ${pool === 'tandem' ? "Tandem's pool \\(partition tandem\\)" : 'the legacy pool \\(partition batch\\)'} at migrating site rte: bucket`));
        }
        return ran.filter((r) => r.status.routing?.pool === 'tandem');
      };

      const at25 = await step(25, 'none');
      const tandem25 = expectRouted(at25, 25);
      expect(Math.abs(tandem25.length - 4)).toBeLessThanOrEqual(3);
      expect(N - tandem25.length).toBeGreaterThan(0);
      for (const r of at25) expect(r.status.stages.train.status).toBe('completed'); // both jobs ran on either pool

      const at50 = await step(50, 'tandem');
      const tandem50 = expectRouted(at50, 50);
      expect(Math.abs(tandem50.length - 8)).toBeLessThanOrEqual(3);
      // Tandem's pool failed each routed pipeline's first job; the legacy ones ran through.
      for (const r of at50) expect(r.status.stages.train.status).toBe(r.status.routing?.pool === 'tandem' ? 'pending' : 'completed');

      const st = await waitFor('the fallback', async () => {
        const s = await h!.query(migrationStatusQuery);
        return s.state === 'failed' ? s : undefined;
      }, 150_000, 250);
      // The gate counted exactly the routed pipelines' jobs in Tandem's pool: two per pipeline at 25%
      // (none failed), one per pipeline at 50% (each failed).
      expect(st.gates.filter((g) => g.phase === 'phase2').map((g) => [g.name, g.passed, (g.details as { jobs: number }).jobs])).toEqual([
        ['step 25%', true, 2 * tandem25.length],
        ['step 50%', false, tandem50.length],
      ]);
      expect(st.gates.at(-1)!.reason).toMatch(new RegExp(`^error rate 100\\.0% > 5\\.0% \\(${tandem50.length}/${tandem50.length} jobs failed\\)`));
      expect(st.log.map((l) => l.message)).toContain('fell back: routing 0%, pilot nodes returned to the legacy pool');
      expect(routingOf(home)).toEqual({ percent: 0, policies: [] });
      expect(await snapshot()).toEqual(before);

      // At 0% the site is no longer migrating: a new pipeline is not routed and goes where it always did.
      const after = await w.tandem.launch(pipelineSpec('none'), { id: 'route-0-0' });
      await after.result().catch(() => undefined);
      const afterJobs = (await after.timeline()).filter((e) => e.kind === 'job-submitted').map((e) => e.jobId!);
      expect((await after.status()).routing).toBeUndefined();
      expect(await Promise.all(afterJobs.map(async (id) => (await bed.site.admin.job(id))?.Partition))).toEqual(['debug', 'debug']); // the site's default
    } finally {
      await h?.terminate('test done').catch(() => undefined);
      await w.stop();
    }
  }, 300_000);
});
