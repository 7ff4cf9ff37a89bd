// [real Argo] The local pod runner of the node-tree oracle (./pod-runner.ts, bench/argo/oracle.ts): real
// Argo v3.7.9 decides the phases of a workflow whose script and container pods run on this host in
// Tandem's sandbox: an output parameter read from its path (one trailing newline trimmed), a script's
// stdout as `result`, both passed on by the controller into the next step's command, a real non-zero
// exit failing its step (continueOn lets the workflow go on) with its exit code in the node's outputs,
// an output artifact passed to the next step through the runner's artifact store, and the deadline of a
// pod that outlives its activeDeadlineSeconds.
import { startControlPlane, type ControlPlane } from '../kubernetes/control-plane.js';
import { finished, nodeNamed, startArgo, type Argo } from './argo.js';

let cp: ControlPlane;
let argo: Argo;

beforeAll(async () => {
  // No ARGO_POD_STAGE: the pod runner finishes Argo's pods.
  cp = await startControlPlane({ nodes: [{ name: 'oracle-node-1', cpu: '16', memory: '64Gi' }] });
  argo = await startArgo(cp, { runPods: true });
}, 120_000);

afterAll(async () => {
  await argo?.close();
  await cp?.stop();
});

const node = nodeNamed;

test('real Argo decides the phases of pods run on this host, with their outputs, exit codes, artifacts and deadlines', async () => {
  const name = await argo.submit({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: { generateName: 'pod-runner-' },
    spec: {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [
              { name: 'produce', template: 'produce' },
              { name: 'count', template: 'count' },
            ],
            [
              { name: 'consume', template: 'consume', arguments: { parameters: [{ name: 'msg', value: '{{steps.produce.outputs.parameters.msg}}-{{steps.count.outputs.result}}' }], artifacts: [{ name: 'in', from: '{{steps.produce.outputs.artifacts.out}}' }] } },
              { name: 'fail', template: 'fail', continueOn: { failed: true } },
              { name: 'slow', template: 'slow', continueOn: { failed: true } },
            ],
          ],
        },
        {
          name: 'produce',
          container: { image: 'alpine:3', command: ['sh', '-c'], args: ['mkdir -p /tmp/d && printf "hello\\n\\n" > /tmp/msg && echo artifact-text > /tmp/d/a.txt'] },
          outputs: { parameters: [{ name: 'msg', valueFrom: { path: '/tmp/msg' } }], artifacts: [{ name: 'out', path: '/tmp/d' }] },
        },
        { name: 'count', script: { image: 'python:3-alpine', command: ['python3'], source: 'print(6 * 7)\n' } },
        {
          name: 'consume',
          inputs: { parameters: [{ name: 'msg' }], artifacts: [{ name: 'in', path: '/in' }] },
          container: { image: 'alpine:3', command: ['sh', '-c'], args: ['echo "{{inputs.parameters.msg}}" > /tmp/got && cat /in/a.txt >> /tmp/got'] },
          outputs: { parameters: [{ name: 'got', valueFrom: { path: '/tmp/got' } }] },
        },
        { name: 'fail', container: { image: 'alpine:3', command: ['sh', '-c', 'exit 3'] } },
        { name: 'slow', activeDeadlineSeconds: 2, container: { image: 'alpine:3', command: ['sleep', '30'] } },
      ],
    },
  });
  const wf = await argo.waitFor(name, 'the workflow to finish', finished, 60_000);
  expect(wf.status!.phase).toBe('Succeeded');
  // One trailing newline trimmed, as SaveParameters does: the second stays.
  expect(node(wf, 'produce')!.outputs!.parameters![0]!.value).toBe('hello\n');
  expect(node(wf, 'count')!.outputs!.result).toBe('42');
  expect(node(wf, 'consume')).toMatchObject({ phase: 'Succeeded', outputs: { parameters: [{ name: 'got', value: 'hello\n-42\nartifact-text' }] } });
  expect(node(wf, 'fail')).toMatchObject({ phase: 'Failed', outputs: { exitCode: '3' } });
  expect(node(wf, 'slow')!.phase).toBe('Failed');
  expect(argo.podRunner!.notComparable(name)).toEqual([]);
}, 90_000);
