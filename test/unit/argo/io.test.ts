// Inputs and outputs of Argo templates (workflows/argo/io.ts), without a server.
import { bindInputs, publish, suspendOutputs, templateOutputs } from '../../../workflows/argo/io.js';

test('parameters come from arguments, then the template’s value or default, substituted in order', () => {
  const tmpl = { inputs: { parameters: [{ name: 'a', default: 'da' }, { name: 'b', value: '{{inputs.parameters.a}}-b' }, { name: 'c' }] } };
  const { scope } = bindInputs(tmpl, { parameters: [{ name: 'a', value: 'A' }, { name: 'c', default: 'dc' }] }, { g: '1' }, {});
  expect(scope).toMatchObject({ g: '1', 'inputs.parameters.a': 'A', 'inputs.parameters.b': 'A-b', 'inputs.parameters.c': 'dc' });
  expect(JSON.parse(scope['inputs.parameters']!)).toEqual([{ name: 'a', value: 'A' }, { name: 'b', value: 'A-b' }, { name: 'c', value: 'dc' }]);
  expect(bindInputs({ inputs: { parameters: [{ name: 'n', value: 3 }] } }, {}, {}, {}).scope['inputs.parameters.n']).toBe('3');
});

test('missing and out-of-enum parameters are spec errors', () => {
  expect(() => bindInputs({ inputs: { parameters: [{ name: 'x' }] } }, {}, {}, {})).toThrow('inputs.parameters.x was not supplied');
  expect(() => bindInputs({ inputs: { parameters: [{ name: 'x', enum: ['a', 'b'] }] } }, { parameters: [{ name: 'x', value: 'c' }] }, {}, {})).toThrow('inputs.parameters.x: "c" is not one of [a, b]');
});

test('artifacts: from the call, the workflow’s arguments or raw data; optional ones may be absent', () => {
  const tmpl = { inputs: { artifacts: [{ name: 'a', path: '/in/a' }, { name: 'w', path: '/in/w' }, { name: 'r', path: '/r', raw: { data: 'x={{g}}' }, mode: 0o600 }, { name: 'o', path: '/o', optional: true }, { name: 'nopath' }] } };
  const { scope, artifacts } = bindInputs(tmpl, { artifacts: [{ name: 'a', from: '{{g}}/a' }, { name: 'nopath', from: 'loc' }] }, { g: 'G' }, { w: { name: 'w', from: '/wf/w' } });
  expect(artifacts).toEqual([
    { name: 'a', path: '/in/a', from: 'G/a', raw: undefined, optional: false, mode: undefined },
    { name: 'w', path: '/in/w', from: '/wf/w', raw: undefined, optional: false, mode: undefined },
    { name: 'r', path: '/r', from: undefined, raw: 'x=G', optional: false, mode: 0o600 },
  ]);
  expect(scope).toMatchObject({ 'inputs.artifacts.a.path': '/in/a', 'inputs.artifacts.nopath': 'loc' });
  expect(() => bindInputs({ inputs: { artifacts: [{ name: 's', path: '/s', s3: { key: 'k' } }] } }, {}, {}, {})).toThrow('inputs.artifacts.s: s3 artifacts are not available on this runtime');
  expect(() => bindInputs({ inputs: { artifacts: [{ name: 's', path: '/s' }] } }, {}, {}, {})).toThrow('inputs.artifacts.s: not supplied');
});

test('outputs: valueFrom parameter/expression/value, defaults for unresolved tags, globalNames', () => {
  const tmpl = {
    outputs: {
      parameters: [
        { name: 'fromPod' },
        { name: 'p', valueFrom: { parameter: '{{x}}' }, globalName: 'gp' },
        { name: 'e', valueFrom: { expression: 'x + "!"' } },
        { name: 'v', value: 'v-{{x}}' },
        { name: 'unresolved', valueFrom: { parameter: '{{nope}}', default: 'dflt' } },
        { name: 'bad', valueFrom: { expression: '((' } },
      ],
      artifacts: [{ name: 'art', from: '{{x}}/f', globalName: 'ga' }],
    },
  };
  const global: Record<string, string> = {};
  const out = templateOutputs(tmpl, { x: 'X' }, { parameters: { fromPod: 'pod' }, artifacts: {}, result: 'r', exitCode: '0' }, global);
  expect(out).toEqual({ parameters: { fromPod: 'pod', p: 'X', e: 'X!', v: 'v-X', unresolved: 'dflt' }, artifacts: { art: 'X/f' }, result: 'r', exitCode: '0' });
  expect(global).toEqual({ 'workflow.outputs.parameters.gp': 'X', 'workflow.outputs.artifacts.ga': 'X/f' });
});

test('a resumed suspend node’s outputs come from the signal, else their defaults', () => {
  const tmpl = { outputs: { parameters: [{ name: 'a', valueFrom: { default: 'da' } }, { name: 'b', globalName: 'gb' }, { name: 'c' }] } };
  const global: Record<string, string> = {};
  expect(suspendOutputs(tmpl, { b: 'B' }, global)).toEqual({ parameters: { a: 'da', b: 'B' }, artifacts: {} });
  expect(global).toEqual({ 'workflow.outputs.parameters.gb': 'B' });
});

test('publish makes a child’s results visible under its prefix', () => {
  const scope: Record<string, string> = {};
  publish(scope, 'steps.s', { id: 'n-1', phase: 'Succeeded', outputs: { parameters: { p: '1' }, artifacts: { a: '/x' }, result: 'out', exitCode: '0' } }, {
    id: 'n-1', name: 'n', displayName: 's', type: 'Pod', phase: 'Succeeded', children: [], startedAt: 'T0', finishedAt: 'T1',
  });
  expect(scope).toEqual({
    'steps.s.status': 'Succeeded',
    'steps.s.id': 'n-1',
    'steps.s.startedAt': 'T0',
    'steps.s.finishedAt': 'T1',
    'steps.s.outputs.result': 'out',
    'steps.s.exitCode': '0',
    'steps.s.outputs.parameters.p': '1',
    'steps.s.outputs.artifacts.a': '/x',
    'steps.s.outputs.parameters': '{"p":"1"}',
  });
});

test('an argument artifact with subPath hands the pod that file or folder inside the artifact (artifact-passing-subpath)', () => {
  const tmpl = { inputs: { artifacts: [{ name: 'message', path: '/tmp/message' }] } };
  const { artifacts } = bindInputs(tmpl, { artifacts: [{ name: 'message', from: '/store/run/hello-art/', subPath: '{{sub}}' }] }, { sub: 'hello_world.txt' }, {});
  expect(artifacts).toEqual([expect.objectContaining({ name: 'message', path: '/tmp/message', from: '/store/run/hello-art/hello_world.txt' })]);
  expect(() => bindInputs(tmpl, { artifacts: [{ name: 'message', from: '/store/a', subPath: '../../etc/passwd' }] }, {}, {})).toThrow('inputs.artifacts.message.subPath: "../../etc/passwd" must stay inside the artifact (no "..")');
});
