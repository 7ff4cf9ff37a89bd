// The Argo interpreter on the real Temporal dev server, running real shell commands through the
// local target: steps, dag/depends, loops, when, outputs, retryStrategy, suspend/resume, onExit.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ArgoClient, prepare } from '../../argo/client.js';
import { ArgoValidationError } from '../../argo/lint/load.js';
import { tempDir, waitFor } from '../helpers.js';
import { startArgoHarness } from './harness.js';

let client: ArgoClient;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ client, stop } = await startArgoHarness('argo'));
});
afterAll(() => stop?.());

const run = async (yaml: string, parameters?: Record<string, string>) => {
  const p = prepare('inline.yaml', { text: yaml, parameters });
  const { id } = await client.submit(p, { parameters });
  return { id, done: client.wait(id) };
};

test('steps, loops, when, outputs and a dag with depends reach Succeeded with the right values', async () => {
  const { done } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: mix-}
spec:
  entrypoint: main
  arguments: {parameters: [{name: count, value: "2"}]}
  onExit: bye
  templates:
  - name: main
    steps:
    - - {name: flip, template: echo, arguments: {parameters: [{name: msg, value: heads}]}}
    - - {name: when-heads, template: echo, when: "{{steps.flip.outputs.result}} == heads", arguments: {parameters: [{name: msg, value: "h"}]}}
      - {name: when-tails, template: echo, when: "{{steps.flip.outputs.result}} == tails", arguments: {parameters: [{name: msg, value: "t"}]}}
      - {name: loop, template: echo, withSequence: {count: "{{workflow.parameters.count}}"}, arguments: {parameters: [{name: msg, value: "n{{item}}"}]}}
    - - {name: graph, template: diamond}
    outputs:
      parameters:
      - {name: fromgraph, valueFrom: {parameter: "{{steps.graph.outputs.parameters.last}}"}}
  - name: diamond
    dag:
      tasks:
      - {name: A, template: echo, arguments: {parameters: [{name: msg, value: a}]}}
      - {name: B, template: fail, depends: A}
      - {name: C, template: echo, depends: "B.Failed", arguments: {parameters: [{name: msg, value: "{{tasks.A.outputs.result}}c"}]}}
    outputs:
      parameters:
      - {name: last, valueFrom: {parameter: "{{tasks.C.outputs.parameters.out}}"}}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script:
      image: alpine
      command: [sh]
      source: |
        printf '%s' "{{inputs.parameters.msg}}" > out.txt
        echo "{{inputs.parameters.msg}}"
    outputs: {parameters: [{name: out, valueFrom: {path: out.txt}}]}
  - name: fail
    container: {image: alpine, command: [sh, -c, "exit 3"]}
  - name: bye
    container: {image: alpine, command: [sh, -c, "echo {{workflow.status}}"]}
`);
  const st = await done;
  expect(st.phase).toBe('Succeeded');
  const byName = Object.fromEntries(Object.values(st.nodes).map((n) => [n.displayName, n]));
  expect(byName['when-heads']!.phase).toBe('Succeeded');
  expect(byName['when-tails']!.phase).toBe('Skipped');
  expect(byName['loop(0:0)']!.outputs?.result).toBe('n0');
  expect(byName['loop(1:1)']!.outputs?.result).toBe('n1');
  expect(byName['B']!.phase).toBe('Failed');
  expect(byName['C']!.outputs?.parameters.out).toBe('ac');
  expect(byName[st.name]!.outputs?.parameters.fromgraph).toBe('ac');
  expect(byName[`${st.name}.onExit`]!.outputs?.result).toBe('Succeeded');
});

test('a workflow name too long for job names: every pod still gets a job of its own', async () => {
  // 130 characters: the job names are cut to 120, which used to drop the node, attempt and run id.
  const name = `long-${'name-'.repeat(25)}`;
  const { done } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: ${name}}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: one, template: echo, arguments: {parameters: [{name: msg, value: first}]}}
    - - {name: two, template: echo, arguments: {parameters: [{name: msg, value: second}]}}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.msg}}"'}
`);
  const st = await done;
  expect(st.phase).toBe('Succeeded');
  const byName = Object.fromEntries(Object.values(st.nodes).map((n) => [n.displayName, n]));
  // Adopting the first pod's finished job would give the second its output.
  expect([byName.one!.outputs?.result, byName.two!.outputs?.result]).toEqual(['first', 'second']);
  const jobs = [byName.one!.jobName!, byName.two!.jobName!];
  expect(jobs[0]).not.toBe(jobs[1]);
  for (const j of jobs) expect(j.length).toBeLessThanOrEqual(120);
});

