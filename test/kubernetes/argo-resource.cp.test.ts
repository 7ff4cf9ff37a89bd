// [real control plane] Argo `resource` templates through the Kubernetes backend
// (backends/kubernetes/resources.ts) on a real kube-apiserver (control-plane.ts), via the real
// client-node (API discovery, POST/GET/PUT/DELETE): create with generateName, apply (create, then
// merge), patch, get, delete, output parameters from jsonPath and jqFilter, success/failure
// conditions on Jobs run by the real Job controller (kwok ends their pods, kwok-stages.ts), the
// apiserver's own 422 — and Argo's own k8s-jobs example unchanged.
import { join } from 'node:path';
import { ArgoClient, prepare } from '../../argo/client.js';
import { KubernetesResources } from '../../backends/kubernetes/resources.js';
import { startArgoHarness } from '../argo/harness.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';

let cp: ControlPlane;
let client: ArgoClient;
let stop: () => Promise<void>;

beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'node-1' }] });
  const kubernetes = new KubernetesResources(cp.clients());
  ({ client, stop } = await startArgoHarness('argo-res-cp', { kubernetes }));
}, 120_000);
afterAll(async () => {
  await stop?.();
  await cp?.stop();
});

const configMaps = async () => (await cp.clients().core.listNamespacedConfigMap({ namespace: cp.namespace })).items.filter((c) => c.metadata!.name !== 'kube-root-ca.crt');

test('create, apply, patch, get and delete ConfigMaps; outputs from jsonPath and jqFilter', async () => {
  const { id } = await client.submit(
    prepare('res.yaml', {
      text: `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: res-}
spec:
  entrypoint: main
  arguments: {parameters: [{name: greeting, value: hello}]}
  templates:
  - name: main
    steps:
    - - {name: create, template: create}
      - {name: apply, template: apply}
    - - {name: patch, template: patch}
    - - {name: get, template: get}
      - {name: gone, template: delete, arguments: {parameters: [{name: cm, value: "{{steps.create.outputs.parameters.name}}"}]}}
  - name: create
    resource:
      action: create
      manifest: |
        apiVersion: v1
        kind: ConfigMap
        metadata: {generateName: made-}
        data: {greeting: "{{workflow.parameters.greeting}}"}
    outputs:
      parameters:
      - {name: name, valueFrom: {jsonPath: '{.metadata.name}'}}
      - {name: greeting, valueFrom: {jqFilter: '.data.greeting'}}
  - name: apply
    resource:
      action: apply
      manifest: |
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings, labels: {app: demo}}
        data: {a: "1"}
  - name: patch
    resource:
      action: patch
      mergeStrategy: merge
      manifest: |
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings}
        data: {b: "2"}
  - name: get
    resource:
      action: get
      manifest: |
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings}
    outputs:
      parameters:
      - {name: data, valueFrom: {jqFilter: '.data'}}
      - {name: app, valueFrom: {jsonPath: '{.metadata.labels.app}'}}
  - name: delete
    inputs: {parameters: [{name: cm}]}
    resource:
      action: delete
      manifest: |
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "{{inputs.parameters.cm}}"}
`,
    }),
  );
  const st = await client.wait(id);
  expect(st.phase).toBe('Succeeded');
  const node = (n: string) => Object.values(st.nodes).find((x) => x.displayName === n)!;
  const made = node('create').outputs!.parameters;
  expect(made.name).toMatch(/^made-[a-z0-9]{5}$/);
  expect(made.greeting).toBe('hello');
  expect(node('create').jobName).toBe(`configmap/${made.name}`);
  expect(JSON.parse(node('get').outputs!.parameters.data!)).toEqual({ a: '1', b: '2' });
  expect(node('get').outputs!.parameters.app).toBe('demo');
  // On the API server: the generated one is deleted again, `settings` has the merged data.
  const left = await configMaps();
  expect(left.map((c) => c.metadata!.name)).toEqual(['settings']);
  expect(left[0]!.data).toEqual({ a: '1', b: '2' });
});

test("a Job's successCondition waits for its pods; a failureCondition fails the node; a refused manifest fails it", async () => {
  const { id } = await client.submit(
    prepare('jobs.yaml', {
      text: `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: res-jobs-}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: ok, template: job, arguments: {parameters: [{name: codes, value: "0"}]}}
      - {name: bad, template: job, arguments: {parameters: [{name: codes, value: "1"}]}}
      - {name: invalid, template: invalid}
      - {name: after, template: job, depends: "ok && (bad.Failed) && (invalid.Failed)", arguments: {parameters: [{name: codes, value: "0"}]}}
  - name: job
    inputs: {parameters: [{name: codes}]}
    resource:
      action: create
      successCondition: status.succeeded > 0
      failureCondition: status.failed > 0
      manifest: |
        apiVersion: batch/v1
        kind: Job
        metadata: {generateName: work-}
        spec:
          backoffLimit: 0
          template:
            metadata: {annotations: {kwok.tandem.dev/exit-codes: "{{inputs.parameters.codes}}", kwok.tandem.dev/run: "300ms"}}
            spec:
              restartPolicy: Never
              containers: [{name: main, image: alpine, command: [sh, -c, "true"]}]
    outputs:
      parameters:
      - {name: succeeded, valueFrom: {jsonPath: '{.status.succeeded}'}}
  - name: invalid
    resource:
      action: create
      manifest: |
        apiVersion: batch/v1
        kind: Job
        metadata: {name: no-containers}
        spec: {template: {spec: {restartPolicy: Never, containers: []}}}
`,
    }),
  );
  const st = await client.wait(id);
  const node = (n: string) => Object.values(st.nodes).find((x) => x.displayName === n)!;
  expect(node('ok')).toMatchObject({ phase: 'Succeeded', outputs: { parameters: { succeeded: '1' } } });
  expect(node('bad')).toMatchObject({ phase: 'Failed', message: expect.stringMatching(/failure condition 'status.failed > 0' met for Job work-/) });
  expect(node('invalid')).toMatchObject({ phase: 'Failed', message: expect.stringMatching(/422 Invalid.*spec.template.spec.containers/) });
  expect(node('after').phase).toBe('Succeeded');
  expect(st.phase).toBe('Succeeded');
});

test("Argo's k8s-jobs example runs unchanged: three completions, outputs from jsonPath and jq", async () => {
  const { id } = await client.submit(prepare(join('/work/shared/data/argo-examples', 'k8s-jobs.yaml')));
  const st = await client.wait(id);
  expect(st.phase).toBe('Succeeded');
  const out = Object.values(st.nodes)[0]!.outputs!.parameters;
  expect(out['job-name']).toMatch(/^rand-num-/);
  const job = JSON.parse(out['job-obj']!) as { status: { succeeded: number } };
  expect(job.status.succeeded).toBe(3);
});
