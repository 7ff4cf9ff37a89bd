// Cross-site failover on two real Slurm clusters (zurich, lugano) with a real Temporal worker and the
// built-in trainer: a real site outage (zurich's daemons killed mid-training) and a real NODE_FAIL with a
// corrupt newest checkpoint. The trainer must resume at lugano from the newest valid checkpoint, lose at
// most one checkpoint interval, and never run at two sites at once (the lease fences the old job).
import { readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createActivities } from '../../activities/index.js';
import { runDirs } from '../../activities/run-store.js';
import { createRecoveryActivities } from '../../activities/recovery.js';
import { LocalServingBackend } from '../../backends/local-serving.js';
import { listCheckpoints } from '../../backends/checkpoints.js';
import type { PipelineTuning } from '../../contract/tuning.js';
import { jobNameOf, spec, startWorker, tempDir, uniqueQueue, waitFor } from '../helpers.js';
import { useTwoSites, type TestSite } from './sites.js';

let zurich: TestSite;
let lugano: TestSite;
// zurich through slurmrestd, lugano through the FirecREST gateway (checksums verify the restored copy).
useTwoSites((z, l) => ([zurich, lugano] = [z, l]));

afterEach(() => {
  expect(lugano.gateway!.violations.splice(0)).toEqual([]);
});

const trainSpec = (steps: number) => spec({ stages: { preprocess: { runtime: 'local', samples: 200 }, train: { runtime: 'slurm', steps, checkpointEvery: 10, stepDelayMs: 150 }, deploy: { runtime: 'local' } } });

interface Lineage {
  job: string;
  resumedFromStep: number;
  at: string;
}
const lineage = (site: TestSite, runKey: string): Lineage[] => {
  const f = join(runDirs(site.root, runKey).checkpoints, 'lineage.jsonl');
  return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Lineage) : [];
};
const progressOf = (site: TestSite, job: string): { step: number; file: string } | undefined => {
  const file = join(site.cluster.workDir, `${job}.progress.json`);
  try {
    return { step: (JSON.parse(readFileSync(file, 'utf8')) as { step: number }).step, file };
  } catch {
    return undefined;
  }
};

async function withWorker<T>(id: string, fn: (w: Awaited<ReturnType<typeof startWorker>>, home: string) => Promise<T>): Promise<T> {
  const home = tempDir(id);
  const sites = [zurich.site, lugano.site];
  const w = await startWorker({ taskQueue: uniqueQueue(id), home, activities: { ...createActivities({ home }), ...createRecoveryActivities({ home, sites, healthTimeoutMs: 3000 }) } });
  try {
    return await fn(w, home);
  } finally {
    await w.stop();
    const serving = new LocalServingBackend(home);
    for (const d of serving.list()) await serving.undeploy(d.name);
  }
}

test('zurich goes dark mid-training: the job is fenced by its lease and training resumes at lugano', async () => {
  const id = 'fo-outage';
  const tuning: PipelineTuning = { heartbeatTimeoutMs: 3000, pollMaxMs: 500, failover: { sites: ['zurich', 'lugano'], graceMs: 8000, leaseTtlMs: 4000 } };
  let job1 = '';
  await withWorker(id, async (w) => {
    const h = await w.tandem.launch(trainSpec(140), { id, tuning });
    job1 = await jobNameOf(h.workflow, 'train', 1);
    await waitFor('training at zurich to pass step 35', () => ((progressOf(zurich, job1)?.step ?? 0) >= 35 ? true : undefined), 90_000, 200);
    await zurich.outage();
    const result = await h.result();
    const tl = await h.timeline();
    if (process.env.TANDEM_TEST_VERBOSE) console.log(tl.map((e) => `${e.kind} ${e.message}`).join('\n'));
    expect(result.checkpoint.step).toBe(140);

    // Every decision is in the timeline.
    const kinds = tl.filter((e) => e.stage === 'train').map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['site-choice', 'restore', 'job-submitted', 'fence', 'failover']));
    expect(tl.find((e) => e.kind === 'failover')!.message).toMatch(/site zurich unreachable for \d+s/);
    expect(tl.find((e) => e.kind === 'fence')!.message).toMatch(/did not answer/);
    expect(tl.filter((e) => e.kind === 'site-choice').map((e) => e.site)).toEqual(['zurich', 'lugano']);
    // With both sites healthy, placement ranked them on their live slurmrestd / FirecREST node lists.
    expect(tl.find((e) => e.kind === 'site-choice')!.message).toMatch(/placement: start on zurich\/zurich\/\w+ /);
    expect(tl.filter((e) => e.kind === 'job-submitted' && e.stage === 'train').map((e) => e.site)).toEqual(['zurich', 'lugano']);

    // Resumed at lugano from the newest valid checkpoint zurich wrote, losing at most one interval.
    const zLast = progressOf(zurich, job1)!;
    const [lug] = lineage(lugano, id);
    expect(lug!.resumedFromStep).toBeGreaterThan(0);
    expect(lug!.resumedFromStep).toBe(listCheckpoints(runDirs(zurich.root, id).checkpoints)[0]!.step);
    expect(zLast.step - lug!.resumedFromStep).toBeLessThanOrEqual(10);
    // Never two live training jobs: zurich's trainer stopped (lease expired) before lugano's started.
    expect(readFileSync(join(zurich.cluster.workDir, `${job1}.err`), 'utf8')).toMatch(/fence: lease .* expired/);
    expect(statSync(zLast.file).mtimeMs).toBeLessThan(Date.parse(lug!.at));
    expect(lineage(zurich, id)).toHaveLength(1);
  });
  // The site comes back: its old job is not running (no leaked job).
  await zurich.revive();
  const states = await waitFor('zurich to settle the old job', async () => {
    const out = (await zurich.cluster.cli('squeue', ['-h', '-t', 'all', '-n', job1, '-o', '%T'])).trim();
    return out && !/RUNNING|PENDING|COMPLETING/.test(out) ? out : undefined;
  }, 60_000, 500).catch(async () => (await zurich.cluster.cli('squeue', ['-h', '-t', 'all', '-o', '%A %j %T'])).trim());
  expect(states).not.toMatch(/RUNNING|PENDING|COMPLETING/);
}, 240_000);

