// The serving lifecycle through hybridPipeline (PATCHES.servingEndpoint), on the fake API server (test/kubernetes/fake/:
// its Deployment and ReplicaSet controllers roll out for real, its pods answer a loopback vLLM
// stand-in through a loopback load balancer). One stable endpoint per pipeline; each run a revision;
// the previous revision serves until the new one is ready; failed rollouts and gates, and cancelled
// runs, undo exactly the run's own revision. The real-control-plane proof is serving-lifecycle.cp.test.ts.
import { WorkflowFailedError } from '@temporalio/client';
import type { V1Deployment, V1ReplicaSet } from '@kubernetes/client-node';
import { KubeClients } from '../../backends/kubernetes/client.js';
import { KubernetesServingBackend } from '../../backends/kubernetes/serving.js';
import { KubernetesOptionsError } from '../../contract/kubernetes.js';
import type { PipelineSpecInput } from '../../contract/pipeline.js';
import { spec, startWorker, tempDir, uniqueQueue, waitFor } from '../helpers.js';
import { startFakeCluster, type FakeCluster } from './fake/cluster.js';

let cluster: FakeCluster;
let w: Awaited<ReturnType<typeof startWorker>>;
let clients: KubeClients;
const home = tempDir('k8s-serving');
const NS = 'tandem';

beforeAll(async () => {
  cluster = await startFakeCluster({ secondMs: 100 });
  // The worker finds the cluster the way a real one does: KUBECONFIG; the LB address reaches the model.
  Object.assign(process.env, { KUBECONFIG: cluster.writeKubeconfig(tempDir('kubeconfig')), TANDEM_K8S_SERVICE_TYPE: 'LoadBalancer', TANDEM_K8S_NAMESPACE: cluster.namespace });
  w = await startWorker({ taskQueue: uniqueQueue('k8s-serving'), home });
  for (const k of ['KUBECONFIG', 'TANDEM_K8S_SERVICE_TYPE', 'TANDEM_K8S_NAMESPACE']) delete process.env[k];
  clients = new KubeClients({ kubeConfig: cluster.kubeConfig() });
});
afterAll(async () => {
  await w?.stop();
  await cluster?.close();
});

type Behaviour = 'ok' | 'dead' | 'wrong-model' | 'bad-completion';
/** A run of pipeline `pipeline` serving endpoint `endpoint` from the worker's home, shared with pods through a PVC. */
function pipelineSpec(behaviour: Behaviour, o: { endpoint?: string; pipeline?: string; tenant?: string; bootMs?: number; readinessTimeout?: string } = {}) {
  const deploy: PipelineSpecInput['stages'] = {
    deploy: {
      runtime: 'kubernetes',
      name: o.endpoint,
      model: 'tandem/chat',
      readinessTimeout: o.readinessTimeout ?? '20s',
      kubernetes: {
        annotations: { 'fake.tandem.dev/vllm': behaviour, 'fake.tandem.dev/boot-ms': String(o.bootMs ?? 150) },
        modelVolume: { claimName: 'tandem-home', subPath: 'tandem', workerPath: home },
        vllm: { progressDeadlineSeconds: 30, maxNumSeqs: 64, downloadDir: '/models' },
      },
    },
  };
  return spec({ name: o.pipeline ?? 'chat', tenant: o.tenant, stages: { train: { steps: 10, checkpointEvery: 10 }, ...deploy } });
}
const launch = (id: string, behaviour: Behaviour, o: Parameters<typeof pipelineSpec>[1] = {}) => w.tandem.launch(pipelineSpec(behaviour, o), { id, tuning: { pollMaxMs: 300 } });
const failureOf = async (h: { result(): Promise<unknown> }) => (await h.result().catch((e: unknown) => e)) as WorkflowFailedError;

const readDeployment = (name: string): Promise<V1Deployment> => clients.apps.readNamespacedDeployment({ name, namespace: NS });
const replicaSets = async (name: string): Promise<V1ReplicaSet[]> => (await clients.apps.listNamespacedReplicaSet({ namespace: NS, labelSelector: `tandem.dev/deployment=${name}` })).items;
const runOf = (o: { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } }) => o.spec?.template?.metadata?.annotations?.['tandem.dev/run'];

