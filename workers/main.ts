// `npm run worker`: a long-running Tandem worker. Configuration from the environment:
// TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE, TANDEM_TASK_QUEUE (default tandem),
// TANDEM_HOME (default ./.tandem), TANDEM_SITES_FILE (Slurm sites for failover), TANDEM_QUOTAS_FILE
// (tenant quotas per site); see README.
import { resolve } from 'node:path';
import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { createTandemWorker } from './worker.js';
import { slurmBackendFromEnv } from '../backends/slurm/index.js';
import { recoverySitesFromEnv } from '../activities/recovery-sites.js';
import { quotasFromEnv } from '../activities/quota.js';

Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } } });
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const home = resolve(process.env.TANDEM_HOME ?? '.tandem');
// Slurm through FirecREST or slurmrestd when TANDEM_SLURM_API is set (see README, "Training on Slurm").
const slurm = slurmBackendFromEnv();
const recoverySites = await recoverySitesFromEnv();
const quotas = await quotasFromEnv();
const { worker, connection } = await createTandemWorker({ address, namespace: process.env.TEMPORAL_NAMESPACE, taskQueue: process.env.TANDEM_TASK_QUEUE, home, backends: slurm ? { slurm } : undefined, recoverySites, quotas });
console.log(`tandem worker: polling task queue "${worker.options.taskQueue}" on ${address}, local runtime state in ${home}${recoverySites.length ? `, failover sites ${recoverySites.map((s) => s.name).join(', ')}` : ''}${quotas ? `, quotas at ${Object.keys(quotas.quotas).join(', ')}` : ''}`);
try {
  await worker.run();
} finally {
  await connection.close();
}