test('NODE_FAIL at zurich with a corrupt newest checkpoint: lugano resumes from the previous valid one', async () => {
  const id = 'fo-nodefail';
  const tuning: PipelineTuning = { heartbeatTimeoutMs: 3000, pollMaxMs: 500, failover: { sites: ['zurich', 'lugano'], graceMs: 8000, leaseTtlMs: 4000 } };
  await withWorker(id, async (w) => {
    const h = await w.tandem.launch(trainSpec(100), { id, tuning });
    const job1 = await jobNameOf(h.workflow, 'train', 1);
    await waitFor('training at zurich to pass step 32', () => ((progressOf(zurich, job1)?.step ?? 0) >= 32 ? true : undefined), 90_000, 200);
    await zurich.cluster.cli('scontrol', ['update', `nodename=${zurich.cluster.node}`, 'state=down', 'reason=chaos-node-fail']);
    // The node is down; the job is gone. Corrupt the newest checkpoint zurich left behind.
    const ckpts = listCheckpoints(runDirs(zurich.root, id).checkpoints);
    const newest = ckpts[0]!;
    const weights = join(newest.path, 'weights.json');
    const text = readFileSync(weights, 'utf8');
    writeFileSync(weights, text.replace(/\d/, (d) => String((Number(d) + 1) % 10)));
    const result = await h.result();
    const tl = await h.timeline();
    if (process.env.TANDEM_TEST_VERBOSE) console.log(tl.map((e) => `${e.kind} ${e.message}`).join('\n'));
    expect(result.checkpoint.step).toBe(100);
    expect(tl.find((e) => e.kind === 'failover')!.message).toMatch(/ended NODE_FAIL at zurich/);
    expect(tl).toContainEqual(expect.objectContaining({ kind: 'restore', message: expect.stringMatching(new RegExp(`skipped checkpoint .*step-0*${newest.step} at zurich: weights.json sha256 .* does not match manifest`)) }));
    const [lug] = lineage(lugano, id);
    expect(lug!.resumedFromStep).toBe(newest.step - 10);
    expect(tl).toContainEqual(expect.objectContaining({ kind: 'restore', site: 'lugano', message: expect.stringContaining(`resuming at lugano from step ${newest.step - 10} (copied from zurich`) }));
    // The copy at lugano was verified through FirecREST's checksum endpoint; health through /status/systems.
    expect(lugano.gateway!.stats.byOperation.get_checksum_filesystem__system_name__ops_checksum_get ?? 0).toBeGreaterThan(0);
    expect(tl.find((e) => e.kind === 'site-choice' && e.site === 'lugano')!.message).toContain('lugano: healthy (FirecREST servicesHealth ok, scheduler answers)');
  });
  await zurich.cluster.cli('scontrol', ['update', `nodename=${zurich.cluster.node}`, 'state=resume']).catch(() => undefined); // back in service for later tests
}, 240_000);