test('retryStrategy retries a failing pod up to its limit, then the workflow fails with the pod message', async () => {
  const { id, done } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: retry-}
spec:
  entrypoint: flaky
  templates:
  - name: flaky
    retryStrategy: {limit: "2", retryPolicy: OnFailure, backoff: {duration: "100ms", factor: "2"}}
    container: {image: alpine, command: [sh, -c, "exit 7"]}
`);
  const st = await done;
  expect(st.phase).toBe('Failed');
  const attempts = Object.values(st.nodes).filter((n) => n.type === 'Pod');
  expect(attempts).toHaveLength(3);
  expect(attempts.every((n) => n.message === 'Error (exit code 7)')).toBe(true);
  // `tandem argo list` shows Argo's phase, not Temporal's COMPLETED (the run itself completed).
  const listed = await waitFor('the run in the visibility listing', async () => (await client.list()).find((w) => id.endsWith(w.name) && w.status !== 'Running'));
  expect(listed.status).toBe('Failed');
});

test('a suspend step waits for resume and takes the supplied output', async () => {
  const { id, done } = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: approve-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: approve, template: wait}
    - - {name: use, template: say, arguments: {parameters: [{name: m, value: "{{steps.approve.outputs.parameters.ok}}"}]}}
  - name: wait
    suspend: {}
    outputs: {parameters: [{name: ok, valueFrom: {supplied: {}}}]}
  - name: say
    inputs: {parameters: [{name: m}]}
    container: {image: alpine, command: [echo, "{{inputs.parameters.m}}"]}
`);
  await waitFor('the suspend node', async () => Object.values((await client.status(id)).nodes).some((n) => n.type === 'Suspend' && n.phase === 'Running'));
  await client.resume(id, undefined, { ok: 'YES' });
  const st = await done;
  expect(st.phase).toBe('Succeeded');
  expect(Object.values(st.nodes).find((n) => n.displayName === 'use')!.outputs?.result).toBe('YES');
});

test('nothing starts when validation fails', async () => {
  // Its own name prefix: other suites start Argo runs on the same server meanwhile, so a count of all runs races them.
  const prefix = `nothing-starts-${Date.now().toString(36)}-`;
  expect(() => prepare('bad.yaml', { text: `apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: ${prefix}}\nspec:\n  entrypoint: nope\n  templates: []\n` })).toThrow(ArgoValidationError);
  expect((await client.list()).filter((w) => w.name.startsWith(prefix))).toEqual([]);
});

test('memoize: a fresh entry for the key answers instead of running; other keys and stale entries run', async () => {
  const counter = join(tempDir('memo'), 'runs');
  const yaml = (maxAge: string) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: memo-}
spec:
  entrypoint: main
  arguments: {parameters: [{name: who, value: world}]}
  # Pods have their own filesystems: the run counter lives in a host directory mounted into them.
  volumes: [{name: counter, hostPath: {path: "${dirname(counter)}"}}]
  templates:
  - name: main
    steps:
    - - {name: hello, template: hello, arguments: {parameters: [{name: who, value: "{{workflow.parameters.who}}"}]}}
  - name: hello
    inputs: {parameters: [{name: who}]}
    memoize: {key: "hello-{{inputs.parameters.who}}", maxAge: "${maxAge}", cache: {configMap: {name: memo-test}}}
    script:
      image: alpine
      command: [sh]
      volumeMounts: [{name: counter, mountPath: "${dirname(counter)}"}]
      source: |
        echo run >> ${counter}
        echo "hello {{inputs.parameters.who}} $(wc -l < ${counter})"
`;
  const hello = async (maxAge: string, who: string) => {
    const st = await (await run(yaml(maxAge), { who })).done;
    expect(st.phase).toBe('Succeeded');
    return Object.values(st.nodes).find((n) => n.displayName === 'hello')!;
  };
  const first = await hello('1h', 'world');
  expect(first.memoizationStatus).toEqual({ hit: false, key: 'hello-world', cacheName: 'memo-test' });
  expect(first.outputs?.result).toBe('hello world 1');
  const second = await hello('1h', 'world');
  expect(second.memoizationStatus).toEqual({ hit: true, key: 'hello-world', cacheName: 'memo-test' });
  expect(second.message).toBe(`memoized: cache memo-test key hello-world (from ${first.id})`);
  expect(second.outputs?.result).toBe('hello world 1');
  expect((await hello('1h', 'moon')).outputs?.result).toBe('hello moon 2');
  const stale = await hello('1ms', 'world');
  expect(stale.memoizationStatus?.hit).toBe(false);
  expect(stale.outputs?.result).toBe('hello world 3');
  expect(readFileSync(counter, 'utf8').split('\n').filter(Boolean)).toHaveLength(3);
});
