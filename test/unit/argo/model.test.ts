// Shared helpers, node bookkeeping and callee resolution of the Argo interpreter, without a server.
import type { ArgoStatus } from '../../../argo/lang/types.js';
import { resolveCallee } from '../../../workflows/argo/call.js';
import { activityMessage, continueOn, exitTemplateName, templateKind, tryJson, UserError } from '../../../workflows/argo/model.js';
import { finish, NodeTree } from '../../../workflows/argo/nodes.js';

test('template kinds', () => {
  expect(templateKind({ steps: [] })).toBe('Steps');
  expect(templateKind({ dag: {} })).toBe('DAG');
  expect(templateKind({ suspend: {} })).toBe('Suspend');
  expect(templateKind({ http: {} })).toBe('HTTP');
  expect(templateKind({ resource: {} })).toBe('Resource');
  expect(templateKind({ container: {} })).toBe('Pod');
  expect(templateKind({ script: {} })).toBe('Pod');
});

test('exit handlers, continueOn, activity messages, loop results', () => {
  expect(exitTemplateName({ onExit: 'a', hooks: { exit: { template: 'b' } } })).toBe('a');
  expect(exitTemplateName({ hooks: { exit: { template: 'b' } } })).toBe('b');
  expect(exitTemplateName({})).toBeUndefined();
  expect(continueOn({ continueOn: { failed: true } }, 'Failed')).toBe(true);
  expect(continueOn({ continueOn: { failed: true } }, 'Error')).toBe(false);
  expect(continueOn({ continueOn: { error: true } }, 'Error')).toBe(true);
  expect(continueOn({}, 'Failed')).toBe(false);
  const wrapped = Object.assign(new Error('Activity task failed'), { cause: Object.assign(new Error(''), { cause: new Error('pod exited 1') }) });
  expect(activityMessage(wrapped)).toBe('pod exited 1');
  expect(activityMessage('plain')).toBe('plain');
  expect(tryJson('{"a":1}')).toEqual({ a: 1 });
  expect(tryJson('[1]')).toEqual([1]);
  expect(tryJson('3')).toBe('3');
  expect(tryJson('text')).toBe('text');
});

test('node ids are the run name, then <name>-<n>; children are linked; finish records the result', () => {
  const status: ArgoStatus = { name: 'wf', phase: 'Running', startedAt: 'T', entrypoint: 'main', nodes: {} };
  const tree = new NodeTree('wf', status);
  const root = tree.add({ name: 'wf', displayName: 'wf', type: 'Steps' });
  const child = tree.add({ name: 'wf[0]', displayName: '[0]', type: 'StepGroup', parentId: root.id });
  expect([root.id, child.id]).toEqual(['wf', 'wf-1']);
  expect(status.nodes.wf!.children).toEqual(['wf-1']);
  expect(child).toMatchObject({ phase: 'Running', children: [], parentId: 'wf' });
  expect(tree.add({ name: 'p', displayName: 'p', type: 'Pod', phase: 'Pending' }).phase).toBe('Pending');
  const r = finish(child, 'Failed', 'boom');
  expect(r).toEqual({ id: 'wf-1', phase: 'Failed', message: 'boom', outputs: { parameters: {}, artifacts: {} }, daemoned: undefined });
  expect(child.finishedAt).toEqual(expect.any(String));
  expect(child.outputs).toBeUndefined();
  finish(root, 'Succeeded', undefined, { parameters: { a: '1' }, artifacts: {} });
  expect(root).toMatchObject({ phase: 'Succeeded', outputs: { parameters: { a: '1' } } });
  expect(root.message).toBeUndefined();
});

test('a step calls a named template or its inline one', () => {
  const templates = new Map([['t', { name: 't', container: {} }]]);
  expect(resolveCallee({ name: 's', template: 't' }, templates)).toBe(templates.get('t'));
  expect(resolveCallee({ name: 's', inline: { container: { image: 'a' } } }, templates)).toEqual({ name: 's-inline', container: { image: 'a' } });
  expect(() => resolveCallee({ name: 's', template: 'nope' }, templates)).toThrow(UserError);
});
