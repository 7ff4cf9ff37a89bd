// Shared test plumbing: the run's Temporal server, a per-file workflow bundle, and workers.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime, type Worker, type WorkflowBundle } from '@temporalio/worker';
import { createTandemWorker } from '../workers/worker.js';
import { workerBundleFlavour, writePrebuiltBundle } from '../workers/prebuilt-bundle.js';
import { TandemClient } from '../sdk/client.js';
import { validatePipelineSpec } from '../contract/parse.js';
import type { PipelineSpec, PipelineSpecInput } from '../contract/pipeline.js';
import type { BackendMap } from '../activities/runtimes.js';
import type { WorkerSlots } from '../config/worker.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { lineageJobName } from '../workflows/pipeline/identity.js';
import { chainMessages, isTransientGrpc } from '../contract/error-chain.js';
import type { JobStage } from '../workflows/pipeline/job-shape.js';

let runtimeInstalled = false;
function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* already installed by another helper in this process */
  }
}

export const address = (): string => {
  const a = process.env.TANDEM_TEST_TEMPORAL_ADDRESS;
  if (!a) throw new Error('the Temporal test server is not running (jest globalSetup did not run)');
  return a;
};

export function tempDir(prefix: string): string {
  return mkdtempSync(join(process.env.TANDEM_TEST_DIR ?? '/tmp', `${prefix}-`));
}

/**
 * A file built once for the whole test run and shared by every file and jest worker, kept in the run's
 * directory under `name`. The first to need it takes a lock and builds it; the others wait for the file
 * (without the lock, every jest worker built its own at once at the start of the run: measured on
 * 2 cores, 4 concurrent bundle builds of 11-14 s each, while the first suites ran). A builder that dies
 * leaves its lock, and the waiters then build it themselves after `staleMs`.
 */
async function sharedFile(name: string, build: (file: string) => Promise<void>, staleMs = 180_000): Promise<string> {
  const dir = join(process.env.TANDEM_TEST_DIR!, 'bundles');
  const file = join(dir, name);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const lock = `${file}.lock`;
  const deadline = Date.now() + staleMs;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break; // ours: build it
    } catch {
      if (existsSync(file)) return file;
      if (Date.now() > deadline) break; // its builder is gone: build it ourselves
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    if (!existsSync(file)) await build(file);
  } finally {
    rmSync(lock, { force: true });
  }
  return file;
}

/**
 * A workflow bundle built once for the whole test run (see sharedFile). Outside jest's global setup
 * (no run directory) it is built each time.
 */
export async function sharedBundle(name: string, make: () => Promise<WorkflowBundle>): Promise<WorkflowBundle> {
  if (!process.env.TANDEM_TEST_DIR) return make();
  const file = await sharedFile(`${name}.js`, async (f) => {
    const { code } = await make();
    const tmp = `${f}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, f); // atomic: a reader sees the whole bundle or none
  });
  return { code: readFileSync(file, 'utf8') };
}

/**
 * The bundle a worker without payload keys or tracing runs, as `tandem bundle` writes it (its header
 * line included), once for the run: the in-process workers' bundle, and the TANDEM_WORKFLOW_BUNDLE of
 * the worker processes the suites spawn (each would otherwise bundle at its start: 11 s of CPU on a
 * quiet machine, more than 60 s on CI's loaded 2 cores, where a durability suite timed out waiting).
 */
export async function workerBundleFile(): Promise<string> {
  const write = (f: string) => writePrebuiltBundle(f, workerBundleFlavour({ encrypted: false, tracing: false })).then(() => undefined);
  if (process.env.TANDEM_TEST_DIR) return sharedFile('tandem-worker.js', write);
  const f = join(mkdtempSync(join('/tmp', 'tandem-bundle-')), 'tandem-worker.js');
  await write(f);
  return f;
}

let bundle: Promise<WorkflowBundle> | undefined;
export const workflowBundle = () => (bundle ??= workerBundleFile().then((f) => ({ code: readFileSync(f, 'utf8') })));

export const uniqueQueue = (name: string) => `${name}-${randomBytes(4).toString('hex')}`;

export async function temporalClient(): Promise<{ client: Client; close: () => Promise<void> }> {
  const connection = await Connection.connect({ address: address() });
  return { client: new Client({ connection }), close: () => connection.close() };
}

/**
 * Starts a worker on its own task queue; returns a Tandem client bound to that queue. `stop()` also
 * stops the model servers this worker's runs left serving in its home (a completed run's deployment
 * serves on; a test suite must not leave them behind).
 */
export async function startWorker(opts: { taskQueue: string; home?: string; activities?: object; backends?: BackendMap; slots?: Partial<WorkerSlots> }): Promise<{ worker: Worker; tandem: TandemClient; stop: () => Promise<void> }> {
  installQuietRuntime();
  const home = opts.home ?? tempDir('home');
  const { worker, connection } = await createTandemWorker({
    address: address(),
    taskQueue: opts.taskQueue,
    home,
    activities: opts.activities,
    backends: opts.backends,
    workflowBundle: await workflowBundle(),
    slots: opts.slots,
  });
  const running = worker.run();
  const tandem = await TandemClient.connect({ address: address(), taskQueue: opts.taskQueue });
  return {
    worker,
    tandem,
    stop: async () => {
      await tandem.close();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
      await stopLocalDeployments(home);
    },
  };
}

/**
 * Stops every local model server a run deployed from `home` (a deployment outlives its run by design;
 * a suite that is done with its home stops them, or the lane's leftover-process check fails).
 */
export async function stopLocalDeployments(home: string): Promise<void> {
  const serving = new LocalServingBackend(home);
  for (const d of serving.list()) await serving.undeploy(d.name);
}

export function spec(overrides: Partial<PipelineSpecInput> & { stages?: PipelineSpecInput['stages'] } = {}): PipelineSpec {
  return validatePipelineSpec({ name: 'test', retry: { initialInterval: '100ms' }, ...overrides });
}

/**
 * Polls `fn` until it gives a value. A transient gRPC answer (DEADLINE_EXCEEDED: a query no worker
 * answered in time, because the worker process is still bundling its workflows or has just been
 * killed; UNAVAILABLE; RESOURCE_EXHAUSTED) counts as "not yet", as the SDK's progress stream treats
 * it; any other error ends the wait. On timeout the last transient error is named.
 */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let transient: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      if (!isTransientGrpc(e)) throw e;
      transient = e;
    }
    if (Date.now() > deadline) {
      const last = transient ? ` (last answer: ${chainMessages(transient)})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The name the pipeline gives a job of the run's current execution (workflows/pipeline/identity.ts). */
export async function jobNameOf(workflow: { workflowId: string; describe(): Promise<{ runId: string }> }, stage: JobStage, attempt: number): Promise<string> {
  return lineageJobName({ workflowId: workflow.workflowId, runId: (await workflow.describe()).runId }, stage, attempt);
}
