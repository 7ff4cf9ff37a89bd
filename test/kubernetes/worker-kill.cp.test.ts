// [real control plane] A worker OS process is SIGKILLed while the rollout-wait activity watches a
// Deployment on a real kube-apiserver; a second worker resumes the watch and the deploy completes
// with one Deployment and one ReplicaSet. kwok keeps the pod "loading weights" (not Ready) for a
// few seconds; the gates reach the vLLM stand-in through the load-balancer stand-in at 127.0.0.1.
// The fake's version (worker-kill.test.ts) also counts the POSTs and GETs; here the apiserver's own
// records stand in for that: the Deployment's uid, generation and ReplicaSets.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { address, uniqueQueue, waitFor } from '../helpers.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { KWOK_ANNOTATIONS } from './kwok-stages.js';
import { startLoadBalancer, type LoadBalancer } from './load-balancer.js';
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

let cp: ControlPlane;
let lb: LoadBalancer;
beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'gpu-node-1', gpus: 8 }] });
  await cp.createClaim('ckpt');
  lb = await startLoadBalancer(cp);
}, 120_000);
afterAll(async () => {
  await lb?.stop();
  await cp?.stop();
});

test('worker killed during a rollout: the next worker resumes watching; one Deployment; the deploy completes', async () => {
  const queue = uniqueQueue('k8s-cp-kill');
  const connection = await Connection.connect({ address: address() });
  const client = new Client({ connection });
  const clients = cp.clients();
  let w1: ChildProcess | undefined;
  let w2: ChildProcess | undefined;
  try {
    w1 = startWorkerProcess(cp.kubeconfigPath, queue);
    const h = await client.workflow.start<typeof kubernetesDeploy>('kubernetesDeploy', {
      taskQueue: queue,
      workflowId: `k8s-cp-kill-${queue}`,
      args: [{ deploy: { runKey: 'kill', pipeline: 'sentiment', name: 'svc-kill', model: 'tandem/sentiment', checkpoint: '/ckpt/kill', kubernetes: { annotations: { [KWOK_ANNOTATIONS.boot]: '8s' }, modelVolume: { claimName: 'ckpt', workerPath: '/ckpt', mountPath: '/ckpt' }, vllm: { progressDeadlineSeconds: 300 } } }, prompt: 'hi', gateTimeoutMs: 5000, heartbeatTimeoutMs: 1500 }],
    });
    // The first worker is inside k8sAwaitRollout (the Deployment exists, its pod is not Ready yet).
    await waitFor('the rollout wait to start', async () => {
      const d = await h.describe();
      return d.raw.pendingActivities?.some((a) => a.activityType?.name === 'k8sAwaitRollout' && Number(a.state) === 2 /* STARTED */) || undefined;
    }, 60_000, 100);
    const before = await clients.apps.readNamespacedDeployment({ name: 'svc-kill', namespace: cp.namespace });
    expect(before.status?.readyReplicas ?? 0).toBe(0);
    w1.kill('SIGKILL');
    await exited(w1);
    w2 = startWorkerProcess(cp.kubeconfigPath, queue);
    const result = await h.result();
    expect(result.completion).toMatch(/hello from tandem\/sentiment \(\/ckpt\/kill\)/);

    // Apply ran once: the same Deployment object (uid), never updated again, one ReplicaSet.
    const after = await clients.apps.readNamespacedDeployment({ name: 'svc-kill', namespace: cp.namespace });
    expect(after.metadata!.uid).toBe(before.metadata!.uid);
    expect(after.metadata!.generation).toBe(1);
    expect(after.status).toMatchObject({ readyReplicas: 1, updatedReplicas: 1 });
    expect((await clients.apps.listNamespacedDeployment({ namespace: cp.namespace })).items.map((d) => d.metadata!.name)).toEqual(['svc-kill']);
    expect((await clients.apps.listNamespacedReplicaSet({ namespace: cp.namespace })).items).toHaveLength(1);
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
  }
});
