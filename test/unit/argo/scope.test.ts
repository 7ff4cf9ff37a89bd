// The workflow.* scope of an Argo run (workflows/argo/scope.ts), without a server.
import type { ArgoStatus } from '../../../argo/lang/types.js';
import { entryArguments, globalScope, workflowArtifacts, workflowFailures, workflowOutputs } from '../../../workflows/argo/scope.js';

const spec = {
  entrypoint: 'main',
  priority: 3,
  arguments: { parameters: [{ name: 'a', value: 'A' }, { name: 'b', default: '{{workflow.parameters.a}}-b' }, { name: 'none' }], artifacts: [{ name: 'art', from: '/x' }] },
};

test('workflow.* variables', () => {
  const g = globalScope({ spec, name: 'wf', labels: { team: 'ml' } }, { uid: 'run-1', startedAt: '2024-03-05T07:08:09.123Z', scheduledStartTime: '2024-03-05T07:08:00.000Z' });
  expect(g).toMatchObject({
    'workflow.name': 'wf',
    'workflow.namespace': 'default',
    'workflow.uid': 'run-1',
    'workflow.serviceAccountName': 'default',
    'workflow.mainEntrypoint': 'main',
    'workflow.priority': '3',
    'workflow.creationTimestamp': '2024-03-05T07:08:09.123Z',
    'workflow.creationTimestamp.Y': '2024',
    'workflow.creationTimestamp.m': '03',
    'workflow.creationTimestamp.d': '05',
    'workflow.creationTimestamp.H': '07',
    'workflow.creationTimestamp.s': String(Math.floor(Date.parse('2024-03-05T07:08:09.123Z') / 1000)),
    'workflow.creationTimestamp.RFC3339': '2024-03-05T07:08:09Z',
    'workflow.scheduledTime': '2024-03-05T07:08:00Z',
    'workflow.status': 'Running',
    'workflow.labels.team': 'ml',
    'workflow.labels.json': '{"team":"ml"}',
    'workflow.annotations.json': '{}',
    'workflow.parameters.a': 'A',
    'workflow.parameters.b': 'A-b',
  });
  expect(g['workflow.parameters.none']).toBeUndefined();
  expect(JSON.parse(g['workflow.parameters.json']!)).toEqual([{ name: 'a', value: 'A' }, { name: 'b', value: 'A-b' }, { name: 'none' }]);
  expect(globalScope({ spec, name: 'wf', namespace: 'ns' }, { uid: 'u', startedAt: '2024-01-01T00:00:00.000Z' })).not.toHaveProperty('workflow.scheduledTime');
});

test('entry arguments and workflow artifacts', () => {
  const g = globalScope({ spec, name: 'wf' }, { uid: 'u', startedAt: '2024-01-01T00:00:00.000Z' });
  expect(entryArguments(spec, g)).toEqual({ parameters: [{ name: 'a', value: 'A' }, { name: 'b', value: 'A-b' }, { name: 'none', value: undefined }], artifacts: [{ name: 'art', from: '/x' }] });
  expect(workflowArtifacts(spec)).toEqual({ art: { name: 'art', from: '/x' } });
  expect(entryArguments({}, {})).toEqual({ parameters: [], artifacts: [] });
});

test('workflow.failures lists failed leaves; global outputs become the status’s', () => {
  const node = (id: string, type: ArgoStatus['nodes'][string]['type'], phase: ArgoStatus['nodes'][string]['phase']) => ({ id, name: id, displayName: id, type, phase, children: [] });
  const status: ArgoStatus = { name: 'wf', phase: 'Failed', startedAt: 'T', entrypoint: 'main', nodes: { wf: node('wf', 'Steps', 'Failed'), 'wf-1': { ...node('wf-1', 'Pod', 'Error'), message: 'm', templateName: 't' }, 'wf-2': node('wf-2', 'Pod', 'Succeeded') } };
  expect(JSON.parse(workflowFailures(status))).toEqual([{ displayName: 'wf-1', message: 'm', templateName: 't', phase: 'Error', podName: 'wf-1', finishedAt: '' }]);
  expect(workflowOutputs({ 'workflow.name': 'wf', 'workflow.outputs.parameters.x': '1' })).toEqual({ parameters: { x: '1' } });
  expect(workflowOutputs({ 'workflow.name': 'wf' })).toBeUndefined();
});
