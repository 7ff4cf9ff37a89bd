// `tandem dev` and `tandem demo`: the real Temporal dev server plus a Tandem worker in this process.
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { startDevServer } from '../workers/dev-server.js';
import { createTandemWorker } from '../workers/worker.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { slurmBackend } from '../backends/slurm/index.js';
import { recoverySites as sitesOf } from '../activities/recovery-sites.js';
import { loadWorkerConfig, type WorkerConfig } from '../config/worker.js';
import { DEFAULTS } from '../config/defaults.js';
import { checkPort } from './port.js';

/** Slurm, when TANDEM_SLURM_API configures it (README, "Training on Slurm"): then `auto` trains there. */
function configuredBackends(config: WorkerConfig) {
  const slurm = config.slurm ? slurmBackend(config.slurm) : undefined;
  if (slurm) console.log(`tandem: Slurm backend configured (${config.slurm!.api}); runtime auto trains on it`);
  return slurm ? { slurm } : undefined;
}
import { loadPipelineSpec, TandemClient } from '../sdk/client.js';
import { ProgressPrinter, elapsed, formatStatus } from './render.js';

export const DEMO_SPEC = fileURLToPath(new URL('../templates/examples/demo-pipeline.yaml', import.meta.url));

function quietRuntime(): void {
  Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
}

export async function runDev(o: { port: number; uiPort: number; state: string }): Promise<void> {
  // The CLI parses ports (cli/port.ts); other callers get the same rule, before anything starts.
  checkPort('--port', o.port);
  checkPort('--ui-port', o.uiPort);
  if (o.port === o.uiPort) throw new Error(`--port and --ui-port must differ (both ${o.port})`);
  // Configuration first: a bad one is reported before a dev server starts (and would have to be stopped).
  // The dev worker serves the dev server's default namespace and task queue, its home is --state.
  const config = loadWorkerConfig();
  quietRuntime();
  const state = resolve(o.state);
  const server = await startDevServer({ dbFile: join(state, 'temporal.db'), ui: true, port: o.port, uiPort: o.uiPort });
  const recoverySites = sitesOf(config.sites?.parsed, config.sites?.secrets ?? {});
  if (recoverySites.length) console.log(`tandem: failover sites ${recoverySites.map((s) => s.name).join(', ')} (TANDEM_SITES_FILE); use \`tandem run --failover\``);
  const quotas = config.quotas?.parsed;
  if (quotas) console.log(`tandem: tenant quotas at ${Object.keys(quotas.quotas).join(', ')} (TANDEM_QUOTAS_FILE); \`tandem quotas\` shows what is held`);
  const { worker } = await createTandemWorker({ address: server.address, home: state, backends: configuredBackends(config), recoverySites, quotas, cluster: config });
  console.log(`Temporal: ${server.address}   Web UI: ${server.uiUrl}   state: ${state}`);
  console.log(`Run a pipeline from another terminal: npm run tandem -- run templates/examples/demo-pipeline.yaml`);
  const stop = () => worker.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await worker.run();
  await server.stop();
}

export async function runDemo(o: { spec?: string; keep?: boolean }): Promise<void> {
  const t0 = Date.now();
  const config = loadWorkerConfig();
  quietRuntime();
  const state = resolve(DEFAULTS.home, 'demo');
  rmSync(state, { recursive: true, force: true });
  const spec = await loadPipelineSpec(o.spec ?? DEMO_SPEC);
  console.log(`tandem demo: pipeline "${spec.name}" from ${o.spec ?? 'templates/examples/demo-pipeline.yaml'}`);
  const server = await startDevServer({ dbFile: join(state, 'temporal.db'), ui: true, log: (l) => console.log(l) });
  console.log(`tandem demo: Temporal server ${server.address} (real dev server, SQLite in ${state})`);
  console.log(`tandem demo: Web UI ${server.uiUrl}/namespaces/default/workflows`);
  const { worker, connection } = await createTandemWorker({ address: server.address, home: state, backends: configuredBackends(config), cluster: config });
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
          console.log(`\nsmoke completion from ${ev.status.result.model}: "${ev.status.result.completion}"`);
          if (o.keep) console.log(`try it: curl -s ${ev.status.result.endpoint}/v1/completions -H 'content-type: application/json' -d '{"prompt":"hello"}'`);
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
  }
  console.log(`tandem demo: ${ok ? 'completed' : 'FAILED'} in ${elapsed(Date.now() - t0)}`);
  if (!ok) process.exitCode = 1;
}
