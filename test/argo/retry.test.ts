// Retrying an Argo run: successful nodes are reused (not re-run), failed ones run again; with
// --restart-successful the selected DAG node runs again with its dependencies and what follows it.
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ArgoClient, prepare } from '../../argo/client.js';
import { parseSelector, planRetry } from '../../argo/retry.js';
import { tempDir } from '../helpers.js';
import { startArgoHarness } from './harness.js';

let client: ArgoClient;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ client, stop } = await startArgoHarness('argo-retry'));
});
afterAll(() => stop?.());

const dagYaml = (dir: string) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: retry-dag-}
spec:
  entrypoint: main
  arguments: {parameters: [{name: dir, value: "${dir}"}]}
  # Pods have their own filesystems: the run counters live in a host directory mounted into them.
  volumes: [{name: counters, hostPath: {path: "${dir}"}}]
  templates:
  - name: main
    dag:
      tasks:
      - {name: prep, template: count, arguments: {parameters: [{name: id, value: prep}]}}
      - {name: train, template: count, depends: prep, arguments: {parameters: [{name: id, value: train}]}}
      - {name: other, template: count, arguments: {parameters: [{name: id, value: other}]}}
      - {name: deploy, template: flaky, depends: "train && other", arguments: {parameters: [{name: model, value: "{{tasks.train.outputs.result}}"}]}}
  - name: count
    inputs: {parameters: [{name: id}]}
    script:
      image: alpine
      command: [sh]
      volumeMounts: [{name: counters, mountPath: "${dir}"}]
      source: |
        echo run >> "{{workflow.parameters.dir}}/{{inputs.parameters.id}}"
        echo "{{inputs.parameters.id}}-$(wc -l < "{{workflow.parameters.dir}}/{{inputs.parameters.id}}" | tr -d ' ')"
  - name: flaky
    inputs: {parameters: [{name: model}]}
    script:
      image: alpine
      command: [sh]
      volumeMounts: [{name: counters, mountPath: "${dir}"}]
      source: |
        echo "{{inputs.parameters.model}}" >> "{{workflow.parameters.dir}}/deploy"
        [ -f "{{workflow.parameters.dir}}/ok" ] || { touch "{{workflow.parameters.dir}}/ok"; exit 1; }
        echo deployed
`;

const runs = (dir: string, id: string) => (existsSync(join(dir, id)) ? readFileSync(join(dir, id), 'utf8').trim().split('\n') : []);

test('retry re-runs only the failed node; --restart-successful re-runs the selected node, its upstream and downstream', async () => {
  const dir = tempDir('argo-retry');
  const { id } = await client.submit(prepare('retry.yaml', { text: dagYaml(dir) }));
  const first = await client.wait(id);
  expect(first.phase).toBe('Failed');
  expect(['prep', 'train', 'other', 'deploy'].map((t) => runs(dir, t).length)).toEqual([1, 1, 1, 1]);

  const { plan } = await client.retry(id);
  expect(plan.restarted).toEqual([]);
  const second = await client.wait(id);
  expect(second.phase).toBe('Succeeded');
  // Only deploy ran again, and it received train's output reused from the first attempt.
  expect(['prep', 'train', 'other'].map((t) => runs(dir, t).length)).toEqual([1, 1, 1]);
  expect(runs(dir, 'deploy')).toEqual(['train-1', 'train-1']);
  const reusedNodes = Object.values(second.nodes).filter((n) => n.reusedFrom).map((n) => n.displayName).sort();
  expect(reusedNodes).toEqual(['other', 'prep', 'train']);

  await expect(client.retry(id)).rejects.toThrow(/succeeded; nothing failed to retry/);
  const third = await client.retry(id, { restartSuccessful: true, selector: 'displayName=train' });
  expect(third.plan.restarted.map((r) => `${r.name.split('.').pop()}:${r.why}`).sort()).toEqual(['deploy:downstream', 'prep:upstream', 'train:selected']);
  expect((await client.wait(id)).phase).toBe('Succeeded');
  expect(['prep', 'train', 'other'].map((t) => runs(dir, t).length)).toEqual([2, 2, 1]);
  expect(runs(dir, 'deploy').at(-1)).toBe('train-2');
});

test('selectors are validated', () => {
  expect(parseSelector('displayName=train')).toEqual({ key: 'displayName', value: 'train' });
  expect(() => parseSelector('train')).toThrow(/--selector must look like displayName=<node>/);
  const prev = { name: 'w', phase: 'Failed' as const, startedAt: '', entrypoint: 'main', nodes: { w: { id: 'w', name: 'w', displayName: 'w', type: 'DAG' as const, phase: 'Failed' as const, children: [] } } };
  expect(() => planRetry(prev, {}, { restartSuccessful: true, selector: 'displayName=x' })).toThrow(/no successful node matches displayName=x/);
  expect(() => planRetry(prev, {}, { restartSuccessful: true })).toThrow(/needs --selector/);
});
