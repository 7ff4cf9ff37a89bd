// A worker OS process is SIGKILLed while the rollout-wait activity watches the Deployment; a second
// worker resumes the watch (same Deployment, no second one) and the deploy completes.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { KubeClients } from '../../backends/kubernetes/client.js';
import { address, tempDir, uniqueQueue, waitFor } from '../helpers.js';
import { startFakeCluster } from './fake/cluster.js';
import type { kubernetesDeploy } from './workflows.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

function startWorkerProcess(kubeconfig: string, taskQueue: string): ChildProcess {
  // node --import tsx: one process (not tsx's parent + child), so SIGKILL hits the worker itself.
  const child = spawn(process.execPath, ['--import', TSX, 'test/kubernetes/worker-process.ts'], {
    env: { ...process.env, TEMPORAL_ADDRESS: address(), TANDEM_TASK_QUEUE: taskQueue, KUBECONFIG: kubeconfig, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => process.env.TANDEM_TEST_VERBOSE && process.stderr.write(d));
  return child;
}
const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

test('worker killed during a rollout: the next worker resumes watching; one Deployment; the deploy completes', async () => {
  const cluster = await startFakeCluster({ secondMs: 100 });
  const kubeconfig = cluster.writeKubeconfig(tempDir('k8s-kill'));
  const queue = uniqueQueue('k8s-kill');
  const connection = await Connection.connect({ address: address() });
  const client = new Client({ connection });
  let w1: ChildProcess | undefined;
  let w2: ChildProcess | undefined;
  try {
    w1 = startWorkerProcess(kubeconfig, queue);
    const h = await client.workflow.start<typeof kubernetesDeploy>('kubernetesDeploy', {
      taskQueue: queue,
      workflowId: `k8s-kill-${queue}`,
      args: [{ deploy: { runKey: 'kill', pipeline: 'sentiment', name: 'svc-kill', model: 'tandem/sentiment', checkpoint: '/ckpt/kill', kubernetes: { annotations: { 'fake.tandem.dev/boot-ms': '4000' }, modelVolume: { claimName: 'ckpt', workerPath: '/ckpt', mountPath: '/ckpt' }, vllm: { progressDeadlineSeconds: 300 } } }, prompt: 'hi', gateTimeoutMs: 5000, heartbeatTimeoutMs: 1500 }],
    });
    // The first worker is inside k8s_await_rollout: its watch on the Deployment is open.
    await waitFor('the rollout watch', () => cluster.api.openWatches('deployments') > 0 || undefined, 60_000, 20);
    w1.kill('SIGKILL');
    await exited(w1);
    const killedAt = cluster.api.requests.length;
    w2 = startWorkerProcess(kubeconfig, queue);
    const result = await h.result();
    expect(result.completion).toMatch(/hello from tandem\/sentiment \(\/ckpt\/kill\)/);

    const deploymentsPath = /^\/apis\/apps\/v1\/namespaces\/tandem\/deployments$/;
    expect(cluster.api.countRequests('POST', deploymentsPath, 201)).toBe(1);
    expect(cluster.api.countRequests('POST', deploymentsPath, 409)).toBe(0); // apply ran once; only the watch was retried
    // The second worker's attempt re-read the Deployment (then watched, had the rollout not finished yet).
    expect(cluster.api.requests.slice(killedAt).filter((r) => r.method === 'GET' && r.path === '/apis/apps/v1/namespaces/tandem/deployments/svc-kill').length).toBeGreaterThanOrEqual(1);
    const clients = new KubeClients({ kubeConfig: cluster.kubeConfig() });
    expect((await clients.apps.listNamespacedDeployment({ namespace: 'tandem' })).items.map((d) => d.metadata!.name)).toEqual(['svc-kill']);
    expect((await clients.apps.listNamespacedReplicaSet({ namespace: 'tandem' })).items).toHaveLength(1);
    const history = await h.fetchHistory();
    const retried = history.events!.filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
    expect(retried).toHaveLength(1); // exactly one activity (the rollout wait) ran a second attempt
    const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
    expect(scheduled).toEqual(['k8sApplyServing', 'k8sAwaitRollout', 'k8sGateServing']);
  } finally {
    w1?.kill('SIGKILL');
    w2?.kill('SIGTERM');
    if (w2) await exited(w2);
    await connection.close();
    await cluster.close();
  }
});