async function ask(endpoint: string): Promise<string> {
  const r = await fetch(`${endpoint}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tandem/chat', prompt: 'hi', max_tokens: 8 }) });
  return ((await r.json()) as { choices: { text: string }[] }).choices[0]!.text;
}

/** Every write the fake's store saw to the ReplicaSets of the run `run` (spec.replicas, or deleted), from now until stopped. */
function watchReplicas(run: string): { writes: (number | 'deleted')[]; stop: () => void } {
  const writes: (number | 'deleted')[] = [];
  const stop = cluster.api.store.subscribe((e) => {
    if (e.resource === 'replicasets' && runOf(e.object as V1ReplicaSet) === run) writes.push(e.type === 'DELETED' ? 'deleted' : Number((e.object.spec as { replicas?: number }).replicas ?? 0));
  });
  return { writes, stop };
}

describe('one endpoint per pipeline, a revision per run', () => {
  let v1Endpoint = '';

  test('the first run creates the endpoint: vLLM flags, the checkpoint on the read-only claim, labels naming pipeline, tenant, run and checkpoint', async () => {
    const h = await launch('serve-v1', 'ok');
    const result = await h.result();
    expect(result.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    v1Endpoint = result.endpoint;
    const inPod = `/mnt/models${result.checkpoint.path.slice(home.length)}`;
    expect(result.completion).toContain(`(${inPod})`); // the stand-in echoes the --model it was given

    const d = await readDeployment('chat');
    expect(d.metadata!.annotations).toMatchObject({ 'tandem.dev/created-by-run': 'serve-v1', 'tandem.dev/pipeline': 'chat', 'tandem.dev/tenant': 'default', 'deployment.kubernetes.io/revision': '1' });
    expect(d.spec!.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    expect(d.spec!.revisionHistoryLimit).toBe(5);
    expect(d.spec!.template.metadata!.labels).toMatchObject({ 'tandem.dev/pipeline': 'chat', 'tandem.dev/tenant': 'default', 'tandem.dev/run': 'serve-v1', 'tandem.dev/checkpoint': expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(d.spec!.template.metadata!.annotations).toMatchObject({ 'tandem.dev/run': 'serve-v1', 'tandem.dev/checkpoint': result.checkpoint.path });
    const c = d.spec!.template.spec!.containers[0]!;
    expect(c.args).toEqual(['--model', inPod, '--served-model-name', 'tandem/chat', '--host', '0.0.0.0', '--port', '8000', '--tensor-parallel-size', '1', '--gpu-memory-utilization', '0.9', '--max-num-seqs', '64', '--download-dir', '/models']);
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
    expect(c.readinessProbe!.httpGet).toMatchObject({ path: '/health', port: 'http' });
    expect(d.spec!.template.spec!.volumes).toEqual(expect.arrayContaining([{ name: 'model', persistentVolumeClaim: { claimName: 'tandem-home', readOnly: true } }]));
    expect(c.volumeMounts).toEqual(expect.arrayContaining([{ name: 'model', mountPath: '/mnt/models', readOnly: true, subPath: 'tandem' }]));
    expect((await h.status()).stages.deploy).toMatchObject({ status: 'completed', runtime: 'kubernetes', jobId: 'chat' });
  });

  test('the next run rolls out revision 2 of the same Deployment and retires revision 1 (no second Deployment)', async () => {
    const result = await (await launch('serve-v2', 'ok')).result();
    expect(result.endpoint).toBe(v1Endpoint); // the same Service
    expect(cluster.api.store.list('deployments', NS).map((d) => d.metadata.name)).toEqual(['chat']);
    const d = await readDeployment('chat');
    expect(d.metadata!.annotations).toMatchObject({ 'deployment.kubernetes.io/revision': '2', 'tandem.dev/created-by-run': 'serve-v1', 'tandem.dev/run': 'serve-v2' });
    const rs = (await replicaSets('chat')).map((r) => [runOf(r), r.spec!.replicas]).sort();
    expect(rs).toEqual([['serve-v1', 0], ['serve-v2', 1]]);
    expect(await ask(result.endpoint)).toContain('on chat-');
  });

  test('a revision whose pods never become ready: revision 2 keeps all its replicas and answers throughout, then serves again after the rollback', async () => {
    const seen = watchReplicas('serve-v2');
    const h = await launch('serve-v3-stalls', 'dead');
    await waitFor('the new ReplicaSet', async () => (await replicaSets('chat')).some((r) => runOf(r) === 'serve-v3-stalls') || undefined, 60_000, 50);
    const answers: string[] = [];
    const asking = (async () => {
      while (!(await h.workflow.describe()).closeTime) answers.push(await ask(v1Endpoint));
    })();
    const err = await failureOf(h);
    await asking;
    seen.stop();
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(err.cause?.message).toMatch(/stage deploy failed: .*progress deadline/);
    expect(seen.writes.length).toBeGreaterThan(0); // its status was written while the rollout stalled
    expect(new Set(seen.writes)).toEqual(new Set([1])); // every write to revision 2's ReplicaSet kept its 1 replica
    expect(answers.length).toBeGreaterThan(0);
    expect(new Set(answers.map((a) => a.includes('/runs/serve-v2/')))).toEqual(new Set([true])); // only revision 2 answered
    const d = await readDeployment('chat');
    expect(runOf(d)).toBe('serve-v2');
    expect(d.metadata!.annotations!['deployment.kubernetes.io/revision']).toBe('4'); // the undo is a new revision, as in Kubernetes
    expect((await h.timeline()).filter((e) => e.kind === 'compensation').map((e) => e.message)[0]).toBe('rolled back chat to revision 2, which served before');
    expect((await replicaSets('chat')).find((r) => runOf(r) === 'serve-v3-stalls')!.spec!.replicas).toBe(0);
  });

  test('a revision that rolls out but fails the /v1/models gate is rolled back to the one before; it answers again', async () => {
    const err = await failureOf(await launch('serve-v4-wrong', 'wrong-model', { readinessTimeout: '3s' }));
    expect(err.cause?.message).toMatch(/stage deploy failed: .*gate "models".*tandem\/chat-other/);
    await waitFor('revision 2 serving again', async () => runOf(await readDeployment('chat')) === 'serve-v2' || undefined, 10_000, 50);
    expect(await ask(v1Endpoint)).toContain('/runs/serve-v2/');
    expect(cluster.api.store.list('deployments', NS).map((d) => d.metadata.name)).toEqual(['chat']);
  });

  test('cancelling a run during its rollout undoes its revision only: the endpoint stays, the revision before serves', async () => {
    const h = await launch('serve-v5-cancel', 'ok', { bootMs: 60_000 });
    await waitFor('the new pod', async () => (await clients.core.listNamespacedPod({ namespace: NS, labelSelector: 'tandem.dev/run=serve-v5-cancel' })).items.length > 0 || undefined, 60_000, 50);
    await h.cancel();
    await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    const d = await readDeployment('chat');
    expect(runOf(d)).toBe('serve-v2');
    expect((await replicaSets('chat')).find((r) => runOf(r) === 'serve-v5-cancel')!.spec!.replicas).toBe(0);
    expect(await ask(v1Endpoint)).toContain('/runs/serve-v2/');
    await clients.core.readNamespacedService({ name: 'chat', namespace: NS }); // still there
  });

  test("another pipeline or tenant naming this endpoint is refused before anything changes", async () => {
    const before = (await readDeployment('chat')).metadata!.resourceVersion;
    const other = await failureOf(await launch('serve-intruder', 'ok', { pipeline: 'other', endpoint: 'chat' }));
    expect(other.cause?.message).toMatch(/(Service|Deployment) tandem\/chat belongs to pipeline "chat" of tenant "default", not to pipeline "other" of tenant "default".*stages\.deploy\.name/);
    const tenant = await failureOf(await launch('serve-tenant', 'ok', { tenant: 'research' }));
    expect(tenant.cause?.message).toMatch(/belongs to pipeline "chat" of tenant "default", not to pipeline "chat" of tenant "research"/);
    expect((await readDeployment('chat')).metadata!.resourceVersion).toBe(before);
  });
});

describe('an endpoint with no earlier revision', () => {
  test('a first revision that fails its gate is deleted with its Service: nothing to roll back to', async () => {
    const h = await launch('fresh-bad', 'bad-completion', { endpoint: 'fresh', readinessTimeout: '2s' });
    const err = await failureOf(h);
    expect(err.cause?.message).toMatch(/gate "completion".*500/);
    await expect(readDeployment('fresh')).rejects.toMatchObject({ code: 404 });
    await expect(clients.core.readNamespacedService({ name: 'fresh', namespace: NS })).rejects.toMatchObject({ code: 404 });
    expect((await h.timeline()).filter((e) => e.kind === 'compensation').map((e) => e.message)[0]).toBe('removed fresh: its first revision failed, there was nothing to roll back to');
  });

  test('cancelling the run that created the endpoint removes it, its ReplicaSets, pods and Service', async () => {
    const h = await launch('fresh-cancel', 'ok', { endpoint: 'fresh2', bootMs: 60_000 });
    await waitFor('the pod', async () => (await clients.core.listNamespacedPod({ namespace: NS, labelSelector: 'tandem.dev/deployment=fresh2' })).items.length > 0 || undefined, 60_000, 50);
    await h.cancel();
    await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    await expect(readDeployment('fresh2')).rejects.toMatchObject({ code: 404 });
    await expect(clients.core.readNamespacedService({ name: 'fresh2', namespace: NS })).rejects.toMatchObject({ code: 404 });
    await waitFor('the pods gone', async () => (await clients.core.listNamespacedPod({ namespace: NS, labelSelector: 'tandem.dev/deployment=fresh2' })).items.length === 0 || undefined, 10_000, 50);
    expect(await replicaSets('fresh2')).toEqual([]);
  });
});

describe('what a pod can load', () => {
  const serving = () => new KubernetesServingBackend({ clients, serviceType: 'LoadBalancer' });
  test('a checkpoint outside the claim, or with no claim and no model id, is refused naming the field, before any request', async () => {
    const before = cluster.api.requests.length;
    const req = { name: 'nowhere', pipeline: 'p', tenant: 't', run: 'r', model: 'm', checkpoint: '/var/tmp/worker/step-1', field: 'stages.deploy.kubernetes' };
    await expect(serving().apply(req)).rejects.toThrow(KubernetesOptionsError);
    await expect(serving().apply(req)).rejects.toThrow(/stages\.deploy\.kubernetes\.modelVolume: is required: the checkpoint \/var\/tmp\/worker\/step-1 is on the worker's disk/);
    await expect(serving().apply({ ...req, kubernetes: { modelVolume: { claimName: 'c', workerPath: '/srv/shared' } } })).rejects.toThrow(/stages\.deploy\.kubernetes\.modelVolume\.workerPath: the checkpoint \/var\/tmp\/worker\/step-1 is not under \/srv\/shared/);
    await expect(serving().apply({ ...req, kubernetes: { securityContext: { privileged: true }, vllm: { model: 'org/model' } } })).rejects.toThrow(/stages\.deploy\.kubernetes\.securityContext\.privileged: privileged pods are not allowed/);
    expect(cluster.api.requests.slice(before)).toEqual([]);
  });

  test('a Hugging Face model id needs no volume; vLLM downloads it into --download-dir', async () => {
    const rev = await serving().apply({ name: 'hf', pipeline: 'p', tenant: 't', run: 'r', model: 'tiny', checkpoint: '/var/tmp/worker/step-1', kubernetes: { vllm: { model: 'Qwen/Qwen2.5-0.5B-Instruct', downloadDir: '/cache' } } });
    const d = await readDeployment('hf');
    expect(d.spec!.template.spec!.containers[0]!.args!.slice(0, 2)).toEqual(['--model', 'Qwen/Qwen2.5-0.5B-Instruct']);
    expect(d.spec!.template.spec!.volumes).toEqual([{ name: 'model-cache', emptyDir: {} }]);
    expect(rev).toMatchObject({ created: true, adopted: false });
    await serving().teardown(NS, 'hf');
  });
});
