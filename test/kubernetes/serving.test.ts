// The deploy stage on Kubernetes: a real Temporal worker runs the activities, which drive the real
// client against the fake API server; the fake's pods answer a fake vLLM API through the Service.
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { DefaultLogger, Runtime, type Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { V1Deployment } from '@kubernetes/client-node';
import type { KubernetesDeployInput } from '../../activities/kubernetes.js';
import type { KubernetesServingBackend } from '../../backends/kubernetes/serving.js';
import type { KubeClients } from '../../backends/kubernetes/client.js';
import { address, uniqueQueue, waitFor } from '../helpers.js';
import { startFakeCluster, type FakeCluster } from './fake/cluster.js';
import { bundleK8sWorkflows, createK8sWorker } from './worker.js';
import type { kubernetesDeploy } from './workflows.js';

let cluster: FakeCluster;
let bundle: WorkflowBundleWithSourceMap;
let connection: Connection;
let client: Client;
let worker: Worker;
let running: Promise<void>;
let closeWorker: () => Promise<void>;
let serving: KubernetesServingBackend;
let clients: KubeClients;
const queue = uniqueQueue('k8s-serving');

beforeAll(async () => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* installed by another test file in this process */
  }
  cluster = await startFakeCluster({ secondMs: 100 });
  bundle = await bundleK8sWorkflows();
  const w = await createK8sWorker({ address: address(), taskQueue: queue, kubeConfig: cluster.kubeConfig(), bundle });
  ({ worker, serving, clients } = w);
  running = worker.run();
  closeWorker = () => w.connection.close();
  connection = await Connection.connect({ address: address() });
  client = new Client({ connection });
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await closeWorker?.();
  await connection?.close();
  await cluster?.close();
});

const NS = 'tandem';
const deployInput = (name: string, checkpoint: string, behaviour: string, extra: Partial<KubernetesDeployInput['kubernetes']> = {}): KubernetesDeployInput => ({
  runKey: name,
  pipeline: 'sentiment',
  name,
  model: 'tandem/sentiment',
  checkpoint,
  kubernetes: {
    annotations: { 'fake.tandem.dev/vllm': behaviour, 'fake.tandem.dev/boot-ms': '150' },
    vllm: { tensorParallelSize: 2, gpuMemoryUtilization: 0.85, maxNumSeqs: 64, downloadDir: '/models', progressDeadlineSeconds: 20 },
    ...extra,
  },
});

function deploy(input: KubernetesDeployInput, id: string, gateTimeoutMs = 3000) {
  return client.workflow.start<typeof kubernetesDeploy>('kubernetesDeploy', { taskQueue: queue, workflowId: id, args: [{ deploy: input, prompt: 'Tandem says hello', gateTimeoutMs, heartbeatTimeoutMs: 5000 }] });
}

