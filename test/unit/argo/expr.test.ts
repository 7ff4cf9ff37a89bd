// The sandbox-safe helpers: expr-lang subset, govaluate `when`, depends logic, tags, jsonpath.
import { evaluateExpr, parseExpr } from '../../../argo/lang/expr.js';
import { evaluateWhen } from '../../../argo/lang/govaluate.js';
import { evaluateDepends, parseDepends } from '../../../argo/lang/depends.js';
import { substitute } from '../../../argo/lang/tags.js';
import { b64enc } from '../../../argo/lang/sprig.js';

describe('expr subset', () => {
  test.each([
    ['1 + 2 * 3', {}, 7],
    ["asInt(inputs.parameters.foo) * 10", { inputs: { parameters: { foo: '3' } } }, 30],
    ["inputs.parameters['should-print'] == 'true'", { inputs: { parameters: { 'should-print': 'true' } } }, true],
    ['toJson(filter([1, 3], {# > 1}))', {}, '[3]'],
    ["map([1,2], {# * 2})", {}, [2, 4]],
    ["x ?? 'd'", { x: null }, 'd'],
    ["'a' in ['a', 'b'] && not ('c' in ['a'])", {}, true],
    ["jsonpath('{\"e\":[{\"n\":\"A\",\"age\":43},{\"n\":\"B\",\"age\":50}]}', '$.e[?(@.age>42 && @.age<44)].n')", {}, ['A']],
    ["sprig.b64dec(s)", { s: b64enc('héllo') }, 'héllo'],
    ["sprig.date('2006', t)", { t: '2024-05-01T00:00:00Z' }, '2024'],
    ['len("abc") > 2 ? "long" : "short"', {}, 'long'],
  ])('%s', (src, env, want) => {
    expect(evaluateExpr(src, env as Record<string, unknown>)).toEqual(want);
  });

  test('syntax errors are reported, not evaluated', () => {
    expect(() => parseExpr('1 +')).toThrow(/end of expression/);
    expect(() => parseExpr('a ) b')).toThrow(/unexpected/);
  });
});

describe('govaluate when', () => {
  test.each([
    ['heads == heads', true],
    ['tails == heads', false],
    ['5 < 10', true],
    ['Succeeded != Succeeded', false],
    ['hello =~ hel', true],
    ['true', true],
    ['1 != 1 && 2 != 2', false],
  ])('%s', (w, want) => expect(evaluateWhen(w)).toBe(want));

  test('a non-boolean result is an error', () => expect(() => evaluateWhen('1 + 1')).toThrow(/Expected boolean/));
});

describe('depends', () => {
  const done = { A: { phase: 'Succeeded' as const }, B: { phase: 'Failed' as const }, C: { phase: 'Skipped' as const } };
  test.each([
    ['A', true],
    ['A && C', true],
    ['B', false],
    ['B.Failed && A', true],
    ['!B.Succeeded', true],
    ['(A.Failed || B.Failed) && C.Skipped', true],
  ])('%s', (d, want) => expect(evaluateDepends(parseDepends(d), done)).toBe(want));
});

describe('tags', () => {
  test('simple and expression tags; unknown simple tags stay verbatim', () => {
    const scope = { 'inputs.parameters.x': '4', 'steps.a.outputs.result': 'heads' };
    expect(substitute('{{inputs.parameters.x}}-{{ steps.a.outputs.result }}-{{=asInt(inputs.parameters.x) + 1}}-{{nope}}', scope)).toBe('4-heads-5-{{nope}}');
  });
});
