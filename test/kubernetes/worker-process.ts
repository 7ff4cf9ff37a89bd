// Entry point of a worker OS process (node --import tsx test/kubernetes/worker-process.ts), configured
// from the environment: TEMPORAL_ADDRESS, TANDEM_TASK_QUEUE, KUBECONFIG.
import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { createK8sWorker } from './worker.js';

Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
const { worker, connection } = await createK8sWorker({ address: process.env.TEMPORAL_ADDRESS!, taskQueue: process.env.TANDEM_TASK_QUEUE!, kubeconfigPath: process.env.KUBECONFIG! });
console.log('k8s test worker ready');
try {
  await worker.run();
} finally {
  await connection.close();
}
