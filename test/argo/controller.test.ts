// What Argo's controller does that the interpreter must match, on the real Temporal dev server with
// real shell commands through the local target: parallelism (template and workflow level) never
// exceeded, a loop's aggregated `outputs.parameters`, `{{outputs.*.<n>.path}}`, a template's
// failFast, and daemons stopped with the steps template they run in.
import { join } from 'node:path';
import { ArgoClient, prepare } from '../../argo/client.js';
import type { ArgoNode, ArgoStatus } from '../../argo/lang/types.js';
import { tempDir } from '../helpers.js';
import { startArgoHarness } from './harness.js';

let client: ArgoClient;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ client, stop } = await startArgoHarness('argo-controller'));
});
afterAll(() => stop?.());

const runToEnd = async (yaml: string): Promise<ArgoStatus> => {
  const { id } = await client.submit(prepare('controller.yaml', { text: yaml }));
  return client.wait(id);
};
const byDisplay = (st: ArgoStatus) => Object.fromEntries(Object.values(st.nodes).map((n) => [n.displayName, n]));

/** The most nodes running at one instant, from their startedAt/finishedAt (a start at another's finish does not overlap). */
function maxConcurrent(nodes: ArgoNode[]): number {
  const events = nodes.flatMap((n) => [
    { t: Date.parse(n.startedAt!), d: 1 },
    { t: Date.parse(n.finishedAt!), d: -1 },
  ]);
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  let cur = 0;
  let max = 0;
  for (const e of events) max = Math.max(max, (cur += e.d));
  return max;
}

const pods = (st: ArgoStatus, prefix: string) => Object.values(st.nodes).filter((n) => n.type === 'Pod' && n.displayName.startsWith(prefix));

// Ten items of one second each at parallelism 2: from the nodes' start and finish times, never more
// than two run at once, whether the limit is the template's (a steps loop) or the workflow's (a DAG).
const PARALLEL = {
  template: `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: par-tmpl-}
spec:
  entrypoint: main
  templates:
  - name: main
    parallelism: 2
    steps:
    - - {name: work, template: nap, withSequence: {count: "10"}}
  - name: nap
    container: {image: alpine, command: [sh, -c, "sleep 1"]}
`,
  workflow: `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: par-wf-}
spec:
  entrypoint: main
  parallelism: 2
  templates:
  - name: main
    dag:
      tasks:
      - {name: work, template: nap, withSequence: {count: "10"}}
  - name: nap
    container: {image: alpine, command: [sh, -c, "sleep 1"]}
`,
};

test.each(Object.keys(PARALLEL) as (keyof typeof PARALLEL)[])('%s parallelism 2: ten pods never run more than two at once', async (level) => {
  const st = await runToEnd(PARALLEL[level]);
  expect(st.phase).toBe('Succeeded');
  const items = pods(st, 'work(');
  expect(items).toHaveLength(10);
  expect(maxConcurrent(items)).toBe(2);
});

test("a loop's outputs.parameters is Argo's JSON list of per-item maps, and withParam iterates it", async () => {
  const st = await runToEnd(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: loop-out-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: gen, template: emit, withItems: [a, b, c], arguments: {parameters: [{name: x, value: "{{item}}"}]}}
    - - {name: use, template: show, withParam: "{{steps.gen.outputs.parameters}}", arguments: {parameters: [{name: v, value: "{{item.out}}"}]}}
    outputs:
      parameters:
      - {name: all, valueFrom: {parameter: "{{steps.gen.outputs.parameters}}"}}
      - {name: outs, valueFrom: {parameter: "{{steps.gen.outputs.parameters.out}}"}}
  - name: emit
    inputs: {parameters: [{name: x}]}
    script: {image: alpine, command: [sh], source: "printf '%s' '{{inputs.parameters.x}}-v' > out.txt"}
    outputs: {parameters: [{name: out, valueFrom: {path: out.txt}}]}
  - name: show
    inputs: {parameters: [{name: v}]}
    container: {image: alpine, command: [echo, "{{inputs.parameters.v}}"]}
`);
  expect(st.phase).toBe('Succeeded');
  const root = st.nodes[st.name]!;
  expect(JSON.parse(root.outputs!.parameters.all!)).toEqual([{ out: 'a-v' }, { out: 'b-v' }, { out: 'c-v' }]);
  // The per-name aggregate stays a list of values, as in Argo.
  expect(JSON.parse(root.outputs!.parameters.outs!)).toEqual(['a-v', 'b-v', 'c-v']);
  expect(pods(st, 'use(').map((n) => n.outputs?.result).sort()).toEqual(['a-v', 'b-v', 'c-v']);
});

test('{{outputs.parameters.<n>.path}}, {{outputs.artifacts.<n>.path}} and {{inputs.artifacts.<n>.path}} are substituted', async () => {
  const inDir = join(tempDir('argo-in-artifact'), 'indir');
  const st = await runToEnd(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: out-path-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: w, template: write}
    - - {name: r, template: read, arguments: {artifacts: [{name: d, from: "{{steps.w.outputs.artifacts.dir}}"}]}}
  - name: write
    container:
      image: alpine
      command: [sh, -c, "echo hello > {{outputs.parameters.msg.path}} && mkdir -p {{outputs.artifacts.dir.path}} && echo art > {{outputs.artifacts.dir.path}}/f"]
    outputs:
      parameters: [{name: msg, valueFrom: {path: msg.txt}}]
      artifacts: [{name: dir, path: outdir}]
  - name: read
    inputs: {artifacts: [{name: d, path: ${inDir}}]}
    container: {image: alpine, command: [sh, -c, "cat {{inputs.artifacts.d.path}}/f"]}
`);
  const n = byDisplay(st);
  expect(n.w).toMatchObject({ phase: 'Succeeded' });
  expect(n.w!.outputs?.parameters.msg).toBe('hello');
  expect(n.r).toMatchObject({ phase: 'Succeeded' });
  expect(n.r!.outputs?.result).toBe('art');
});

