// A Tandem worker process with the Slurm backend, configured from the environment (the tests SIGKILL it).
import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { createTandemWorker } from '../../workers/worker.js';
import { slurmBackend } from '../../backends/slurm/index.js';
import { loadWorkerConfig } from '../../config/worker.js';
import { workerBundleFile } from '../helpers.js';

Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
const slurm = slurmBackend(loadWorkerConfig().slurm!);
const { worker, connection } = await createTandemWorker({ address: process.env.TEMPORAL_ADDRESS!, taskQueue: process.env.TANDEM_TASK_QUEUE, home: process.env.TANDEM_HOME!, backends: { slurm }, workflowBundle: { codePath: await workerBundleFile() } });
console.log('worker ready');
try {
  await worker.run();
} finally {
  await connection.close();
}
