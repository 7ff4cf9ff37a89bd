// A real `tandem worker` process (workers/main.ts, the production entry point) for the observability
// tests, configured only through its environment, with its stdout and stderr captured.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { address, stopLocalDeployments, waitFor, workerBundleFile } from '../helpers.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr interleaved as received. */
  output(): string;
  /** Its stderr alone (where the logger writes). */
  stderr(): string;
  /** SIGTERM (Temporal's graceful shutdown), then waits for it to exit; SIGKILL after 30 s. */
  stop(): Promise<number | null>;
}

export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  // The runner's environment without its own OTEL_* and TANDEM_* settings: only the test's count.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_') && !(k.startsWith('TANDEM_') && !k.startsWith('TANDEM_TEST_'))));
  // The run's prebuilt bundle (no bundling at start) where it fits: a worker without payload keys or tracing.
  const fits = !Object.keys(env).some((k) => k.startsWith('OTEL_') || k.startsWith('TANDEM_CODEC_'));
  const bundle = fits ? { TANDEM_WORKFLOW_BUNDLE: await workerBundleFile() } : {};
  const child = spawn(process.execPath, ['--import', TSX, 'workers/main.ts'], {
    env: { ...inherited, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), ...bundle, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  const err: string[] = [];
  for (const s of [child.stdout!, child.stderr!]) s.on('data', (d: Buffer) => (out.push(d.toString()), s === child.stderr && err.push(d.toString()), process.env.TANDEM_TEST_VERBOSE && process.stderr.write(`[worker] ${d}`)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const w: WorkerProcess = {
    child,
    output: () => out.join(''),
    stderr: () => err.join(''),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
        if (env.TANDEM_HOME) await stopLocalDeployments(env.TANDEM_HOME);
      }
    },
  };
  try {
    await waitFor('the worker to poll', () => (w.output().includes('polling task queue') ? true : child.exitCode !== null ? Promise.reject(new Error(`the worker exited: ${w.output()}`)) : undefined), 90_000, 200);
  } catch (e) {
    await w.stop();
    throw e;
  }
  return w;
}
