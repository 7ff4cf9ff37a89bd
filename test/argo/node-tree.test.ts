// The interpreter's node tree as Argo v3.7.9's controller builds it (workflow/controller/steps.go,
// dag.go, operator.go processAggregateNodeOutputs), on the real Temporal dev server with real shell
// commands: step names, loop items in the step group, typed loop aggregates, Omitted tasks after a
// DAG failure, failure messages, empty loops, a suspend node that refuses to resume without its
// supplied output.
import { ArgoClient, prepare } from '../../argo/client.js';
import type { ArgoNode, ArgoStatus } from '../../argo/lang/types.js';
import { waitFor } from '../helpers.js';
import { startArgoHarness } from './harness.js';

let client: ArgoClient;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ client, stop } = await startArgoHarness('argo-node-tree'));
});
afterAll(() => stop?.());

const run = async (yaml: string): Promise<{ id: string; done: Promise<ArgoStatus> }> => {
  const { id } = await client.submit(prepare('inline.yaml', { text: yaml }));
  return { id, done: client.wait(id) };
};
const byDisplay = (st: ArgoStatus, name: string): ArgoNode => {
  const n = Object.values(st.nodes).find((x) => x.displayName === name);
  if (!n) throw new Error(`no node ${name} in ${Object.values(st.nodes).map((x) => x.displayName).join(', ')}`);
  return n;
};

test('steps: loop items hang from the step group, named as Argo names them; aggregates are typed and key-sorted', async () => {
  const { done } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: tree-steps-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: gen, template: emit, withItems: [2, 4], arguments: {parameters: [{name: item, value: "{{item}}"}]}}
      - {name: none, template: emit, withItems: [], arguments: {parameters: [{name: item, value: "{{item}}"}]}}
    - - {name: sum, template: show, arguments: {parameters: [{name: results, value: "{{steps.gen.outputs.result}}"}, {name: params, value: "{{steps.gen.outputs.parameters}}"}]}}
    outputs:
      parameters:
      - {name: results, valueFrom: {parameter: "{{steps.sum.outputs.result}}"}}
  - name: emit
    inputs: {parameters: [{name: item}]}
    script:
      image: alpine
      command: [sh]
      source: |
        printf z > z.txt; printf a > a.txt
        echo {{inputs.parameters.item}}
    outputs:
      parameters:
      - {name: zeta, valueFrom: {path: z.txt}}
      - {name: alpha, valueFrom: {path: a.txt}}
  - name: show
    inputs: {parameters: [{name: results}, {name: params}]}
    script: {image: alpine, command: [sh], source: "echo '{{inputs.parameters.results}} {{inputs.parameters.params}}'"}
`);
  const st = await done;
  expect(st.phase).toBe('Succeeded');
  const nodes = Object.values(st.nodes);
  expect(nodes.filter((n) => n.type === 'TaskGroup')).toEqual([]);
  const group = st.nodes[byDisplay(st, 'gen(0:2)').parentId!]!;
  expect(group.type).toBe('StepGroup');
  expect(group.name).toBe(`${st.name}[0]`);
  expect(group.children.map((c) => st.nodes[c]!.displayName)).toEqual(['gen(0:2)', 'gen(1:4)', 'none']);
  expect(byDisplay(st, 'gen(1:4)').name).toBe(`${st.name}[0].gen(1:4)`);
  expect(byDisplay(st, 'sum').name).toBe(`${st.name}[1].sum`);
  // An empty loop is one Skipped node.
  expect(byDisplay(st, 'none')).toMatchObject({ type: 'Skipped', phase: 'Skipped', message: 'Skipped, empty params' });
  // Results as JSON values, the per-item maps with their keys sorted (Go's map marshalling).
  expect(st.nodes[st.name]!.outputs?.parameters.results).toBe('[2,4] [{"alpha":"a","zeta":"z"},{"alpha":"a","zeta":"z"}]');
});

test('steps: a failed step fails its group and the template with "child \'<id>\' failed"', async () => {
  const { done } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: tree-fail-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: ok, template: pass}
      - {name: bad, template: boom, withItems: [a]}
    - - {name: never, template: pass}
  - name: pass
    container: {image: alpine, command: [sh, -c, "true"]}
  - name: boom
    container: {image: alpine, command: [sh, -c, "echo broken >&2; exit 3"]}
`);
  const st = await done;
  const bad = byDisplay(st, 'bad(0:a)');
  expect(bad.phase).toBe('Failed');
  const msg = `child '${bad.id}' failed`;
  expect(st.nodes[bad.parentId!]).toMatchObject({ type: 'StepGroup', phase: 'Failed', message: msg });
  expect(st.nodes[st.name]).toMatchObject({ phase: 'Failed', message: msg });
  expect(st.phase).toBe('Failed');
  expect(st.message).toBe(msg);
  expect(Object.values(st.nodes).some((n) => n.displayName === 'never')).toBe(false);
});