async function ask(endpoint: string): Promise<string> {
  const r = await fetch(`${endpoint}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tandem/sentiment', prompt: 'hi', max_tokens: 8 }) });
  return ((await r.json()) as { choices: { text: string }[] }).choices[0]!.text;
}

const readDeployment = (name: string) => clients.apps.readNamespacedDeployment({ name, namespace: NS });

describe('vLLM on Kubernetes: deploy, gates, rollback, teardown', () => {
  test('deploy: the Deployment carries vLLM flags, GPUs, probes and labels; rollout, gates, and the model answers', async () => {
    const h = await deploy(deployInput('svc-ok', '/ckpt/run-1/step-100', 'ok'), 'k8s-deploy-ok');
    const result = await h.result();
    expect(result.deployment).toMatchObject({ runtime: 'kubernetes', name: 'svc-ok', model: 'tandem/sentiment', checkpoint: '/ckpt/run-1/step-100', endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    expect(result.completion).toMatch(/hello from tandem\/sentiment \(\/ckpt\/run-1\/step-100\)/);

    const d: V1Deployment = await readDeployment('svc-ok');
    expect(d.spec!.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    const podLabels = d.spec!.template.metadata!.labels!;
    expect(podLabels).toMatchObject({ 'tandem.dev/pipeline': 'sentiment', 'tandem.dev/model': 'tandem.sentiment', 'tandem.dev/checkpoint': expect.stringMatching(/^[0-9a-f]{16}$/) });
    const c = d.spec!.template.spec!.containers[0]!;
    expect(c.args).toEqual(['--model', '/ckpt/run-1/step-100', '--served-model-name', 'tandem/sentiment', '--host', '0.0.0.0', '--port', '8000', '--tensor-parallel-size', '2', '--gpu-memory-utilization', '0.85', '--max-num-seqs', '64', '--download-dir', '/models']);
    expect(c.resources).toEqual({ requests: { 'nvidia.com/gpu': '2' }, limits: { 'nvidia.com/gpu': '2' } });
    expect(c.startupProbe!.httpGet).toMatchObject({ path: '/health', port: 'http' });
    expect(c.readinessProbe!.httpGet).toMatchObject({ path: '/health', port: 'http' });
    expect(c.volumeMounts).toEqual([expect.objectContaining({ name: 'model-cache', mountPath: '/models' })]);
    expect(d.status).toMatchObject({ availableReplicas: 1, updatedReplicas: 1 });
    expect(await ask(result.deployment.endpoint)).toMatch(/step-100/);
    await serving.teardown(NS, 'svc-ok');
  });

  async function deployV1(name: string) {
    const v1 = await (await deploy(deployInput(name, '/ckpt/good', 'ok'), `k8s-${name}-v1`)).result();
    expect(await ask(v1.deployment.endpoint)).toMatch(/\(\/ckpt\/good\)/);
    return v1;
  }

  test('a new revision whose /health never passes stalls (the old pods keep serving), then rolls back; the old model answers', async () => {
    const v1 = await deployV1('svc-stall');
    const h = await deploy(deployInput('svc-stall', '/ckpt/broken', 'dead'), 'k8s-svc-stall-v2');
    // While the new pod fails its readiness probe, maxUnavailable 0 keeps the old pod serving.
    await waitFor('the new ReplicaSet', async () => ((await readDeployment('svc-stall')).metadata!.annotations!['deployment.kubernetes.io/revision'] === '2') || undefined, 10_000, 50);
    expect(await ask(v1.deployment.endpoint)).toMatch(/\(\/ckpt\/good\)/);
    const err = await h.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(((err as WorkflowFailedError).cause as Error).cause).toMatchObject({ type: 'GateFailed', message: expect.stringMatching(/progress deadline/) });
    const d = await readDeployment('svc-stall');
    expect(d.metadata!.annotations).toMatchObject({ 'tandem.dev/checkpoint': '/ckpt/good', 'deployment.kubernetes.io/revision': '3' });
    expect(await ask(v1.deployment.endpoint)).toMatch(/\(\/ckpt\/good\)/);
    expect(d.status).toMatchObject({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 });
    await serving.teardown(NS, 'svc-stall');
  });

  test('a revision that rolls out but fails the /v1/models gate is rolled back; the old model answers again', async () => {
    const v1 = await deployV1('svc-gate');
    const err = await (await deploy(deployInput('svc-gate', '/ckpt/wrong', 'wrong-model'), 'k8s-svc-gate-v2', 1500)).result().catch((e: unknown) => e);
    expect(((err as WorkflowFailedError).cause as Error).cause).toMatchObject({ type: 'GateFailed', message: expect.stringMatching(/failed gate "models".*tandem\/sentiment-other/) });
    const d = await readDeployment('svc-gate');
    expect(d.metadata!.annotations!['tandem.dev/checkpoint']).toBe('/ckpt/good');
    expect(await ask(v1.deployment.endpoint)).toMatch(/\(\/ckpt\/good\)/);
    const rs = await clients.apps.listNamespacedReplicaSet({ namespace: NS, labelSelector: 'tandem.dev/deployment=svc-gate' });
    expect(rs.items.map((r) => [r.metadata!.annotations!['tandem.dev/checkpoint'] ?? r.spec!.template!.metadata!.annotations!['tandem.dev/checkpoint'], r.spec!.replicas]).sort()).toEqual([['/ckpt/good', 1], ['/ckpt/wrong', 0]]);
    await serving.teardown(NS, 'svc-gate');
  });

  test('a first deploy that fails its gate leaves nothing behind (there was no working revision to restore)', async () => {
    const err = await (await deploy(deployInput('svc-first-bad', '/ckpt/x', 'bad-completion'), 'k8s-first-bad', 1000)).result().catch((e: unknown) => e);
    expect(((err as WorkflowFailedError).cause as Error).cause).toMatchObject({ type: 'GateFailed', message: expect.stringMatching(/failed gate "completion".*500/) });
    await expect(readDeployment('svc-first-bad')).rejects.toMatchObject({ code: 404 });
    await expect(clients.core.readNamespacedService({ name: 'svc-first-bad', namespace: NS })).rejects.toMatchObject({ code: 404 });
  });

  test('cancellation during the rollout tears down the Deployment, its ReplicaSets and pods, and the Service', async () => {
    const input = deployInput('svc-cancel', '/ckpt/slow', 'ok');
    input.kubernetes!.annotations!['fake.tandem.dev/boot-ms'] = '60000';
    const h = await deploy(input, 'k8s-cancel');
    await waitFor('the rollout watch', () => cluster.api.openWatches('deployments') > 0 || undefined, 10_000, 20);
    await waitFor('the pod', async () => (await clients.core.listNamespacedPod({ namespace: NS, labelSelector: 'tandem.dev/deployment=svc-cancel' })).items.length > 0 || undefined, 10_000, 20);
    await h.cancel();
    await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    await expect(readDeployment('svc-cancel')).rejects.toMatchObject({ code: 404 });
    await expect(clients.core.readNamespacedService({ name: 'svc-cancel', namespace: NS })).rejects.toMatchObject({ code: 404 });
    expect((await clients.apps.listNamespacedReplicaSet({ namespace: NS, labelSelector: 'tandem.dev/deployment=svc-cancel' })).items).toEqual([]);
    expect((await clients.core.listNamespacedPod({ namespace: NS, labelSelector: 'tandem.dev/deployment=svc-cancel' })).items).toEqual([]);
  });

  test('a privileged or hostPath serving spec fails as InvalidRequest naming the field, and nothing is created', async () => {
    const before = cluster.api.requests.length;
    const bad = deployInput('svc-bad', '/ckpt/x', 'ok', { securityContext: { privileged: true } });
    const err = await (await deploy(bad, 'k8s-bad')).result().catch((e: unknown) => e);
    expect(((err as WorkflowFailedError).cause as Error).cause).toMatchObject({ type: 'InvalidRequest', message: expect.stringMatching(/kubernetes\.securityContext\.privileged: privileged pods are not allowed/) });
    const bad2 = deployInput('svc-bad', '/ckpt/x', 'ok', { volumes: [{ name: 'w', mountPath: '/w', hostPath: { path: '/' } }] });
    const err2 = await (await deploy(bad2, 'k8s-bad-2')).result().catch((e: unknown) => e);
    expect(((err2 as WorkflowFailedError).cause as Error).cause).toMatchObject({ type: 'InvalidRequest', message: expect.stringMatching(/kubernetes\.volumes\[0\]\.hostPath: hostPath volumes are not allowed/) });
    expect(cluster.api.requests.slice(before).filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
