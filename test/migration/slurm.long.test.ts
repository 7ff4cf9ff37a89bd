// Staged migration against a real Slurm site (ten configured nodes, three real slurmd): partition
// moves through scontrol, benchmark jobs through sbatch, observation through squeue/sinfo.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { MigrationPlanSchema, type MigrationPlanInput, type SiteSnapshot } from '../../contract/migration.js';
import { approveSignal, migrationStatusQuery, rollbackUpdate, stagedMigration } from '../../workflows/migration.js';
import { address, startWorker, tempDir, uniqueQueue, waitFor, workerBundleFile } from '../helpers.js';
import { useMigrationSite } from './slurm-site.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const bed = useMigrationSite('mig');

const snapshot = async (): Promise<SiteSnapshot> => ({ partitions: await bed.site.admin.partitions() });
const plan = (over: Partial<MigrationPlanInput> = {}) =>
  MigrationPlanSchema.parse({
    site: 'mig',
    requireApproval: false,
    // Tiny jobs on a shared 2-core machine: seconds of jitter are noise, so the gate allows generous ratios.
    gate: { maxCompletionRatio: 4, maxWaitRatio: 4, waitSlack: '30s', timeout: '3m' },
    phase2: { steps: [50, 100], observeFor: '2s' },
    phase3: { rollbackWindow: '1h' },
    ...over,
  });
const sites = () => ({ TANDEM_SLURM_SITES: `mig=${bed.site.cluster.slurmConf}` });
const status = (h: WorkflowHandle<typeof stagedMigration>) => h.query(migrationStatusQuery);
const until = async (h: WorkflowHandle<typeof stagedMigration>, what: string, pred: (s: Awaited<ReturnType<typeof status>>) => boolean, ms = 100_000) => {
  let last: Awaited<ReturnType<typeof status>> | undefined;
  try {
    return await waitFor(what, async () => {
      last = await status(h);
      return pred(last) ? last : undefined;
    }, ms, 250);
  } catch (e) {
    throw new Error(`${(e as Error).message}; last status: ${JSON.stringify({ state: last?.state, log: last?.log.slice(-4) })}`);
  }
};

async function inProcessWorker(home: string) {
  process.env.TANDEM_SLURM_SITES = sites().TANDEM_SLURM_SITES;
  const taskQueue = uniqueQueue('mig-slurm');
  const w = await startWorker({ taskQueue, home });
  return { ...w, taskQueue };
}

