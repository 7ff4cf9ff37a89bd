// `tandem dev` and `tandem demo`: the real Temporal dev server plus a Tandem worker in this process.
import { tandemCommand } from '../sdk/command-hint.js';
import { TEMPLATES } from '../sdk/templates.js';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Runtime } from '@temporalio/worker';
import { freePort, portInUse, PortInUseError, startDevServer } from '../workers/dev-server.js';
import { isAlive, processStartTime } from '../backends/proc.js';
import { createTandemWorker } from '../workers/worker.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { slurmBackend } from '../backends/slurm/index.js';
import { recoverySites as sitesOf } from '../activities/recovery-sites.js';
import { loadWorkerConfig, type WorkerConfig } from '../config/worker.js';
import { DEFAULTS } from '../config/defaults.js';
import { checkPort } from './port.js';
import { secretValues } from '../config/worker.js';
import { configureLogger, type LogFormat } from '../observe/log.js';
import { bindAddress, runtimeOptions } from '../observe/runtime.js';
import { startMetricsServer, type MetricsServer } from '../observe/server.js';

/** Slurm, when TANDEM_SLURM_API configures it (docs/slurm.md): then `auto` trains there. */
function configuredBackends(config: WorkerConfig) {
  const slurm = config.slurm ? slurmBackend(config.slurm) : undefined;
  if (slurm) console.log(`tandem: Slurm backend configured (${config.slurm!.api}); runtime auto trains on it`);
  return slurm ? { slurm } : undefined;
}
import { loadPipelineSpec, TandemClient } from '../sdk/client.js';
import { ProgressPrinter, elapsed, formatStatus } from './render.js';

export const DEMO_SPEC = fileURLToPath(new URL('../templates/examples/demo-pipeline.yaml', import.meta.url));

/**
 * The logger (--log-format or TANDEM_LOG_FORMAT; WARN unless TANDEM_LOG_LEVEL says otherwise, secrets
 * redacted), the Runtime (installed once per process, here) and, with `serve`, Tandem's /metrics and
 * the SDK's metrics: on TANDEM_METRICS_PORT / TANDEM_METRICS_SDK_PORT if set, else on free ports.
 */
async function observability(config: WorkerConfig, format: LogFormat | undefined, serve: boolean): Promise<{ metrics?: MetricsServer; sdkMetrics?: string }> {
  const logger = configureLogger({ format: format ?? config.observe.logFormat, level: config.observe.logLevel ?? 'WARN', secrets: secretValues(process.env, config) });
  const host = config.observe.metricsHost;
  const ports = config.observe.metrics ?? (serve ? { port: await freePort(), sdkPort: await freePort() } : undefined);
  const sdkMetrics = ports ? bindAddress(host, ports.sdkPort) : undefined;
  Runtime.install(runtimeOptions({ logger, coreLevel: 'ERROR', sdkMetrics }));
  return { metrics: ports ? await startMetricsServer({ host, port: ports.port }) : undefined, sdkMetrics: sdkMetrics && `http://${sdkMetrics}/metrics` };
}

interface DevLock {
  pid: number;
  startTime?: number;
  /** The Temporal dev server this `tandem dev` started (its own session: no terminal signal reaches it). */
  server?: { pid: number; startTime?: number };
}

function readLock(file: string): DevLock | undefined {
  try {
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DevLock) : undefined;
  } catch {
    return undefined; // an unreadable lock is a stale one
  }
}

/**
 * A `tandem dev` killed outright (SIGKILL, a crash) cannot stop its server, which runs detached: the
 * next one on the same state stops it, before checking its ports (which it would hold).
 */
async function stopOrphanedServer(state: string): Promise<void> {
  const held = readLock(join(state, 'dev.lock'));
  if (!held?.server || isAlive(held.pid, held.startTime) || !isAlive(held.server.pid, held.server.startTime)) return;
  const { pid, startTime } = held.server;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && isAlive(pid, startTime); i++) await new Promise((r) => setTimeout(r, 50));
  if (isAlive(pid, startTime)) process.kill(pid, 'SIGKILL');
  console.log(`tandem dev: stopped the Temporal dev server (pid ${pid}) that an earlier \`tandem dev\` on ${state} left running`);
}

/**
 * The state directory is this `tandem dev`'s own: a second one on it (its SQLite, its runs' homes) is
 * refused while the first lives. Returns the release, and where to record the server it starts.
 */
