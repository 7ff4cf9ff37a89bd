// Job identity on the real local runtime and the real dev server: a job belongs to one run lineage,
// stage and attempt. `runs retry` (a reset: same workflow id, new run id) and `runs resume` (a new
// workflow id) submit new jobs instead of adopting the finished jobs of the run they came from, and
// two runs whose ids a length limit would cut to the same text stay apart.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDirs } from '../activities/run-store.js';
import { LocalJobBackend } from '../backends/local-jobs.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import type { TimelineEntry } from '../contract/status.js';
import { Runs } from '../sdk/runs.js';
import { jobNameOf, spec, startWorker, tempDir, uniqueQueue } from './helpers.js';

const tuning = { pollMaxMs: 300 };
/** Saves its step-30 checkpoint, then fails; a job resumed from that checkpoint never meets step 30 again. */
const failsOnceAt30 = { steps: 40, checkpointEvery: 10, env: { TANDEM_FAIL_AT_STEP: '30' } };

const lineageOf = (home: string, runKey: string) =>
  readFileSync(join(runDirs(home, runKey).checkpoints, 'lineage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { job: string; resumedFromStep: number });
const submits = (tl: TimelineEntry[], stage: string) => tl.filter((e) => e.stage === stage && (e.kind === 'job-submitted' || e.kind === 'job-adopted')).map((e) => `${e.kind} ${e.jobId}`);

async function withWorker<T>(name: string, fn: (w: Awaited<ReturnType<typeof startWorker>>, home: string) => Promise<T>): Promise<T> {
  const home = tempDir(name);
  const w = await startWorker({ taskQueue: uniqueQueue(name), home });
  try {
    return await fn(w, home);
  } finally {
    const serving = new LocalServingBackend(home);
    for (const d of serving.list()) await serving.undeploy(d.name);
    await w.stop();
  }
}

/** The job of a stage's first attempt as the run's timeline reports it. */
const firstJob = (tl: TimelineEntry[], stage: string) => tl.find((e) => e.stage === stage && e.attempt === 1 && (e.kind === 'job-submitted' || e.kind === 'job-adopted'))!.jobId!;

test('retry --node train after a failed training trains again, in a new job of its own', async () => {
  await withWorker('ident-retry', async (w, home) => {
    const id = 'ident-retry-1';
    const h = await w.tandem.launch(spec({ retry: { maxAttempts: 1 }, stages: { train: failsOnceAt30, deploy: { readinessTimeout: '30s' } } }), { id, tuning });
    await expect(h.result()).rejects.toThrow();
    const before = await h.timeline();
    const [preprocessed, failed] = [firstJob(before, 'preprocess'), firstJob(before, 'train')];
    const jobs = new LocalJobBackend(home);
    expect((await jobs.status(failed)).state).toBe('FAILED');

    const res = await new Runs(w.tandem).retry(id, { node: 'train' });
    expect(res.from).toBe('train');
    const again = w.tandem.client.workflow.getHandle(id);
    // Adopting the failed job under its old name would fail the stage again at once.
    const result = (await again.result()) as { checkpoint: { step: number } };
    expect(result.checkpoint.step).toBe(40);
    const tl = await again.query<TimelineEntry[]>('timeline');
    const retrained = firstJob(tl, 'train');
    expect(retrained).not.toBe(failed);
    expect(submits(tl, 'train')).toEqual([`job-submitted ${retrained}`]);
    expect(submits(tl, 'preprocess')).toEqual([`job-submitted ${preprocessed}`]); // its result is kept from before the reset point
    // A second start of training, resumed from the failed job's last checkpoint; the failed job stays as it was.
    expect(lineageOf(home, id)).toEqual([expect.objectContaining({ job: failed, resumedFromStep: 0 }), expect.objectContaining({ job: retrained, resumedFromStep: 30 })]);
    expect((await jobs.status(failed)).state).toBe('FAILED');
    expect((await jobs.status(retrained)).state).toBe('COMPLETED');
    expect(retrained).toBe(await jobNameOf(again, 'train', 1)); // named for the reset run's own run id
  });
});

test('two runs of a pipeline with a 40-character name are independent', async () => {
  await withWorker('ident-forty', async (w, home) => {
    const name = 'identity-test-pipeline-name-forty-chars1';
    expect(name).toHaveLength(40);
    const s = spec({ name, stages: { preprocess: { samples: 200 }, train: { steps: 20, checkpointEvery: 10, stepDelayMs: 20 }, deploy: { readinessTimeout: '30s' } } });
    // Default ids: `<name>-<8 hex>`, whose random part is past a 40-character cut.
    const [a, b] = await Promise.all([w.tandem.launch(s, { tuning }), w.tandem.launch(s, { tuning })]);
    const results = await Promise.all([a.result(), b.result()]);
    expect(results.map((r) => r.checkpoint.step)).toEqual([20, 20]);
    const [ta, tb] = [await a.timeline(), await b.timeline()];
    const names = [ta, tb].flatMap((tl) => [firstJob(tl, 'preprocess'), firstJob(tl, 'train')]);
    expect(new Set(names).size).toBe(4);
    for (const [h, tl] of [[a, ta], [b, tb]] as const) {
      // Each run submitted its own jobs and its own deployment; nothing was adopted from the other.
      expect(submits(tl, 'preprocess')).toEqual([`job-submitted ${firstJob(tl, 'preprocess')}`]);
      expect(submits(tl, 'train')).toEqual([`job-submitted ${firstJob(tl, 'train')}`]);
      expect(tl.find((e) => e.stage === 'deploy' && (e.kind === 'job-submitted' || e.kind === 'job-adopted'))?.kind).toBe('job-submitted');
      expect(lineageOf(home, h.id)).toEqual([expect.objectContaining({ job: firstJob(tl, 'train'), resumedFromStep: 0 })]);
      expect(firstJob(tl, 'train')).toBe(await jobNameOf(h.workflow, 'train', 1));
    }
    expect(new Set(results.map((r) => r.endpoint)).size).toBe(2);
  });
});

test('resume of a run with a long pipeline name reuses its outputs but none of its jobs', async () => {
  await withWorker('ident-resume', async (w, home) => {
    const name = 'identity-resume-pipeline-long-name-3';
    expect(name.length).toBeGreaterThanOrEqual(31); // `<name>-<8 hex>` and `<name>-<8 hex>-r<4 hex>` agree in 40 characters
    const h = await w.tandem.launch(spec({ name, retry: { maxAttempts: 1 }, stages: { train: failsOnceAt30, deploy: { readinessTimeout: '30s' } } }), { tuning });
    await expect(h.result()).rejects.toThrow();
    const failed = firstJob(await h.timeline(), 'train');

    const resumed = await new Runs(w.tandem).resume(h.id);
    expect(resumed.id).toMatch(new RegExp(`^${h.id}-r[0-9a-f]{4}$`));
    // Adopting the original's failed job would fail the resumed run's training at once.
    const result = await resumed.result();
    expect(result.checkpoint.step).toBe(40);
    const tl = await resumed.timeline();
    expect(tl.filter((e) => e.kind === 'stage-reused').map((e) => e.stage)).toEqual(['preprocess']);
    const train = firstJob(tl, 'train');
    expect(train).not.toBe(failed);
    expect(submits(tl, 'train')).toEqual([`job-submitted ${train}`]);
    // The resumed run shares the original's run directory: one lineage, continued from its checkpoint.
    expect(lineageOf(home, h.id)).toEqual([expect.objectContaining({ job: failed, resumedFromStep: 0 }), expect.objectContaining({ job: train, resumedFromStep: 30 })]);
  });
});
