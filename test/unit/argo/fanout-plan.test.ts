// How the interpreter weighs calls and slices loops at scale (workflows/argo/fanout-plan.ts), and how a
// client merges a run's child workflows' node status (argo/slices.ts).
import { literalItems, sliceSize, TemplateSizes, underRoot } from '../../../workflows/argo/fanout-plan.js';
import { mergeSlices } from '../../../argo/slices.js';
import type { ArgoNode, ArgoStatus, Json } from '../../../argo/lang/types.js';

const pod = (name: string): Json => ({ name, container: { image: 'alpine' } });
const dag = (name: string, callee: string, n: number): Json => ({ name, dag: { tasks: Array.from({ length: n }, (_, i) => ({ name: `t${i}`, template: callee })) } });

test('literal loop sizes: withItems, withSequence count or start/end; withParam and expressions count one', () => {
  expect(literalItems({ withItems: [1, 2, 3] })).toBe(3);
  expect(literalItems({ withSequence: { count: '40' } })).toBe(40);
  expect(literalItems({ withSequence: { start: '5', end: '1' } })).toBe(5);
  expect(literalItems({ withSequence: { count: '{{inputs.parameters.n}}' } })).toBe(1);
  expect(literalItems({ withParam: '{{steps.a.outputs.result}}' })).toBe(1);
  expect(literalItems({})).toBe(1);
});

test('a nested DAG weighs its leaves; suspend, daemons, locks, failFast and recursion are kept in the workflow', () => {
  const t = new Map<string, Json>([
    ['leaf', pod('leaf')],
    ['l3', dag('l3', 'leaf', 30)],
    ['l2', dag('l2', 'l3', 30)],
    ['l1', dag('l1', 'l2', 30)],
    ['loop', { name: 'loop', steps: [[{ name: 'x', template: 'l3', withSequence: { count: '100' } }]] }],
    ['wait', { name: 'wait', suspend: {} }],
    ['waits', dag('waits', 'wait', 3)],
    ['self', { name: 'self', steps: [[{ name: 'again', template: 'self' }]] }],
    ['locked', { ...dag('locked', 'leaf', 2), synchronization: { mutex: { name: 'm' } } }],
  ]);
  const sizes = new TemplateSizes(t);
  expect(sizes.of(t.get('l1')!)).toEqual({ weight: 27_000, safe: true });
  expect(sizes.of(t.get('loop')!)).toEqual({ weight: 3_000, safe: true });
  expect(sizes.of(t.get('waits')!).safe).toBe(false);
  expect(sizes.of(t.get('self')!).safe).toBe(false);
  expect(sizes.of(t.get('locked')!).safe).toBe(false);
});

test('slices: at most the budget of leaves each, one item at least, at most fanOut children per loop', () => {
  const budget = { nodes: 1000, fanOut: 100 };
  expect(sliceSize(10_000, 1, budget)).toBe(1000);
  expect(sliceSize(50_000, 1, budget)).toBe(1000);
  expect(sliceSize(30, 900, budget)).toBe(1);
  expect(sliceSize(5, 27_000, budget)).toBe(1);
  // 1,000,000 items: 100 children of 10,000, each of which splits again.
  expect(sliceSize(1_000_000, 1, budget)).toBe(10_000);
});

test('a call is under the workflow root when its parent is a root or a retry attempt of one', () => {
  const roots = new Set(['wf', 'wf.onExit']);
  expect(underRoot(roots, 'wf')).toBe(true);
  expect(underRoot(roots, 'wf(2)')).toBe(true);
  expect(underRoot(roots, 'wf.t1')).toBe(false);
});

test('mergeSlices adds every child’s nodes (children of children too) and links them under their parents', async () => {
  const node = (id: string, parentId?: string, children: string[] = []): ArgoNode => ({ id, name: id, type: 'Pod', phase: 'Succeeded', startedAt: '', children, ...(parentId ? { parentId } : {}) }) as ArgoNode;
  const root: ArgoStatus = { name: 'wf', phase: 'Succeeded', startedAt: '', entrypoint: 'main', nodes: { wf: node('wf', undefined, ['wf-1']), 'wf-1': node('wf-1', 'wf') }, slices: ['c1', 'c2'] };
  const children: Record<string, ArgoStatus> = {
    c1: { ...root, nodes: { 'wf-f1-1': node('wf-f1-1', 'wf-1') }, slices: ['c1.1'] },
    c2: { ...root, nodes: { 'wf-f2-1': node('wf-f2-1', 'wf-1') }, slices: [] },
    'c1.1': { ...root, nodes: { 'wf-f1.1-1': node('wf-f1.1-1', 'wf-f1-1') }, slices: [] },
  };
  const merged = await mergeSlices(root, async (id) => children[id]);
  expect(Object.keys(merged.nodes).sort()).toEqual(['wf', 'wf-1', 'wf-f1-1', 'wf-f1.1-1', 'wf-f2-1']);
  expect(merged.nodes['wf-1']!.children).toEqual(['wf-f1-1', 'wf-f2-1']);
  expect(merged.nodes['wf-f1-1']!.children).toEqual(['wf-f1.1-1']);
  expect(merged.slices).toEqual(['c1', 'c2', 'c1.1']);
  // The input is not changed, and a child that cannot be read leaves the rest merged.
  expect(root.nodes['wf-1']!.children).toEqual([]);
  const partial = await mergeSlices(root, async (id) => (id === 'c2' ? undefined : children[id]));
  expect(Object.keys(partial.nodes)).toHaveLength(4);
});