describe('staged migration on real Slurm', () => {
  test('Phase 1 passes a real benchmark gate; through Phase 3; rollback 3 → 2 → 1 restores the site exactly', async () => {
    const before = await snapshot();
    const w = await inProcessWorker(tempDir('mig-home'));
    try {
      const h = await bed.client.workflow.start(stagedMigration, { taskQueue: w.taskQueue, workflowId: uniqueQueue('mig-full'), args: [{ plan: plan() }] });
      const st = await until(h, 'the rollback window', (s) => s.state === 'rollback-window' || s.state === 'failed');
      expect(st.state).toBe('rollback-window');
      const gate = st.gates[0]!;
      expect(gate).toMatchObject({ phase: 'phase1', name: 'benchmark', passed: true });
      expect((gate.details as { pool: string; state: string }[]).map((d) => `${d.pool}:${d.state}`).sort()).toEqual(['legacy:COMPLETED', 'legacy:COMPLETED', 'legacy:COMPLETED', 'tandem:COMPLETED', 'tandem:COMPLETED', 'tandem:COMPLETED']);
      const cut = await snapshot();
      expect(cut.partitions.find((p) => p.name === 'batch')).toMatchObject({ state: 'DRAIN' });
      expect(cut.partitions.find((p) => p.name === 'tandem')).toMatchObject({ overSubscribe: 'YES:2' });
      expect(cut.partitions.find((p) => p.name === 'tandem')!.nodes).toHaveLength(10);

      expect(await h.executeUpdate(rollbackUpdate)).toEqual({ rolledBack: 'phase3', state: 'rolled-back' });
      const phase2 = await snapshot();
      expect(phase2.partitions.find((p) => p.name === 'tandem')!.nodes).toEqual(['mig-n10']);
      expect(phase2.partitions.find((p) => p.name === 'batch')).toMatchObject({ state: 'UP' });
      expect(phase2.partitions.find((p) => p.name === 'batch')!.nodes).toHaveLength(9);
      expect(await h.executeUpdate(rollbackUpdate)).toEqual({ rolledBack: 'phase2', state: 'rolled-back' });
      expect(await h.executeUpdate(rollbackUpdate)).toEqual({ rolledBack: 'phase1', state: 'rolled-back' });
      expect(await snapshot()).toEqual(before);
      await h.terminate('test done');
    } finally {
      await w.stop();
    }
  });

  test('a failing gate (the pilot node is drained) returns the nodes: partition state identical to before', async () => {
    await bed.site.admin.run('scontrol', ['update', 'NodeName=mig-n10', 'State=DRAIN', 'Reason=tandem-test']);
    const before = await snapshot();
    const w = await inProcessWorker(tempDir('mig-home'));
    try {
      const h = await bed.client.workflow.start(stagedMigration, { taskQueue: w.taskQueue, workflowId: uniqueQueue('mig-gate'), args: [{ plan: plan({ gate: { timeout: '8s' } }) }] });
      const st = await until(h, 'the gate to fail', (s) => s.state === 'failed');
      expect(st.gates[0]).toMatchObject({ passed: false, reason: expect.stringMatching(/on the tandem path ended PENDING \(gate timeout\)/) });
      expect(await snapshot()).toEqual(before);
      await h.terminate('test done');
    } finally {
      await w.stop();
      await bed.site.admin.run('scontrol', ['update', 'NodeName=mig-n10', 'State=RESUME']);
    }
  });

  // Phase 2's SLO gate judges the pipelines routed to Tandem's pool, so its breach and fallback are
  // tested with real routed pipelines in routing.long.test.ts (hand-made jobs no longer count).

  test('worker killed mid-phase: a new worker resumes and no node is moved twice', async () => {
    const home = tempDir('mig-home');
    const taskQueue = uniqueQueue('mig-kill');
    const bundle = await workerBundleFile(); // the worker polls within seconds, not after bundling
    const startProc = (): ChildProcess =>
      spawn(process.execPath, ['--import', TSX, 'workers/main.ts'], { env: { ...process.env, ...sites(), TEMPORAL_ADDRESS: address(), TANDEM_HOME: home, TANDEM_TASK_QUEUE: taskQueue, TANDEM_WORKFLOW_BUNDLE: bundle, NODE_OPTIONS: '' }, stdio: 'ignore' });
    let w1: ChildProcess | undefined = startProc();
    let w2: ChildProcess | undefined;
    const h = await bed.client.workflow.start(stagedMigration, { taskQueue, workflowId: uniqueQueue('mig-kill'), args: [{ plan: plan({ requireApproval: true }) }] });
    try {
      // Kill while Phase 1's benchmark jobs run (the nodes have moved, the gate has not decided).
      await waitFor('benchmark jobs', async () => ((await bed.site.admin.run('squeue', ['-h', '-p', 'tandem', '-o', '%j'])).includes('tandem-mig-') ? true : undefined), 120_000, 250);
      w1.kill('SIGKILL');
      w1 = undefined;
      w2 = startProc();
      const st = await until(h, 'phase 1 to pass', (s) => s.state === 'awaiting-approval' || s.state === 'failed');
      expect(st.state).toBe('awaiting-approval');
      const changes = readFileSync(join(home, 'sites', 'mig', 'changes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { change: string; name: string });
      // One change per partition: the move happened once, whatever was retried.
      expect(changes.filter((c) => c.change === 'partition').map((c) => c.name).sort()).toEqual(['batch', 'tandem']);
      await h.signal(approveSignal, 'phase2');
      await h.executeUpdate(rollbackUpdate).catch(() => undefined);
    } finally {
      await h.terminate('test done').catch(() => undefined);
      w1?.kill('SIGKILL');
      w2?.kill('SIGTERM');
      await bed.site.admin.run('scontrol', ['delete', 'PartitionName=tandem']).catch(() => undefined);
      await bed.site.admin.run('scontrol', ['update', 'PartitionName=batch', 'Nodes=mig-n[1-10]', 'State=UP']).catch(() => undefined);
    }
  });
});
