// [fake] Argo templates annotated for Kubernetes run as Jobs on the fake API server (fake/) through the
// real client; the pod's log becomes the step's result. On the fake because the real control plane's
// kwok serves no kubelet API, so it has no pod logs (see test/kubernetes/README.md).
import { ArgoClient, prepare } from '../../argo/client.js';
import { kubeName } from '../../activities/argo/kubernetes.js';
import { address, startWorker, tempDir, uniqueQueue } from '../helpers.js';
import { startFakeCluster, type FakeCluster } from './fake/cluster.js';

let cluster: FakeCluster;
let w: Awaited<ReturnType<typeof startWorker>>;
let argo: ArgoClient;

beforeAll(async () => {
  cluster = await startFakeCluster({ secondMs: 100 });
  Object.assign(process.env, { KUBECONFIG: cluster.writeKubeconfig(tempDir('kubeconfig')), TANDEM_K8S_NAMESPACE: cluster.namespace });
  const taskQueue = uniqueQueue('argo-k8s');
  w = await startWorker({ taskQueue, home: tempDir('argo-k8s') });
  for (const k of ['KUBECONFIG', 'TANDEM_K8S_NAMESPACE']) delete process.env[k];
  argo = await ArgoClient.connect({ address: address(), taskQueue });
});
afterAll(async () => {
  await argo?.close();
  await w?.stop();
  await cluster?.close();
});

const workflow = (exitCodes: string) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: k8s-step-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: pod, template: pod}
    - - {name: after, template: echo, arguments: {parameters: [{name: msg, value: "{{steps.pod.outputs.result}}"}]}}
  - name: pod
    metadata:
      annotations: {tandem.io/target: kubernetes, fake.tandem.dev/log: "hello from the pod", fake.tandem.dev/exit-codes: "${exitCodes}"}
    container: {image: alpine:3.20, command: [sh, -c], args: ["echo hello from the pod"]}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "got: {{inputs.parameters.msg}}"'}
`;

test('a container template annotated for Kubernetes runs as a Job; its log is the result', async () => {
  const { id } = await argo.submit(prepare('k8s.yaml', { text: workflow('0') }));
  const st = await argo.wait(id);
  expect(st.phase).toBe('Succeeded');
  const pod = Object.values(st.nodes).find((n) => n.displayName === 'pod')!;
  expect(pod.target).toMatch(new RegExp(`^kubernetes:${cluster.namespace}/argo-`));
  const job = cluster.api.store.list('jobs', cluster.namespace).find((j) => pod.target!.endsWith(`/${j.metadata.name}`))!;
  expect((job as unknown as { spec: { template: { spec: { containers: { image: string; command: string[] }[] } } } }).spec.template.spec.containers[0]).toMatchObject({ image: 'alpine:3.20', command: ['sh', '-c', 'echo hello from the pod'] });
  expect(Object.values(st.nodes).find((n) => n.displayName === 'after')!.outputs?.result).toBe('got: hello from the pod');
});

test('a failing pod fails its node and the workflow', async () => {
  const { id } = await argo.submit(prepare('k8s.yaml', { text: workflow('3') }));
  const st = await argo.wait(id);
  expect(st.phase).toBe('Failed');
  expect(Object.values(st.nodes).find((n) => n.displayName === 'pod')).toMatchObject({ phase: 'Failed', message: expect.stringMatching(/container exited 3/) });
});

test('job names fit Kubernetes', () => {
  expect(kubeName('argo-wf.step-1-0-abcd')).toBe('argo-wf-step-1-0-abcd');
  const long = kubeName(`argo-${'x'.repeat(100)}`);
  expect(long).toHaveLength(63);
  expect(long).toMatch(/^argo-x+-[0-9a-f]{8}$/);
});