test('dag: after a failure the tasks that can no longer run are Omitted, and the DAG has no message of its own', async () => {
  const { done } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: tree-dag-}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: C, template: pass, depends: B}
      - {name: A, template: boom}
      - {name: B, template: pass, depends: A}
      - {name: D, template: pass, depends: "A || B"}
  - name: pass
    container: {image: alpine, command: [sh, -c, "true"]}
  - name: boom
    container: {image: alpine, command: [sh, -c, "exit 2"]}
`);
  const st = await done;
  expect(st.phase).toBe('Failed');
  expect(byDisplay(st, 'A').phase).toBe('Failed');
  for (const t of ['B', 'C', 'D']) expect(byDisplay(st, t)).toMatchObject({ type: 'Skipped', phase: 'Omitted', message: 'omitted: depends condition not met', templateName: 'pass' });
  expect(st.nodes[st.name]!.phase).toBe('Failed');
  expect(st.nodes[st.name]!.message).toBeUndefined();
});

test('a suspend node whose supplied output has no value and no default is not resumed', async () => {
  const { id, done } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: tree-suspend-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: approve, template: approve}
  - name: approve
    suspend: {}
    outputs:
      parameters:
      - {name: ok, valueFrom: {supplied: {}}}
      - {name: note, valueFrom: {supplied: {}, default: none}}
`);
  await waitFor('the suspend node', async () => Object.values((await client.status(id)).nodes).some((n) => n.type === 'Suspend' && n.phase === 'Running'));
  await expect(client.resume(id)).rejects.toThrow("raw output parameter 'ok' has not been set and does not have a default value");
  await expect(client.resume(id, undefined, { nope: 'x' })).rejects.toThrow("node is not expecting output parameter 'nope'");
  // A resume signal sent past the client's check does not resume it either.
  await client.client.workflow.getHandle(`argo-${id}`).signal('argo.resume', {});
  await client.resume(id, undefined, { ok: 'yes' });
  const st = await done;
  expect(st.phase).toBe('Succeeded');
  expect(byDisplay(st, 'approve').outputs?.parameters).toEqual({ ok: 'yes', note: 'none' });
});

test('lifecycle hooks run when their expression holds: a step’s running and success hooks, the workflow’s running and end hooks', async () => {
  const { done } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: tree-hooks-}
spec:
  entrypoint: main
  hooks:
    running: {expression: 'workflow.status == "Running"', template: say, arguments: {parameters: [{name: m, value: wf-running}]}}
    ended: {expression: 'workflow.status == "Failed"', template: say, arguments: {parameters: [{name: m, value: wf-failed}]}}
    never: {expression: 'workflow.status == "Succeeded"', template: say, arguments: {parameters: [{name: m, value: never}]}}
  templates:
  - name: main
    steps:
    - - name: work
        template: say
        arguments: {parameters: [{name: m, value: worked}]}
        hooks:
          running: {expression: 'steps.work.status == "Running"', template: say, arguments: {parameters: [{name: m, value: step-running}]}}
          success: {expression: 'steps.work.status == "Succeeded"', template: say, arguments: {parameters: [{name: m, value: "after {{steps.work.outputs.result}}"}]}}
          failure: {expression: 'steps.work.status == "Failed"', template: say, arguments: {parameters: [{name: m, value: never}]}}
    - - {name: boom, template: boom}
  - name: say
    inputs: {parameters: [{name: m}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.m}}"'}
  - name: boom
    container: {image: alpine, command: [sh, -c, "exit 5"]}
`);
  const st = await done;
  expect(st.phase).toBe('Failed'); // hooks do not change it
  const work = byDisplay(st, 'work');
  const hook = (name: string) => Object.values(st.nodes).find((n) => n.name === name);
  expect(hook(`${work.name}.hooks.running`)).toMatchObject({ phase: 'Succeeded', parentId: work.id, outputs: { result: 'step-running' } });
  expect(hook(`${work.name}.hooks.success`)).toMatchObject({ phase: 'Succeeded', parentId: work.id, outputs: { result: 'after worked' } });
  expect(hook(`${work.name}.hooks.failure`)).toBeUndefined();
  expect(hook(`${st.name}.hooks.running`)).toMatchObject({ phase: 'Succeeded', parentId: st.name, outputs: { result: 'wf-running' } });
  expect(hook(`${st.name}.hooks.ended`)).toMatchObject({ phase: 'Succeeded', outputs: { result: 'wf-failed' } });
  expect(hook(`${st.name}.hooks.never`)).toBeUndefined();
  expect(Object.values(st.nodes).filter((n) => n.name.includes('.hooks.')).map((n) => n.outputs?.result)).not.toContain('never');
});