test('failFast: true on a steps template: no loop item starts after one failed; without it every item runs', async () => {
  const wf = (failFast: string) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: fail-fast-}
spec:
  entrypoint: main
  templates:
  - name: main
    parallelism: 1
    ${failFast}
    steps:
    - - {name: item, template: maybe-fail, withItems: ["0", "1", "2", "3"], arguments: {parameters: [{name: n, value: "{{item}}"}]}}
  - name: maybe-fail
    inputs: {parameters: [{name: n}]}
    container: {image: alpine, command: [sh, -c, "test {{inputs.parameters.n}} != 1"]}
`;
  const [fast, all] = await Promise.all([runToEnd(wf('failFast: true')), runToEnd(wf(''))]);
  expect(fast.phase).toBe('Failed');
  expect(pods(fast, 'item(').map((n) => [n.displayName, n.phase])).toEqual([
    ['item(0:0)', 'Succeeded'],
    ['item(1:1)', 'Failed'],
  ]);
  expect(fast.nodes[fast.name]!.message).toBe('template has failed or errored children and failFast enabled');
  // Argo's default for steps: the group's items all run, then the group fails.
  expect(all.phase).toBe('Failed');
  expect(pods(all, 'item(')).toHaveLength(4);
});

test('a daemon step is stopped when the steps template it runs in ends, not when the run does', async () => {
  const dir = tempDir('argo-daemon');
  const beat = join(dir, 'beat');
  const st = await runToEnd(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: daemon-scope-}
spec:
  entrypoint: main
  # Pods have their own filesystems: the heartbeat file lives in a host directory mounted into them.
  volumes: [{name: beat, hostPath: {path: "${dir}"}}]
  templates:
  - name: main
    steps:
    - - {name: scope, template: with-daemon}
    - - {name: check, template: check}
  - name: with-daemon
    steps:
    - - {name: server, template: server}
    - - {name: client, template: wait-beat}
  - name: server
    daemon: true
    container: {image: alpine, command: [sh, -c, "while true; do date +%s%N > ${beat}; sleep 0.2; done"], volumeMounts: [{name: beat, mountPath: "${dir}"}]}
  - name: wait-beat
    container: {image: alpine, command: [sh, -c, "for i in $(seq 1 100); do test -s ${beat} && exit 0; sleep 0.2; done; exit 1"], volumeMounts: [{name: beat, mountPath: "${dir}"}]}
  - name: check
    # The daemon's heartbeat file stops changing once it is stopped; give it 30 s.
    container: {image: alpine, command: [sh, -c, "for i in $(seq 1 30); do a=$(cat ${beat}); sleep 1; b=$(cat ${beat}); if [ \\"$a\\" = \\"$b\\" ]; then echo stopped; exit 0; fi; done; echo running"], volumeMounts: [{name: beat, mountPath: "${dir}"}]}
`);
  expect(st.phase).toBe('Succeeded');
  const n = byDisplay(st);
  expect(n.check!.outputs?.result).toBe('stopped');
  expect(n.server).toMatchObject({ phase: 'Succeeded' });
  expect(Date.parse(n.server!.finishedAt!)).toBeLessThanOrEqual(Date.parse(n.check!.startedAt!));
}, 120_000);
