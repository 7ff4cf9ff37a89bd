// `tandem argo get -o json`: the run's status in Argo's shape (argo/status-shape.ts), links as Argo's
// controller makes them (steps.go, dag.go, getOutboundNodes), from a hand-built containment tree.
import { argoShape } from '../../../argo/status-shape.js';
import type { ArgoNode, ArgoStatus } from '../../../argo/lang/types.js';

const node = (id: string, name: string, displayName: string, type: ArgoNode['type'], parentId?: string, extra: Partial<ArgoNode> = {}): ArgoNode => ({ id, name, displayName, type, parentId, phase: 'Succeeded', children: [], ...extra });

function status(list: ArgoNode[]): ArgoStatus {
  const nodes = Object.fromEntries(list.map((n) => [n.id, n]));
  for (const n of list) if (n.parentId) nodes[n.parentId]!.children.push(n.id);
  return { name: 'wf', phase: 'Failed', startedAt: '2026-01-01T00:00:00Z', entrypoint: 'main', nodes };
}

const spec = {
  entrypoint: 'main',
  templates: [
    { name: 'main', steps: [[{ name: 'gen', template: 'echo', withItems: [1, 2] }], [{ name: 'graph', template: 'graph' }], [{ name: 'last', template: 'echo' }]] },
    { name: 'graph', dag: { tasks: [{ name: 'A', template: 'echo' }, { name: 'B', template: 'echo', depends: 'A' }, { name: 'C', template: 'echo', depends: 'A' }, { name: 'D', template: 'echo', depends: 'B && C' }] } },
    { name: 'echo', container: { image: 'alpine' } },
  ],
};

test('steps chain through their groups, DAG tasks hang from their dependencies, boundaries are the enclosing template', () => {
  const st = status([
    node('wf', 'wf', 'wf', 'Steps', undefined, { templateName: 'main' }),
    node('wf-1', 'wf[0]', '[0]', 'StepGroup', 'wf'),
    node('wf-2', 'wf[0].gen(0:1)', 'gen(0:1)', 'Pod', 'wf-1', { templateName: 'echo', outputs: { parameters: { z: '1', a: '2' }, artifacts: {}, result: '1' } }),
    node('wf-3', 'wf[0].gen(1:2)', 'gen(1:2)', 'Pod', 'wf-1', { templateName: 'echo' }),
    node('wf-4', 'wf[1]', '[1]', 'StepGroup', 'wf'),
    node('wf-5', 'wf[1].graph', 'graph', 'DAG', 'wf-4', { templateName: 'graph' }),
    node('wf-6', 'wf[1].graph.A', 'A', 'Pod', 'wf-5', { templateName: 'echo' }),
    node('wf-7', 'wf[1].graph.B', 'B', 'Retry', 'wf-5', { templateName: 'echo' }),
    node('wf-8', 'wf[1].graph.B(0)', 'B(0)', 'Pod', 'wf-7', { templateName: 'echo', phase: 'Failed' }),
    node('wf-9', 'wf[1].graph.B(1)', 'B(1)', 'Pod', 'wf-7', { templateName: 'echo' }),
    node('wf-10', 'wf[1].graph.C', 'C', 'Pod', 'wf-5', { templateName: 'echo' }),
    node('wf-11', 'wf[1].graph.C.onExit', 'C.onExit', 'Pod', 'wf-5', { templateName: 'echo' }),
    node('wf-12', 'wf[1].graph.D', 'D', 'Skipped', 'wf-5', { templateName: 'echo', phase: 'Omitted' }),
    node('wf-13', 'wf[2]', '[2]', 'StepGroup', 'wf'),
    node('wf-14', 'wf[2].last', 'last', 'Resource', 'wf-13', { templateName: 'echo' }),
    node('wf-15', 'wf.onExit', 'wf.onExit', 'Pod', undefined, { templateName: 'echo' }),
  ]);
  const { status: s, metadata, kind } = argoShape(st, spec, 'ns');
  expect({ kind, metadata }).toEqual({ kind: 'Workflow', metadata: { name: 'wf', namespace: 'ns' } });
  const kids = (id: string) => s.nodes[id]!.children ?? [];
  expect(kids('wf')).toEqual(['wf-1']);
  expect(kids('wf-1')).toEqual(['wf-2', 'wf-3']);
  expect(kids('wf-2')).toEqual(['wf-4']);
  expect(kids('wf-3')).toEqual(['wf-4']);
  expect(kids('wf-4')).toEqual(['wf-5']);
  expect(kids('wf-5')).toEqual(['wf-6']);
  expect(kids('wf-6')).toEqual(['wf-7', 'wf-10']);
  expect(kids('wf-7')).toEqual(['wf-8', 'wf-9']);
  // A Retry's outbound node is its last attempt; a hook is its task's child.
  expect(kids('wf-9')).toEqual(['wf-12']);
  expect(kids('wf-8')).toEqual([]);
  expect(kids('wf-10')).toEqual(['wf-11', 'wf-12']);
  // The DAG's outbound node (its target D) leads to the next step group.
  expect(s.nodes['wf-5']!.outboundNodes).toEqual(['wf-12']);
  expect(kids('wf-12')).toEqual(['wf-13']);
  expect(kids('wf-13')).toEqual(['wf-14']);
  expect(s.nodes.wf!.outboundNodes).toEqual(['wf-14']);
  expect(s.nodes.wf!.boundaryID).toBeUndefined();
  expect(s.nodes['wf-1']!.boundaryID).toBe('wf');
  expect(s.nodes['wf-5']!.boundaryID).toBe('wf');
  expect(s.nodes['wf-6']!.boundaryID).toBe('wf-5');
  expect(s.nodes['wf-8']!.boundaryID).toBe('wf-5');
  expect(s.nodes['wf-15']!.boundaryID).toBeUndefined();
  expect(s.nodes['wf-14']!.type).toBe('Pod');
  expect(s.nodes['wf-2']!.outputs).toEqual({ parameters: [{ name: 'z', value: '1' }, { name: 'a', value: '2' }], result: '1' });
  expect(s.nodes['wf-12']).toMatchObject({ type: 'Skipped', phase: 'Omitted', templateName: 'echo' });
});
