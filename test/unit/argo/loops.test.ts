// Loop expansion and aggregation of the Argo interpreter (workflows/argo/loops.ts), without a server.
import { expandItems, itemLabel, itemScope, loopOutcome, printf } from '../../../workflows/argo/loops.js';
import type { NodeResult } from '../../../workflows/argo/model.js';
import { MAX_LOOP_ITEMS } from '../../../argo/lang/sequence.js';

const result = (id: string, phase: NodeResult['phase'], extra: Partial<NodeResult['outputs']> = {}, message?: string): NodeResult => ({
  id,
  phase,
  message,
  outputs: { parameters: {}, artifacts: {}, ...extra },
});

test('printf pads, converts and leaves text alone', () => {
  expect(printf('%d', 7)).toBe('7');
  expect(printf('id-%02d', 7)).toBe('id-07');
  expect(printf('%4d|', 7)).toBe('   7|');
  expect(printf('%x %X %o %s', 255)).toBe('ff FF 377 255');
  expect(printf('no verbs', 3)).toBe('no verbs');
});

test('withItems is substituted; withParam must be a JSON list', () => {
  expect(expandItems({ withItems: ['{{x}}', { a: '{{x}}' }] }, { x: '1' })).toEqual(['1', { a: '1' }]);
  expect(expandItems({ withParam: '{{l}}' }, { l: '[1,"b"]' })).toEqual([1, 'b']);
  expect(() => expandItems({ withParam: 'nope' }, {})).toThrow(/could not be parsed as a JSON list: nope/);
  expect(() => expandItems({ withParam: '{"a":1}' }, {})).toThrow(/is not a JSON list/);
  expect(expandItems({ name: 'plain' }, {})).toBeUndefined();
});

test('withSequence counts, ends, runs backwards and formats', () => {
  expect(expandItems({ withSequence: { count: '3' } }, {})).toEqual(['0', '1', '2']);
  expect(expandItems({ withSequence: { start: '2', end: '{{e}}' } }, { e: '4' })).toEqual(['2', '3', '4']);
  expect(expandItems({ withSequence: { start: 3, end: 1 } }, {})).toEqual(['3', '2', '1']);
  expect(expandItems({ withSequence: { start: 1, count: 2, format: 'n%02d' } }, {})).toEqual(['n01', 'n02']);
  expect(() => expandItems({ withSequence: { count: 2, end: 3 } }, {})).toThrow(/only one of count or end/);
});

test('withSequence values are read as Argo reads them (strconv.Atoi), and a loop has at most MAX_LOOP_ITEMS items', () => {
  // What used to be made up: NaN gave no items, a missing count two ("0" and "-1"), "1e3" a thousand.
  expect(() => expandItems({ withSequence: { count: 'abc' } }, {})).toThrow('withSequence.count: "abc" is not a whole number');
  expect(() => expandItems({ withSequence: { count: '{{n}}' } }, { n: '1e3' })).toThrow('withSequence.count: "1e3" is not a whole number');
  expect(() => expandItems({ withSequence: { start: 1.5, end: 3 } }, {})).toThrow('withSequence.start: "1.5" is not a whole number');
  expect(() => expandItems({ withSequence: { start: '0' } }, {})).toThrow('withSequence: neither end nor count was specified');
  expect(() => expandItems({ withSequence: { count: '' } }, {})).toThrow(/count: "" is not a whole number/);
  // Argo's own edge cases: a sign, count 0 (no items), a negative count (counts down from start).
  expect(expandItems({ withSequence: { start: '+2', count: '2' } }, {})).toEqual(['2', '3']);
  expect(expandItems({ withSequence: { count: '0' } }, {})).toEqual([]);
  expect(expandItems({ withSequence: { start: 1, count: -2 } }, {})).toEqual(['1', '0', '-1', '-2']);
  // The bound, whatever the loop's kind; at it, the loop is made.
  expect(() => expandItems({ withSequence: { count: '100000000' } }, {})).toThrow(`withSequence: 100000000 items (start 0, end 99999999), over the limit of ${MAX_LOOP_ITEMS} a loop may have`);
  expect(() => expandItems({ withSequence: { start: '-9999999999999999999', end: '0' } }, {})).toThrow(/start: .* is not a whole number/);
  expect(expandItems({ withSequence: { count: String(MAX_LOOP_ITEMS) } }, {})).toHaveLength(MAX_LOOP_ITEMS);
  expect(() => expandItems({ withParam: '{{l}}' }, { l: JSON.stringify(Array(MAX_LOOP_ITEMS + 1).fill(1)) })).toThrow(`withParam: ${MAX_LOOP_ITEMS + 1} items, over the limit`);
  expect(() => expandItems({ withItems: Array(MAX_LOOP_ITEMS + 1).fill('x') }, {})).toThrow(`withItems: ${MAX_LOOP_ITEMS + 1} items, over the limit`);
});

