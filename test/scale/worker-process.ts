// One host's Tandem workers, as an OS process the scale test SIGKILLs: a worker on the run's own task
// queue (workflows, placement, quotas, deploy) with this host's private TANDEM_HOME and no Slurm
// access, and a worker on the Slurm site's queue with the site's backend and a TANDEM_HOME on the site's
// shared filesystem. Each is configured the way `npm run worker` is (config/worker.ts, from variables:
// TEMPORAL_TLS_* for mTLS), from the same environment with the home and queue that worker has:
//   SCALE_MAIN_HOME, SCALE_MAIN_QUEUE   the main worker's home and queue
//   TANDEM_HOME, TANDEM_TASK_QUEUE, TANDEM_SLURM_*   the site worker's
//   SCALE_BUNDLE   a prebuilt workflow bundle (both processes use the same code)
import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { slurmBackend } from '../../backends/slurm/index.js';
import { loadWorkerConfig } from '../../config/worker.js';
import { createTandemWorker } from '../../workers/worker.js';

Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
// Jobs run as the cluster's unprivileged user and write into run directories this (root) worker creates.
process.umask(0);
const { SCALE_MAIN_HOME, SCALE_MAIN_QUEUE, SCALE_BUNDLE } = process.env;
if (!SCALE_MAIN_HOME || !SCALE_MAIN_QUEUE || !SCALE_BUNDLE) throw new Error('SCALE_MAIN_HOME, SCALE_MAIN_QUEUE and SCALE_BUNDLE must be set');

const site = loadWorkerConfig();
const main = loadWorkerConfig({ ...process.env, TANDEM_HOME: SCALE_MAIN_HOME, TANDEM_TASK_QUEUE: SCALE_MAIN_QUEUE, TANDEM_SLURM_API: undefined });
const workflowBundle = { codePath: SCALE_BUNDLE };
const { address, ...connection } = site.connection;

const mainWorker = await createTandemWorker({ address, connection, namespace: main.namespace, taskQueue: main.taskQueue, home: main.home, workflowBundle });
const siteWorker = await createTandemWorker({ address, connection, namespace: site.namespace, taskQueue: site.taskQueue, home: site.home, workflowBundle, backends: { slurm: slurmBackend(site.slurm!) } });
console.log(`worker ready ${process.pid}`);
await Promise.all([mainWorker.worker.run(), siteWorker.worker.run()]);
await Promise.all([mainWorker.connection.close(), siteWorker.connection.close()]);
