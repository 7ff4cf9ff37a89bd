// A Temporal worker running the Kubernetes deploy activities and the test workflow; used in-process
// by the tests and, through worker-process.ts, as a separate OS process that tests SIGKILL.
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClients } from '../../backends/kubernetes/client.js';
import { KubernetesServingBackend } from '../../backends/kubernetes/serving.js';
import { createKubernetesActivities } from '../../activities/kubernetes.js';
import { tandemSinks } from '../../observe/sinks.js';
import { sharedBundle } from '../helpers.js';

export const K8S_WORKFLOWS = fileURLToPath(new URL('./workflows.ts', import.meta.url));

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m), log() {} };
export const bundleK8sWorkflows = () => sharedBundle('kubernetes', () => bundleWorkflowCode({ workflowsPath: K8S_WORKFLOWS, logger: quiet }));

export async function createK8sWorker(opts: { address: string; taskQueue: string; kubeConfig?: KubeConfig; kubeconfigPath?: string; bundle?: WorkflowBundle }) {
  const clients = new KubeClients({ kubeConfig: opts.kubeConfig, kubeconfigPath: opts.kubeconfigPath });
  // LoadBalancer: the worker runs outside the cluster, so it reaches the model through the LB address.
  const serving = new KubernetesServingBackend({ clients, serviceType: 'LoadBalancer' });
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    sinks: tandemSinks({ record: false }), // workflows/observe.ts calls them; this worker serves no metrics
    connection,
    taskQueue: opts.taskQueue,
    workflowBundle: opts.bundle ?? (await bundleK8sWorkflows()),
    activities: createKubernetesActivities({ serving, heartbeatMs: 300 }),
    maxHeartbeatThrottleInterval: 300,
  });
  return { worker, connection, serving, clients };
}
