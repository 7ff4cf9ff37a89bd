// memoize keys and caches of the Argo interpreter (workflows/argo/memoize.ts), without a server.
import { memoCache, memoHitMessage, memoKey } from '../../../workflows/argo/memoize.js';

test('cache name and maxAge', () => {
  expect(memoCache({ key: 'k', cache: { configMap: { name: 'cm' } }, maxAge: '1h' })).toEqual({ cache: 'cm', maxAgeMs: 3_600_000 });
  expect(memoCache({ key: 'k' })).toEqual({ cache: 'default', maxAgeMs: undefined });
  expect(memoCache({ key: 'k', maxAge: '' }).maxAgeMs).toBeUndefined();
});

test('the key is substituted in the call’s input scope; unbindable inputs mean no key', () => {
  const template = { name: 't', inputs: { parameters: [{ name: 'x' }] } };
  const call = { template, args: { parameters: [{ name: 'x', value: '{{workflow.name}}' }] }, name: 'n', displayName: 'n', extra: { retries: '1' } };
  expect(memoKey({ key: '{{inputs.parameters.x}}-{{retries}}-{{workflow.name}}' }, call, { 'workflow.name': 'wf' }, {})).toBe('wf-1-wf');
  expect(memoKey({ key: 'k' }, { ...call, args: {} }, {}, {})).toBeUndefined();
  expect(memoKey({}, call, {}, {})).toBe('');
});

test('the hit message names cache, key and source node', () => {
  expect(memoHitMessage('c', 'k', 'wf-2')).toBe('memoized: cache c key k (from wf-2)');
  expect(memoHitMessage('c', 'k')).toBe('memoized: cache c key k (from ?)');
});