test('runs recorded before the checks (ARGO_PATCHES.loopChecks) expand as they did', () => {
  expect(expandItems({ withSequence: { count: 'abc' } }, {}, false)).toEqual([]);
  expect(expandItems({ withSequence: { start: '0' } }, {}, false)).toEqual(['0', '-1']);
  expect(expandItems({ withItems: Array(MAX_LOOP_ITEMS + 1).fill('x') }, {}, false)).toHaveLength(MAX_LOOP_ITEMS + 1);
});

test('an item is visible as item and, for objects, item.<key>', () => {
  expect(itemScope({ a: 'x' }, 'v')).toEqual({ a: 'x', item: 'v' });
  expect(itemScope({}, { k: 1, s: 'y' })).toEqual({ item: '{"k":1,"s":"y"}', 'item.k': '1', 'item.s': 'y' });
  expect(itemScope({}, [1, 2])).toEqual({ item: '[1,2]' });
});

test('item labels are Argo’s', () => {
  expect(itemLabel('a')).toBe('a');
  expect(itemLabel(3)).toBe('3');
  expect(itemLabel({ os: 'linux', v: 2 })).toBe('os:linux,v:2');
  expect(itemLabel([1])).toBe('[1]');
});

test('a loop’s outcome aggregates results and parameters and takes the first failure', () => {
  const ok = loopOutcome([result('a', 'Succeeded', { result: '{"x":1}', parameters: { p: '1' } }), result('b', 'Succeeded', { result: 'plain' })]);
  // itemParameters: Argo's `{{steps.X.outputs.parameters}}`, one map per item that produced any.
  expect(ok).toEqual({ phase: 'Succeeded', message: undefined, outputs: { parameters: { p: '["1"]' }, artifacts: {}, result: '[{"x":1},"plain"]' }, itemParameters: [{ p: '1' }] });
  const bad = loopOutcome([result('a', 'Succeeded'), result('b', 'Error', {}, 'boom'), result('c', 'Failed', {}, 'later')]);
  expect(bad.phase).toBe('Error');
  expect(bad.message).toBe('boom');
  expect(loopOutcome([result('a', 'Skipped'), result('b', 'Skipped')]).phase).toBe('Skipped');
  expect(loopOutcome([]).phase).toBe('Succeeded');
  expect(loopOutcome([]).outputs.result).toBeUndefined();
});

test('Argo’s aggregate (loopAggregate): typed results, key-sorted maps, only Succeeded items, nested lists only of objects', () => {
  const r = loopOutcome(
    [
      result('a', 'Succeeded', { result: '2', parameters: { z: '1', a: '{"k":1}' } }),
      result('b', 'Failed', { result: '3', parameters: { z: '9', a: '{"k":9}' } }),
      result('c', 'Succeeded', { result: '4', parameters: { z: '2', a: '{"y":2,"b":1}' } }),
      result('d', 'Succeeded', { result: 'not json' }),
    ],
    true,
  );
  expect(r.outputs.result).toBe('[2,4,"not json"]');
  // Every value an object: nested (Go re-marshals the maps with sorted keys); a plain value: strings.
  expect(r.outputs.parameters).toEqual({ a: '[{"k":1},{"b":1,"y":2}]', z: '["1","2"]' });
  expect(Object.keys(r.outputs.parameters)).toEqual(['a', 'z']);
  expect(r.itemParameters.map((m) => Object.keys(m))).toEqual([['a', 'z'], ['a', 'z']]);
  expect(JSON.stringify(r.itemParameters)).toBe('[{"a":"{\\"k\\":1}","z":"1"},{"a":"{\\"y\\":2,\\"b\\":1}","z":"2"}]');
  expect(r.phase).toBe('Failed');
  // Argo sets the aggregate result even when no item printed one.
  expect(loopOutcome([result('a', 'Succeeded')], true).outputs.result).toBe('[]');
  // Without the patch (recorded runs): strings, every item, insertion order.
  expect(loopOutcome([result('a', 'Succeeded', { result: '2', parameters: { z: '1', a: '2' } })]).itemParameters.map((m) => Object.keys(m))).toEqual([['z', 'a']]);
  expect(loopOutcome([result('a', 'Succeeded', { result: '2' })]).outputs.result).toBe('["2"]');
});