function lockState(state: string): { unlock: () => void; recordServer: (pid: number) => void } {
  mkdirSync(state, { recursive: true });
  const file = join(state, 'dev.lock');
  const held = readLock(file);
  if (held && held.pid !== process.pid && isAlive(held.pid, held.startTime)) throw new Error(`state directory ${state} is in use by another \`tandem dev\` (pid ${held.pid}); give this one its own with --state <dir>`);
  const lock: DevLock = { pid: process.pid, startTime: processStartTime(process.pid)?.start };
  writeFileSync(file, JSON.stringify(lock));
  return {
    unlock: () => rmSync(file, { force: true }),
    recordServer: (pid) => writeFileSync(file, JSON.stringify({ ...lock, server: { pid, startTime: processStartTime(pid)?.start } })),
  };
}

export async function runDev(o: { port: number; uiPort: number; state: string; keep?: boolean; logFormat?: LogFormat }): Promise<void> {
  // The CLI parses ports (cli/port.ts); other callers get the same rule, before anything starts.
  checkPort('--port', o.port);
  checkPort('--ui-port', o.uiPort);
  if (o.port === o.uiPort) throw new Error(`--port and --ui-port must differ (both ${o.port})`);
  await stopOrphanedServer(resolve(o.state));
  // Never attach to a server this command did not start (a worker with this user's environment and
  // home would take another user's tasks): a port in use is an error, before anything starts.
  for (const [flag, p] of [['--port', o.port], ['--ui-port', o.uiPort]] as const) {
    if (await portInUse(p)) throw new PortInUseError(`port ${p} (${flag}) is already in use on 127.0.0.1 (another Temporal server or program listens there); \`tandem dev\` starts its own server and never attaches to another. Stop that one, or pick free ports: tandem dev --port <n> --ui-port <m>`);
  }
  // Configuration first: a bad one is reported before a dev server starts (and would have to be stopped).
  // The dev worker serves the dev server's default namespace and task queue, its home is --state.
  const config = loadWorkerConfig();
  const state = resolve(o.state);
  const { unlock, recordServer } = lockState(state);
  const observed = await observability(config, o.logFormat, true);
  let server: Awaited<ReturnType<typeof startDevServer>> | undefined;
  let connection: { close(): Promise<void> } | undefined;
  // Ctrl-C: the first stops the worker, then everything this command started (below); a second one
  // exits at once.
  let stopping = false;
  let stopWorker: () => void = () => undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      console.error(`tandem dev: ${signal} again: exiting without waiting`);
      process.exit(130);
    }
    stopping = true;
    console.log(`tandem dev: stopping (${signal}): worker, ${o.keep ? 'dev server (--keep: model servers stay up)' : 'model servers and dev server'}`);
    stopWorker();
  };
  // SIGHUP (the terminal closed) and SIGQUIT too: the server runs detached, so a signal that ended this
  // process by default would leave it running.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;
  for (const sig of signals) process.on(sig, onSignal);
  try {
    // In a process group of its own: the terminal's Ctrl-C reaches this process alone, which stops the
    // server after the worker (a server gone first leaves the worker's shutdown waiting on it).
    server = await startDevServer({ dbFile: join(state, 'temporal.db'), ui: true, port: o.port, uiPort: o.uiPort, ownProcessGroup: true });
    recordServer(server.pid);
    const recoverySites = sitesOf(config.sites?.parsed, config.sites?.secrets ?? {});
    if (recoverySites.length) console.log(`tandem: failover sites ${recoverySites.map((s) => s.name).join(', ')} (TANDEM_SITES_FILE); use \`tandem run --failover\``);
    const quotas = config.quotas?.parsed;
    if (quotas) console.log(`tandem: tenant quotas at ${Object.keys(quotas.quotas).join(', ')} (TANDEM_QUOTAS_FILE); \`tandem quotas\` shows what is held`);
    const created = await createTandemWorker({ address: server.address, home: state, backends: configuredBackends(config), recoverySites, quotas, tenantPolicy: config.tenantPolicy?.parsed, cluster: config, localIsolation: config.localIsolation, slots: config.slots });
    connection = created.connection;
    const { worker } = created;
    console.log(`Temporal: ${server.address}   Web UI: ${server.uiUrl}   state: ${state}   pid: ${process.pid}`);
    if (observed.metrics) console.log(`Metrics: ${observed.metrics.url}   Temporal SDK metrics: ${observed.sdkMetrics}`);
    console.log(`Run a pipeline from another terminal: ${tandemCommand(`run ${TEMPLATES.demoSpec} --address ${server.address}`)}`);
    stopWorker = () => worker.shutdown();
    if (stopping) worker.shutdown();
    else await worker.run();
  } finally {
    await connection?.close();
    // The model servers this command's worker started (a `--keep` leaves them for `tandem deployments`).
    const serving = new LocalServingBackend(state);
    if (!o.keep) {
      const stopped = await serving.stopOwnedBy(process.pid);
      if (stopped.length) console.log(`tandem dev: stopped model server(s) ${stopped.join(', ')}`);
    } else {
      const left = serving.rows().filter((r) => r.alive);
      if (left.length) console.log(`tandem dev: --keep: model server(s) ${left.map((r) => `${r.name} at ${r.endpoint ?? '?'}`).join(', ')} stay up; stop them with \`tandem deployments stop <name> --home ${state}\``);
    }
    await server?.stop();
    await observed.metrics?.close();
    unlock();
    for (const sig of signals) process.off(sig, onSignal);
  }
}

