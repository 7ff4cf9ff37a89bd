// The interpreter at scale (#31, docs/argo-scale.md), on the real Temporal dev server and the local
// target: a loop larger than Temporal's pending-activity limit and a nested DAG run across child
// workflows with at most a bounded number of activities in flight each, and `argo get`'s merged status
// has every node with the right outputs and phase. A small run with tiny budgets (annotations) covers
// the slicing paths (re-split slices, composite calls, globals, outputs) quickly.
import { ArgoClient, prepare } from '../../argo/client.js';
import type { ArgoStatus } from '../../argo/lang/types.js';
import { startArgoHarness } from './harness.js';

let client: ArgoClient;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ client, stop } = await startArgoHarness('argo-scale', { pollInitialMs: 5, pollMaxMs: 50 }));
});
afterAll(() => stop?.());

const run = async (yaml: string): Promise<{ id: string; st: ArgoStatus }> => {
  const { id } = await client.submit(prepare('inline.yaml', { text: yaml }));
  return { id, st: await client.wait(id) };
};

const pods = (st: ArgoStatus) => Object.values(st.nodes).filter((n) => n.type === 'Pod');

/** Every pod's `echo` output by its node name. */
const results = (st: ArgoStatus) => new Map(pods(st).map((n) => [n.name, n.outputs?.result]));

test('a small run with tiny budgets: loops re-split, a composite call and its globals, outputs aggregated', async () => {
  const { st } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: slices-
  annotations: {tandem.io/slice-nodes: "4", tandem.io/max-activities-in-flight: "3"}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: loop, template: echo, withSequence: {count: "25"}, arguments: {parameters: [{name: msg, value: "n{{item}}"}]}}
    - - {name: grid, template: rows}
    - - {name: last, template: echo, arguments: {parameters: [{name: msg, value: "{{steps.loop.outputs.result}}|{{workflow.outputs.parameters.g}}"}]}}
  - name: rows
    dag:
      tasks:
      - {name: r, template: row, withItems: [a, b, c], arguments: {parameters: [{name: x, value: "{{item}}"}]}}
      - {name: mark, template: setg, depends: r}
  - name: row
    inputs: {parameters: [{name: x}]}
    dag:
      tasks:
      - {name: c, template: echo, withSequence: {count: "3"}, arguments: {parameters: [{name: msg, value: "{{inputs.parameters.x}}{{item}}"}]}}
  - name: setg
    script: {image: alpine, command: [sh], source: "echo G > g.txt"}
    outputs: {parameters: [{name: g, globalName: g, valueFrom: {path: g.txt}}]}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.msg}}"'}
`);
  expect(st.phase).toBe('Succeeded');
  expect(st.slices!.length).toBeGreaterThan(7); // 25 items in slices of 4 and the rows DAG's children
  const r = results(st);
  for (let i = 0; i < 25; i++) expect(r.get(`${st.name}[0].loop(${i}:${i})`)).toBe(`n${i}`);
  for (const [x, xi] of [['a', 0], ['b', 1], ['c', 2]] as const) for (let j = 0; j < 3; j++) expect(r.get(`${st.name}[1].grid.r(${xi}:${x}).c(${j}:${j})`)).toBe(`${x}${j}`);
  const last = pods(st).find((n) => n.displayName === 'last')!;
  // The loop's aggregate in item order (the shell's echo drops its quotes) and the child's global output.
  expect(last.outputs?.result).toBe(`[${Array.from({ length: 25 }, (_, i) => `n${i}`).join(',')}]|G`);
  // Every node is linked under its parent, and the tree reaches every pod from the root.
  const reach = new Set<string>();
  const walk = (id: string) => {
    reach.add(id);
    st.nodes[id]!.children.forEach(walk);
  };
  walk(st.name);
  expect(reach.size).toBe(Object.keys(st.nodes).length);
  expect(pods(st)).toHaveLength(25 + 9 + 1 + 1);
}, 120_000);

test('a 5,000-item loop completes: every item ran once with its output, the aggregate in order', async () => {
  const n = 5000;
  const { st } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: loop5k-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: loop, template: echo, withSequence: {count: "${n}"}}
    - - {name: sum, template: count, arguments: {parameters: [{name: all, value: "{{steps.loop.outputs.result}}"}]}}
  - name: echo
    container: {image: alpine, command: [sh, -c, "echo {{item}}"]}
  - name: count
    inputs: {parameters: [{name: all}]}
    script: {image: alpine, command: [sh], source: "printf '%s' '{{inputs.parameters.all}}' | tr -cd , | wc -c"}
`);
  expect(st.phase).toBe('Succeeded');
  const r = results(st);
  for (let i = 0; i < n; i++) expect(r.get(`${st.name}[0].loop(${i}:${i})`)).toBe(String(i));
  expect(pods(st).find((p) => p.displayName === 'sum')?.outputs?.result?.trim()).toBe(String(n - 1));
  expect(st.slices!.length).toBeGreaterThanOrEqual(5);
}, 900_000);

test('a 30 × 30 nested DAG completes with every leaf Succeeded and its output', async () => {
  const tasks = (tmpl: string) => Array.from({ length: 30 }, (_, i) => `      - {name: t${i}, template: ${tmpl}, arguments: {parameters: [{name: x, value: "${i}"}]}}`).join('\n');
  const { st } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: dag30-}
spec:
  entrypoint: outer
  templates:
  - name: outer
    dag:
      tasks:
${tasks('inner')}
  - name: inner
    inputs: {parameters: [{name: x}]}
    dag:
      tasks:
${tasks('leaf').replace(/value: "(\d+)"/g, 'value: "{{inputs.parameters.x}}-$1"')}
  - name: leaf
    inputs: {parameters: [{name: x}]}
    container: {image: alpine, command: [sh, -c, "echo {{inputs.parameters.x}}"]}
`);
  expect(st.phase).toBe('Succeeded');
  const leaves = pods(st);
  expect(leaves).toHaveLength(900);
  expect(leaves.every((p) => p.phase === 'Succeeded')).toBe(true);
  const r = results(st);
  for (let i = 0; i < 30; i++) for (let j = 0; j < 30; j++) expect(r.get(`${st.name}.t${i}.t${j}`)).toBe(`${i}-${j}`);
}, 900_000);
