// hybridPipeline end to end with its deploy stage on Kubernetes: local preprocess and training, then
// a vLLM Deployment on the fake API server (through the real client), gated and rolled back for real.
import { WorkflowFailedError } from '@temporalio/client';
import { LocalServingBackend } from '../../backends/local-serving.js';
import { spec, startWorker, tempDir, uniqueQueue } from '../helpers.js';
import { startFakeCluster, type FakeCluster } from './fake/cluster.js';

let cluster: FakeCluster;
let w: Awaited<ReturnType<typeof startWorker>>;
const home = tempDir('k8s-pipeline');

beforeAll(async () => {
  cluster = await startFakeCluster({ secondMs: 100 });
  // The worker finds the cluster the way a real one does: KUBECONFIG; the LB address reaches the model.
  Object.assign(process.env, { KUBECONFIG: cluster.writeKubeconfig(tempDir('kubeconfig')), TANDEM_K8S_SERVICE_TYPE: 'LoadBalancer', TANDEM_K8S_NAMESPACE: cluster.namespace });
  w = await startWorker({ taskQueue: uniqueQueue('k8s-pipeline'), home });
  for (const k of ['KUBECONFIG', 'TANDEM_K8S_SERVICE_TYPE', 'TANDEM_K8S_NAMESPACE']) delete process.env[k];
});
afterAll(async () => {
  await w?.stop();
  await cluster?.close();
});

const deployOn = (behaviour: string, readinessTimeout = '20s') => ({
  runtime: 'kubernetes' as const,
  model: 'tandem/sentiment',
  readinessTimeout,
  // The pods read the checkpoint from the worker's home, shared with them through a claim.
  kubernetes: { annotations: { 'fake.tandem.dev/vllm': behaviour, 'fake.tandem.dev/boot-ms': '150' }, modelVolume: { claimName: 'tandem-home', workerPath: home }, vllm: { progressDeadlineSeconds: 30 } },
});

test('trains locally and serves on Kubernetes behind the readiness gates', async () => {
  const h = await w.tandem.launch(spec({ stages: { train: { steps: 20, checkpointEvery: 10 }, deploy: deployOn('ok') } }), { id: 'k8s-pipe-ok', tuning: { pollMaxMs: 300 } });
  const result = await h.result();
  expect(result).toMatchObject({ model: 'tandem/sentiment', checkpoint: { step: 20 } });
  expect(result.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(result.completion.length).toBeGreaterThan(0);
  const deployments = cluster.api.store.list('deployments', cluster.namespace);
  expect(deployments.map((d) => d.metadata?.name)).toEqual(['test']); // the pipeline's endpoint, not the run's
  expect(new LocalServingBackend(home).list()).toEqual([]); // nothing served locally
  const st = await h.status();
  expect(st.stages.deploy).toMatchObject({ status: 'completed', runtime: 'kubernetes' });
});

test('a next run whose model fails the /v1/models gate is rolled back to the first run\'s revision; the pipeline fails naming the gate', async () => {
  const h = await w.tandem.launch(spec({ stages: { train: { steps: 20, checkpointEvery: 10 }, deploy: deployOn('wrong-model', '4s') } }), { id: 'k8s-pipe-bad', tuning: { pollMaxMs: 300 } });
  const err = (await h.result().catch((e: unknown) => e)) as WorkflowFailedError;
  expect(err).toBeInstanceOf(WorkflowFailedError);
  expect(err.cause?.message).toMatch(/stage deploy failed: .*gate "models"/);
  const tl = await h.timeline();
  expect(tl.filter((e) => e.kind === 'compensation').map((e) => e.message)).toEqual(['rolled back test to revision 1, which served before', expect.stringMatching(/^withdraw checkpoint step 20/)]);
  const [d] = cluster.api.store.list('deployments', cluster.namespace);
  expect((d!.spec as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata.annotations['tandem.dev/run']).toBe('k8s-pipe-ok');
});
