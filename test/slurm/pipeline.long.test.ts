// The hybrid pipeline on Slurm through FirecREST with a real Temporal worker: crash recovery without a
// second Slurm job, injected gateway faults, short-lived tokens, and cancellation compensated at Slurm.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { chmodSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { createActivities } from '../../activities/index.js';
import { LocalServingBackend } from '../../backends/local-serving.js';
import { TandemClient } from '../../sdk/client.js';
import { address, jobNameOf, spec, startWorker, uniqueQueue, waitFor } from '../helpers.js';
import { CLIENT, startBed, type Bed } from './firecrest-bed.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const tuning = { heartbeatTimeoutMs: 2000, pollMaxMs: 500 };
let bed: Bed;
let oldUmask: number;

beforeAll(async () => {
  // Jobs run as the cluster's unprivileged user and write into run directories the worker (root)
  // creates: on this one-host test bed they must be world-writable. Restored in afterAll.
  oldUmask = process.umask(0);
  bed = await startBed('pipe');
});

afterAll(async () => {
  process.umask(oldUmask);
  await bed?.close();
});

afterEach(() => {
  expect(bed.gateway.violations.splice(0)).toEqual([]);
  bed.gateway.setFaults(undefined);
});

function home(): string {
  const dir = mkdtempSync(join(bed.cluster.workDir, 'home-'));
  chmodSync(dir, 0o777);
  return dir;
}

const slurmSpec = (train: Record<string, unknown> = {}) =>
  spec({ stages: { preprocess: { runtime: 'slurm', samples: 200 }, train: { runtime: 'slurm', steps: 30, checkpointEvery: 10, ...train }, deploy: { runtime: 'local' } } });

async function undeployAll(h: string) {
  const serving = new LocalServingBackend(h);
  for (const d of serving.list()) await serving.undeploy(d.name);
}

async function slurmJobs(name: string): Promise<string[]> {
  const out = (await bed.cluster.cli('squeue', ['-h', '-n', name, '-t', 'all', '-o', '%A'])).trim();
  return out ? out.split('\n') : [];
}

