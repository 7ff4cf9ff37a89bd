// A loop slice's items as its child returns them (workflows/argo/fanout-plan.ts SliceItems): the parent
// builds the same loop node from them as from full results, in fewer bytes of its history.
import { encodeItems, sliceResults } from '../../../workflows/argo/fanout-plan.js';
import { loopOutcome } from '../../../workflows/argo/loops.js';
import type { NodeResult } from '../../../workflows/argo/model.js';

const item = (i: number, over: Partial<NodeResult> = {}): NodeResult => ({ id: `run-f3-${100 + i}`, phase: 'Succeeded', message: 'ok', outputs: { parameters: {}, artifacts: { log: `/tmp/${i}` }, result: String(i), exitCode: '0' }, ...over });

const mixed: (NodeResult | undefined)[] = [
  undefined, // kept from starting by failFast
  item(1, { outputs: { parameters: { b: '2', a: '{"k":1}' }, artifacts: {}, result: '{"x":1}' } }),
  item(2, { phase: 'Failed', message: 'exit code 3' }),
  item(3, { phase: 'Skipped', message: "when 'false' evaluated false", outputs: { parameters: {}, artifacts: {} } }),
  item(4, { phase: 'Error', message: 'pod deleted' }),
  item(5),
];

test('the loop node from the items is the loop node from the full results (Argo aggregate and the one before it)', () => {
  const back = sliceResults({ items: JSON.parse(JSON.stringify(encodeItems(mixed))), roots: [], globals: {} });
  expect(back.map((r) => r === undefined)).toEqual(mixed.map((r) => r === undefined));
  const full = mixed.filter((r): r is NodeResult => !!r);
  const compact = back.filter((r): r is NodeResult => !!r);
  for (const argo of [true, false]) expect(loopOutcome(compact, argo)).toEqual(loopOutcome(full, argo));
  expect(compact.map((r) => r.phase)).toEqual(full.map((r) => r.phase));
  // What call.ts reads of the items besides: the first failed item's id, else the first started one's.
  expect(compact.find((r) => r.phase === 'Failed')!.id).toBe('run-f3-102');
  expect(compact[0]!.id).toBe('run-f3-101');
});

test('the full form (children recorded before ARGO_PATCHES.sliceItems) reads as before', () => {
  const results = mixed.map((r) => r ?? null);
  expect(sliceResults({ results, roots: [], globals: {} })).toEqual(mixed);
});

test('no results or parameters: neither list is sent; a trivial pod costs a few bytes, not a NodeResult', () => {
  const quiet = encodeItems([item(0, { outputs: { parameters: {}, artifacts: {} } })]);
  expect(quiet.result).toBeUndefined();
  expect(quiet.parameters).toBeUndefined();
  const many = Array.from({ length: 500 }, (_, i) => item(i));
  const compactBytes = JSON.stringify(encodeItems(many)).length;
  const fullBytes = JSON.stringify(many).length;
  expect(compactBytes * 10).toBeLessThan(fullBytes);
});

