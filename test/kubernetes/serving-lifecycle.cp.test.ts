// [real control plane] The serving lifecycle on a real kube-apiserver, Deployment and ReplicaSet
// controllers and scheduler, with kwok as the kubelets (control-plane.ts): one endpoint per pipeline,
// a revision per run; a revision whose pods never become Ready stalls, passes its progress deadline
// and is rolled back — and throughout, watched on the apiserver, the previous revision's ReplicaSet
// never had fewer than its replicas (desired or ready), and every request was answered by it. The
// gates and the requests go to the load-balancer stand-in on 127.0.0.1 (load-balancer.ts), whose
// pods answer with the vLLM stand-in (fake/vllm.ts): never a pod IP.
import { WorkflowFailedError } from '@temporalio/client';
import { Watch, type V1ReplicaSet } from '@kubernetes/client-node';
import type { KubeClients } from '../../backends/kubernetes/client.js';
import type { PipelineSpecInput } from '../../contract/pipeline.js';
import { spec, startWorker, tempDir, uniqueQueue, waitFor } from '../helpers.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { KWOK_ANNOTATIONS } from './kwok-stages.js';
import { startLoadBalancer, type LoadBalancer } from './load-balancer.js';

let cp: ControlPlane;
let lb: LoadBalancer;
let clients: KubeClients;
let w: Awaited<ReturnType<typeof startWorker>>;
const home = tempDir('k8s-cp-serving');
const NS = 'tandem';
const ENV = ['KUBECONFIG', 'TANDEM_K8S_SERVICE_TYPE', 'TANDEM_K8S_NAMESPACE'];

beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'gpu-node-1', gpus: 8, cpu: '32', memory: '256Gi' }] });
  clients = cp.clients();
  // The shared filesystem the worker writes checkpoints to, as a claim the pods mount read-only: a
  // statically bound PersistentVolume (nothing mounts it: kwok runs no containers).
  await cp.createClaim('tandem-home', NS);
  lb = await startLoadBalancer(cp);
  Object.assign(process.env, { KUBECONFIG: cp.kubeconfigPath, TANDEM_K8S_SERVICE_TYPE: 'LoadBalancer', TANDEM_K8S_NAMESPACE: cp.namespace });
  try {
    w = await startWorker({ taskQueue: uniqueQueue('k8s-cp-serving'), home });
  } finally {
    for (const k of ENV) delete process.env[k];
  }
}, 120_000);
afterAll(async () => {
  await w?.stop();
  await lb?.stop();
  await cp?.stop();
});

function run(id: string, o: { bootMs?: number; progressDeadlineSeconds?: number } = {}) {
  const stages: PipelineSpecInput['stages'] = {
    train: { steps: 10, checkpointEvery: 10 },
    deploy: {
      runtime: 'kubernetes',
      model: 'tandem/chat',
      readinessTimeout: '20s',
      kubernetes: {
        annotations: { [KWOK_ANNOTATIONS.vllm]: 'ok', [KWOK_ANNOTATIONS.boot]: `${o.bootMs ?? 300}ms` },
        modelVolume: { claimName: 'tandem-home', workerPath: home },
        vllm: { progressDeadlineSeconds: o.progressDeadlineSeconds ?? 60 },
      },
    },
  };
  return w.tandem.launch(spec({ name: 'chat', stages }), { id, tuning: { pollMaxMs: 300 } });
}

const runOf = (rs: V1ReplicaSet) => rs.spec?.template?.metadata?.annotations?.['tandem.dev/run'];

async function ask(endpoint: string): Promise<string> {
  const r = await fetch(`${endpoint}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tandem/chat', prompt: 'hi', max_tokens: 8 }) });
  return ((await r.json()) as { choices: { text: string }[] }).choices[0]!.text;
}

test('a failed rollout is rolled back; the previous ReplicaSet never scaled below its replicas and kept serving', async () => {
  const v1 = await (await run('cp-serve-v1')).result();
  expect(v1.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(await ask(v1.endpoint)).toContain('/runs/cp-serve-v1/');

  // Every ReplicaSet event the apiserver sends from here on.
  const events: { type: string; run?: string; replicas: number; ready: number }[] = [];
  const watching = await new Watch(cp.kubeConfig()).watch(`/apis/apps/v1/namespaces/${NS}/replicasets`, {}, (type: string, rs: V1ReplicaSet) => {
    events.push({ type, run: runOf(rs), replicas: rs.spec?.replicas ?? 0, ready: rs.status?.readyReplicas ?? 0 });
  }, () => undefined);
  // A revision whose pods take 10 minutes to become Ready: it passes its 10 s progress deadline.
  const h = await run('cp-serve-v2-stalls', { bootMs: 600_000, progressDeadlineSeconds: 10 });
  const answers: string[] = [];
  const asking = (async () => {
    while (!(await h.workflow.describe()).closeTime) {
      answers.push(await ask(v1.endpoint));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const err = (await h.result().catch((e: unknown) => e)) as WorkflowFailedError;
  await asking;
  await new Promise((r) => setTimeout(r, 500)); // the last events of the rollback
  watching.abort();

  expect(err).toBeInstanceOf(WorkflowFailedError);
  expect(err.cause?.message).toMatch(/stage deploy failed: .*progress deadline/);
  expect(events.some((e) => e.run === 'cp-serve-v2-stalls' && e.replicas === 1)).toBe(true); // the new revision was tried
  const previous = events.filter((e) => e.run === 'cp-serve-v1');
  expect(previous.length).toBeGreaterThan(0);
  expect(previous.filter((e) => e.type === 'DELETED')).toEqual([]);
  expect(Math.min(...previous.map((e) => e.replicas))).toBe(1);
  expect(Math.min(...previous.map((e) => e.ready))).toBe(1);
  expect(answers.length).toBeGreaterThan(10);
  expect(answers.filter((a) => !a.includes('/runs/cp-serve-v1/'))).toEqual([]);

  const d = await clients.apps.readNamespacedDeployment({ name: 'chat', namespace: NS });
  expect(d.spec!.template.metadata!.annotations!['tandem.dev/run']).toBe('cp-serve-v1');
  expect((await h.timeline()).filter((e) => e.kind === 'compensation').map((e) => e.message)).toContain('rolled back chat to revision 1, which served before');
  await waitFor('the stalled revision scaled to 0', async () => {
    const sets = (await clients.apps.listNamespacedReplicaSet({ namespace: NS, labelSelector: 'tandem.dev/deployment=chat' })).items;
    return sets.find((rs) => runOf(rs) === 'cp-serve-v2-stalls')?.spec?.replicas === 0 || undefined;
  }, 30_000, 200);
  expect((await clients.apps.listNamespacedDeployment({ namespace: NS })).items.map((x) => x.metadata!.name)).toEqual(['chat']);
});