/** Asks the deployed model for a longer completion of the prompt and prints it (model-generated text). */
async function printSample(endpoint: string, model: string, prompt: string): Promise<void> {
  const request = { model, prompt, max_tokens: 240, temperature: 0.7, seed: 1 };
  try {
    const res = await fetch(`${endpoint}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request), signal: AbortSignal.timeout(10_000) });
    const body = (await res.json()) as { choices?: { text: string }[]; usage?: { completion_tokens: number } };
    if (!res.ok || !body.choices?.[0]) return console.log(`(sample request answered ${res.status}: ${JSON.stringify(body).slice(0, 200)})`);
    console.log(`\n${model} continues the prompt (max_tokens ${request.max_tokens}, temperature ${request.temperature}, seed ${request.seed}):\n`);
    console.log(`  ${(prompt + body.choices[0].text).replace(/\n/g, '\n  ')}\n`);
  } catch (e) {
    console.log(`(sample request failed: ${(e as Error).message})`);
  }
}

export async function runDemo(o: { spec?: string; keep?: boolean; logFormat?: LogFormat }): Promise<void> {
  const t0 = Date.now();
  const config = loadWorkerConfig();
  const observed = await observability(config, o.logFormat, false);
  const state = resolve(DEFAULTS.home, 'demo');
  rmSync(state, { recursive: true, force: true });
  const spec = await loadPipelineSpec(o.spec ?? DEMO_SPEC);
  console.log(`tandem demo: pipeline "${spec.name}" from ${o.spec ?? 'templates/examples/demo-pipeline.yaml'}`);
  const server = await startDevServer({ dbFile: join(state, 'temporal.db'), ui: true, log: (l) => console.log(l) });
  console.log(`tandem demo: Temporal server ${server.address} (real dev server, SQLite in ${state})`);
  console.log(`tandem demo: Web UI ${server.uiUrl}/namespaces/default/workflows`);
  const { worker, connection } = await createTandemWorker({ address: server.address, home: state, backends: configuredBackends(config), cluster: config, localIsolation: config.localIsolation, slots: config.slots });
  const running = worker.run();
  const client = await TandemClient.connect({ address: server.address });
  let ok = false;
  try {
    const handle = await client.launch(spec, { tuning: { pollMaxMs: 1000, heartbeatTimeoutMs: 10_000 } });
    console.log(`tandem demo: started workflow ${handle.id}`);
    const printer = new ProgressPrinter(process.stdout, Date.now());
    for await (const ev of handle.progress(250)) {
      if (ev.type !== 'done') printer.handle(ev);
      else {
        console.log(formatStatus(ev.status));
        ok = ev.status.phase === 'completed';
        if (ok && ev.status.result) {
          const { model, endpoint, completion } = ev.status.result;
          console.log(`\nsmoke completion from ${model}: "${completion}"`);
          await printSample(endpoint, model, spec.stages.deploy.smokePrompt);
          if (o.keep) console.log(`try it: curl -s ${endpoint}/v1/completions -H 'content-type: application/json' -d '{"prompt":"Mr. Darcy","max_tokens":100}'`);
        }
      }
    }
  } finally {
    await client.close();
    if (o.keep) {
      console.log(`tandem demo: --keep: server, worker and model stay up (Web UI ${server.uiUrl}); Ctrl-C to stop`);
      await new Promise<void>((r) => process.once('SIGINT', () => r()));
    }
    for (const d of new LocalServingBackend(state).list()) await new LocalServingBackend(state).undeploy(d.name);
    worker.shutdown();
    await running;
    await connection.close();
    await server.stop();
    await observed.metrics?.close();
  }
  console.log(`tandem demo: ${ok ? 'completed' : 'FAILED'} in ${elapsed(Date.now() - t0)}`);
  if (!ok) process.exitCode = 1;
}