test('20% injected gateway faults and tokens expiring every 3 s: the pipeline completes, one job per stage', async () => {
  bed.gateway.setFaults({ rate: 0.2, kinds: ['500', '502', '503', '429', '408', 'drop', 'slow'], retryAfterS: 0, slowMs: 300, seed: 11 });
  bed.gateway.issuer.opts.lifetimeS = 3;
  bed.gateway.issuer.opts.minRemainingS = 1;
  const h = home();
  const slurm = bed.backend({ statusIntervalMs: 300 });
  const w = await startWorker({ taskQueue: uniqueQueue('slurm-faults'), home: h, activities: createActivities({ home: h, backends: { slurm } }) });
  try {
    const handle = await w.tandem.launch(slurmSpec(), { id: 'slurm-faults', tuning });
    const result = await handle.result();
    expect(result).toMatchObject({ checkpoint: { step: 30 }, trainingAttempts: 1 });
    const tl = await handle.timeline();
    const submits = tl.filter((e) => (e.kind === 'job-submitted' || e.kind === 'job-adopted') && (e.stage === 'preprocess' || e.stage === 'train'));
    expect(submits.map((e) => `${e.stage}:${e.runtime}`)).toEqual(['preprocess:slurm', 'train:slurm']);
    expect(await slurmJobs(await jobNameOf(handle.workflow, 'train', 1))).toHaveLength(1);
    expect(await slurmJobs(await jobNameOf(handle.workflow, 'preprocess', 1))).toHaveLength(1);
    expect(Object.values(bed.gateway.stats.faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(slurm.client.tokens.fetches).toBeGreaterThanOrEqual(2);
  } finally {
    bed.gateway.issuer.opts.lifetimeS = 300;
    bed.gateway.issuer.opts.minRemainingS = 30;
    await w.stop();
    await undeployAll(h);
  }
});

test('two runs of a pipeline with a 40-character name keep to their own Slurm jobs', async () => {
  const h = home();
  const slurm = bed.backend({ statusIntervalMs: 300 });
  const w = await startWorker({ taskQueue: uniqueQueue('slurm-forty'), home: h, activities: createActivities({ home: h, backends: { slurm } }) });
  try {
    // Default ids `<name>-<8 hex>`: their random part is past a 40-character cut of the id.
    const s = { ...slurmSpec(), name: 'slurm-identity-pipeline-forty-characters' };
    expect(s.name).toHaveLength(40);
    const runs = await Promise.all([w.tandem.launch(s, { tuning }), w.tandem.launch(s, { tuning })]);
    const results = await Promise.all(runs.map((r) => r.result()));
    expect(results.map((r) => r.checkpoint.step)).toEqual([30, 30]);
    const names: string[] = [];
    for (const r of runs) {
      const tl = await r.timeline();
      const submits = tl.filter((e) => (e.kind === 'job-submitted' || e.kind === 'job-adopted') && (e.stage === 'preprocess' || e.stage === 'train'));
      // Each run submitted its own two jobs; neither adopted the other's.
      expect(submits.map((e) => `${e.stage}:${e.kind}`)).toEqual(['preprocess:job-submitted', 'train:job-submitted']);
      names.push(await jobNameOf(r.workflow, 'preprocess', 1), await jobNameOf(r.workflow, 'train', 1));
    }
    expect(new Set(names).size).toBe(4);
    for (const n of names) expect(await slurmJobs(n)).toHaveLength(1);
  } finally {
    await w.stop();
    await undeployAll(h);
  }
});

test('cancel during training: the Slurm job is cancelled and the compensation is recorded', async () => {
  const h = home();
  const slurm = bed.backend({ statusIntervalMs: 300 });
  const w = await startWorker({ taskQueue: uniqueQueue('slurm-cancel'), home: h, activities: createActivities({ home: h, backends: { slurm } }) });
  try {
    const handle = await w.tandem.launch(slurmSpec({ steps: 400, checkpointEvery: 50, stepDelayMs: 200 }), { id: 'slurm-cancel', tuning });
    const name = await jobNameOf(handle.workflow, 'train', 1);
    const [jobId] = await waitFor('the training job to run at Slurm', async () => {
      const out = (await bed.cluster.cli('squeue', ['-h', '-n', name, '-t', 'R', '-o', '%A'])).trim();
      return out ? out.split('\n') : undefined;
    }, 60_000);
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    const tl = await handle.timeline();
    expect(tl).toContainEqual(expect.objectContaining({ kind: 'compensation', message: `cancel train job ${jobId}` }));
    const state = await waitFor('Slurm to report the job cancelled', async () => {
      const s = (await bed.cluster.cli('squeue', ['-h', '-j', jobId!, '-t', 'all', '-o', '%T'])).trim();
      return s === 'CANCELLED' ? s : undefined;
    }, 20_000);
    expect(state).toBe('CANCELLED');
  } finally {
    await w.stop();
    await undeployAll(h);
  }
});

function startWorkerProcess(h: string, taskQueue: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', TSX, 'test/slurm/worker-process.ts'], {
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      TEMPORAL_ADDRESS: address(),
      TANDEM_HOME: h,
      TANDEM_TASK_QUEUE: taskQueue,
      TANDEM_SLURM_API: 'firecrest',
      TANDEM_SLURM_SITE: 'pipe',
      TANDEM_SLURM_WORKDIR: bed.cluster.workDir,
      TANDEM_SLURM_STATUS_INTERVAL_MS: '300',
      TANDEM_FIRECREST_URL: bed.baseUrl,
      TANDEM_FIRECREST_SYSTEM: 'pipe',
      TANDEM_FIRECREST_TOKEN_URL: bed.tokenUrl,
      TANDEM_FIRECREST_CLIENT_ID: CLIENT.clientId,
      TANDEM_FIRECREST_CLIENT_SECRET: CLIENT.clientSecret,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => process.env.TANDEM_TEST_VERBOSE && process.stderr.write(d));
  return child;
}

const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

test('worker SIGKILLed right after submit: after recovery there is exactly one Slurm job', async () => {
  const h = home();
  const queue = uniqueQueue('slurm-kill');
  const tandem = await TandemClient.connect({ address: address(), taskQueue: queue });
  let w1: ChildProcess | undefined;
  let w2: ChildProcess | undefined;
  try {
    w1 = startWorkerProcess(h, queue);
    const handle = await tandem.launch(slurmSpec({ steps: 60, checkpointEvery: 10, stepDelayMs: 100 }), { id: 'slurm-kill', tuning });
    const name = await jobNameOf(handle.workflow, 'train', 1);
    // Kill as soon as the submit is recorded: the watching activity has not yet heartbeated a state.
    await waitFor('the training job to be submitted', async () => ((await handle.timeline()).some((e) => e.stage === 'train' && e.kind === 'job-submitted') ? true : undefined), 60_000, 50);
    expect(await slurmJobs(name)).toHaveLength(1);
    w1.kill('SIGKILL');
    await exited(w1);
    w2 = startWorkerProcess(h, queue);
    const result = await handle.result();
    if (process.env.TANDEM_TEST_VERBOSE) console.log(JSON.stringify(await handle.timeline(), null, 1));
    expect(result).toMatchObject({ checkpoint: { step: 60 }, trainingAttempts: 1 });
    expect(await slurmJobs(name)).toHaveLength(1);
    expect(await slurmJobs(await jobNameOf(handle.workflow, 'train', 2))).toHaveLength(0);
    expect(bed.executor.submitted).toBeGreaterThan(0);
  } finally {
    w1?.kill('SIGKILL');
    w2?.kill('SIGTERM');
    if (w2) await exited(w2);
    await undeployAll(h);
    await tandem.close();
  }
});
