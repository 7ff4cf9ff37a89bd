// `npm run worker`: a long-running Tandem worker, configured from the environment by
// config/worker.ts (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TANDEM_TASK_QUEUE, TANDEM_HOME, Slurm through
// TANDEM_SLURM_API, TANDEM_SITES_FILE, TANDEM_QUOTAS_FILE, Kubernetes, migration sites; see README,
// "Configuration"). A bad configuration is reported all at once, without a stack trace.
import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { createTandemWorker } from './worker.js';
import { slurmBackend } from '../backends/slurm/index.js';
import { recoverySites as sitesOf } from '../activities/recovery-sites.js';
import { loadWorkerConfig } from '../config/worker.js';
import { CONFIG_EXIT_CODE, ConfigError } from '../config/errors.js';

function load() {
  try {
    return loadWorkerConfig();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(e.message);
    process.exit(CONFIG_EXIT_CODE);
  }
}

const config = load();
Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } } });
const { address, home } = config;
// Slurm through FirecREST or slurmrestd when TANDEM_SLURM_API is set (see README, "Training on Slurm").
const slurm = config.slurm ? slurmBackend(config.slurm) : undefined;
const recoverySites = sitesOf(config.sites?.parsed, config.sites?.secrets ?? {});
const quotas = config.quotas?.parsed;
const { worker, connection } = await createTandemWorker({ address, namespace: config.namespace, taskQueue: config.taskQueue, home, backends: slurm ? { slurm } : undefined, recoverySites, quotas, cluster: config });
console.log(`tandem worker: polling task queue "${worker.options.taskQueue}" on ${address}, local runtime state in ${home}${recoverySites.length ? `, failover sites ${recoverySites.map((s) => s.name).join(', ')}` : ''}${quotas ? `, quotas at ${Object.keys(quotas.quotas).join(', ')}` : ''}`);
try {
  await worker.run();
} finally {
  await connection.close();
}
