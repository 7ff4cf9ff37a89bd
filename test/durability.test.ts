// Durability: the worker is a separate OS process that we SIGKILL in the middle of training.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDirs } from '../activities/run-store.js';
import { LocalJobBackend } from '../backends/local-jobs.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { isAlive } from '../backends/proc.js';
import { TandemClient } from '../sdk/client.js';
import { address, jobNameOf, spec, tempDir, uniqueQueue, waitFor, workerBundleFile } from './helpers.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

function startWorkerProcess(home: string, taskQueue: string, bundle: string): ChildProcess {
  // node --import tsx (one process, not the tsx CLI's parent + child) so SIGKILL hits the worker itself.
  const child = spawn(process.execPath, ['--import', TSX, 'workers/main.ts'], {
    env: { ...process.env, TEMPORAL_ADDRESS: address(), TANDEM_HOME: home, TANDEM_TASK_QUEUE: taskQueue, TANDEM_WORKFLOW_BUNDLE: bundle, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => process.env.TANDEM_TEST_VERBOSE && process.stderr.write(d));
  return child;
}

const killed = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

interface Lineage {
  job: string;
  pid: number;
  resumedFromStep: number;
}

describe('worker crash during training', () => {
  const trainSpec = () => spec({ stages: { train: { steps: 120, checkpointEvery: 10, stepDelayMs: 40 } } });
  const tuning = { heartbeatTimeoutMs: 2000, pollMaxMs: 500 };

  async function scenario(id: string, alsoKillTraining: boolean) {
    const home = tempDir('durable');
    const queue = uniqueQueue(id);
    const tandem = await TandemClient.connect({ address: address(), taskQueue: queue });
    const jobs = new LocalJobBackend(home);
    let w1: ChildProcess | undefined;
    let w2: ChildProcess | undefined;
    try {
      // The bundle `tandem bundle` writes: the worker polls within seconds, not after bundling.
      const bundle = await workerBundleFile();
      w1 = startWorkerProcess(home, queue, bundle);
      const h = await tandem.launch(trainSpec(), { id, tuning });
      const trainJob = await jobNameOf(h.workflow, 'train', 1);
      await waitFor('training past its second checkpoint', async () => ((await jobs.status(trainJob).catch(() => undefined))?.progress?.step ?? 0) >= 25 || undefined, 60_000);
      const trainPid = jobs.pid(trainJob)!;
      w1.kill('SIGKILL');
      await killed(w1);
      if (alsoKillTraining) process.kill(-trainPid, 'SIGKILL'); // the node went down with the worker
      else expect(isAlive(trainPid, undefined)).toBe(true); // the job outlives its worker
      w2 = startWorkerProcess(home, queue, bundle);
      const result = await h.result();
      const lineage = readFileSync(join(runDirs(home, id).checkpoints, 'lineage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Lineage);
      return { timeline: await h.timeline(), result, lineage, names: [trainJob, await jobNameOf(h.workflow, 'train', 2)] };
    } finally {
      w1?.kill('SIGKILL');
      w2?.kill('SIGTERM');
      if (w2) await killed(w2);
      for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
      await tandem.close();
    }
  }

  test('SIGKILL of the worker: a new worker re-attaches to the same training job; no second job starts', async () => {
    const { timeline, result, lineage, names } = await scenario('durable-reattach', false);
    expect(result).toMatchObject({ checkpoint: { step: 120 }, trainingAttempts: 1 });
    // The job's name is this run's own (run id in its hash), and the new worker watched that job.
    expect(names[0]).toMatch(/^tandem-durable-reattach-[0-9a-z]{13}-train-1$/);
    expect(lineage).toEqual([expect.objectContaining({ job: names[0], resumedFromStep: 0 })]);
    const submits = timeline.filter((e) => e.stage === 'train' && (e.kind === 'job-submitted' || e.kind === 'job-adopted'));
    expect(submits).toEqual([expect.objectContaining({ kind: 'job-submitted', jobId: names[0] })]);
  });

  test('SIGKILL of the worker and the training process: training resumes from its checkpoint in one lineage', async () => {
    const { timeline: tl, result, lineage, names } = await scenario('durable-resume', true);
    expect(result).toMatchObject({ checkpoint: { step: 120 }, trainingAttempts: 2 });
    // One lineage: the first run from scratch, then exactly one restart that continues from a checkpoint.
    expect(lineage.map((l) => l.job)).toEqual(names);
    expect(lineage[0]!.resumedFromStep).toBe(0);
    expect(lineage[1]!.resumedFromStep).toBeGreaterThanOrEqual(20);
    expect(lineage[1]!.resumedFromStep % 10).toBe(0);
    expect(tl.find((e) => e.kind === 'job-finished' && e.attempt === 1 && e.stage === 'train')?.state).toBe('LOST');
    expect(tl.find((e) => e.kind === 'retry-scheduled')?.message).toMatch(/^infrastructure failure; attempt 2/);
  });
});
