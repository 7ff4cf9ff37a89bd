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

/** The phase, and the first failed nodes' messages when it is not Succeeded (what to look at). */
const outcome = (st: ArgoStatus) => ({
  phase: st.phase,
  failed: Object.values(st.nodes)
    .filter((n) => n.phase === 'Failed' || n.phase === 'Error')
    .slice(0, 3)
    .map((n) => `${n.name}: ${n.message}`),
});
const succeeded = { phase: 'Succeeded', failed: [] };

const pods = (st: ArgoStatus) => Object.values(st.nodes).filter((n) => n.type === 'Pod');

/** Every pod's `echo` output by its node name. */
const results = (st: ArgoStatus) => new Map(pods(st).map((n) => [n.name, n.outputs?.result]));

test('a small run with tiny budgets: loops re-split, a composite call and its globals, outputs aggregated', async () => {
  const { id, st } = await run(`apiVersion: argoproj.io/v1alpha1
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
  expect(outcome(st)).toEqual(succeeded);
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
  // The loop's items under their step group in item order, though their slices ended in any order.
  const group = Object.values(st.nodes).find((n) => n.name === `${st.name}[0]`)!;
  expect(group.children.map((c) => st.nodes[c]!.name)).toEqual(Array.from({ length: 25 }, (_, i) => `${st.name}[0].loop(${i}:${i})`));
  expect(pods(st)).toHaveLength(25 + 9 + 1 + 1);
  // The run's own result does not list its children's nodes (readers link them by parentId): at
  // 50,000 items those ids alone were 1.1 MB of a result Temporal caps at 2 MB.
  const own = (await client.handle(id).result()) as ArgoStatus;
  const ownGroup = Object.values(own.nodes).find((n) => n.name === `${st.name}[0]`)!;
  expect(ownGroup.children).toEqual([]);
  expect(Object.values(own.nodes).some((n) => n.name.includes('.loop('))).toBe(false);
}, 120_000);

test('a workflow runs at most 8 children at once, composite calls and loops together (a DAG of 12 composite tasks)', async () => {
  const tasks = Array.from({ length: 12 }, (_, i) => `      - {name: t${i}, template: inner, arguments: {parameters: [{name: x, value: "${i}"}]}}`).join('\n');
  const { st } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: gate-
  annotations: {tandem.io/slice-nodes: "2"}
spec:
  entrypoint: outer
  templates:
  - name: outer
    dag:
      tasks:
${tasks}
  - name: inner
    inputs: {parameters: [{name: x}]}
    dag:
      tasks:
      - {name: a, template: leaf, arguments: {parameters: [{name: x, value: "{{inputs.parameters.x}}a"}]}}
      - {name: b, template: leaf, arguments: {parameters: [{name: x, value: "{{inputs.parameters.x}}b"}]}}
      - {name: c, template: leaf, arguments: {parameters: [{name: x, value: "{{inputs.parameters.x}}c"}]}}
  - name: leaf
    inputs: {parameters: [{name: x}]}
    script: {image: alpine, command: [sh], source: 'sleep 2; echo {{inputs.parameters.x}}'}
`);
  expect(outcome(st)).toEqual(succeeded);
  const r = results(st);
  for (let i = 0; i < 12; i++) for (const x of 'abc') expect(r.get(`${st.name}.t${i}.${x}`)).toBe(`${i}${x}`);
  // The run's own children (one per inner call: weight 3 over a budget of 2), and when each ran.
  const own = st.slices!.filter((id) => /--f\d+$/.test(id));
  expect(own).toHaveLength(12);
  const spans = await Promise.all(own.map(async (id) => client.client.workflow.getHandle(id).describe()));
  const edges = spans.flatMap((d) => [{ t: d.startTime.getTime(), d: 1 }, { t: d.closeTime!.getTime(), d: -1 }]).sort((a, b) => a.t - b.t || a.d - b.d);
  let live = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (live += e.d));
  expect(most).toBe(8); // all 12 start together without the bound; with it, 8, then the rest as they end
}, 300_000);

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
    - - {name: loop, template: echo, withSequence: {count: "${n}"}, arguments: {parameters: [{name: x, value: "{{item}}"}]}}
    - - {name: sum, template: count, arguments: {parameters: [{name: all, value: "{{steps.loop.outputs.result}}"}]}}
  - name: echo
    inputs: {parameters: [{name: x}]}
    container: {image: alpine, command: [sh, -c, "echo {{inputs.parameters.x}}"]}
  - name: count
    inputs: {parameters: [{name: all}]}
    script: {image: alpine, command: [sh], source: "printf '%s' '{{inputs.parameters.all}}' | tr -cd , | wc -c"}
`);
  expect(outcome(st)).toEqual(succeeded);
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
  expect(outcome(st)).toEqual(succeeded);
  const leaves = pods(st);
  expect(leaves).toHaveLength(900);
  expect(leaves.every((p) => p.phase === 'Succeeded')).toBe(true);
  const r = results(st);
  for (let i = 0; i < 30; i++) for (let j = 0; j < 30; j++) expect(r.get(`${st.name}.t${i}.t${j}`)).toBe(`${i}-${j}`);
}, 900_000);
