// retryStrategy decisions of the Argo interpreter (workflows/argo/retry.ts), without a server.
import { expressionRetries, lastRetryScope, pastMaxDuration, policyRetries, retryDelay, retryPlan } from '../../../workflows/argo/retry.js';

test('the plan reads limit (a global tag), policy and backoff', () => {
  expect(retryPlan({ limit: '{{workflow.parameters.n}}', backoff: { duration: '2s', factor: 3, cap: '1m', maxDuration: '5m' } }, { 'workflow.parameters.n': '4' })).toEqual({
    limit: 4,
    policy: 'OnFailure',
    expression: undefined,
    baseMs: 2000,
    factor: 3,
    capMs: 60_000,
    maxMs: 300_000,
  });
  expect(retryPlan({}, {})).toMatchObject({ limit: Infinity, policy: 'OnFailure', baseMs: 0, factor: 1, capMs: undefined, maxMs: undefined });
  expect(retryPlan({ expression: 'true' }, {}).policy).toBe('Always');
  expect(retryPlan({ expression: 'true', retryPolicy: 'OnError' }, {}).policy).toBe('OnError');
  expect(retryPlan({ backoff: { duration: 'soon' } }, {}).baseMs).toBe(0);
});

test('the policy and limit decide which failures are retried', () => {
  const plan = (policy: string, limit = 2) => ({ ...retryPlan({}, {}), policy, limit });
  expect(policyRetries(plan('OnFailure'), 'Failed', 0)).toBe(true);
  expect(policyRetries(plan('OnFailure'), 'Error', 0)).toBe(false);
  expect(policyRetries(plan('OnError'), 'Error', 0)).toBe(true);
  expect(policyRetries(plan('OnTransientError'), 'Failed', 0)).toBe(false);
  expect(policyRetries(plan('Always'), 'Error', 1)).toBe(true);
  expect(policyRetries(plan('Always'), 'Error', 2)).toBe(false);
  expect(policyRetries(plan('Never'), 'Failed', 0)).toBe(false);
  // A limit that is not a number does not stop retrying (as the interpreter always did).
  expect(policyRetries(plan('Always', NaN), 'Failed', 50)).toBe(true);
});

test('expression sees lastRetry.*; an error in it stops retrying', () => {
  const last = { id: 'n-1', phase: 'Failed' as const, message: 'exit 2', outputs: { parameters: {}, artifacts: {}, exitCode: '2' } };
  const node = { id: 'n-1', name: 'n', displayName: 'n', type: 'Pod' as const, phase: 'Failed' as const, children: [], startedAt: '2024-01-01T00:00:00.000Z', finishedAt: '2024-01-01T00:00:01.500Z' };
  const scope = lastRetryScope(last, node);
  expect(scope).toEqual({ 'lastRetry.exitCode': '2', 'lastRetry.status': 'Failed', 'lastRetry.message': 'exit 2', 'lastRetry.duration': '1.5' });
  expect(lastRetryScope({ ...last, message: undefined, outputs: { parameters: {}, artifacts: {} } })).toEqual({ 'lastRetry.exitCode': '', 'lastRetry.status': 'Failed', 'lastRetry.message': '', 'lastRetry.duration': '0' });
  const plan = (expression?: string) => ({ ...retryPlan({}, {}), expression });
  expect(expressionRetries(plan(), scope)).toBe(true);
  expect(expressionRetries(plan("lastRetry.status == 'Failed'"), scope)).toBe(true);
  expect(expressionRetries(plan("lastRetry.exitCode == '1'"), scope)).toBe(false);
  expect(expressionRetries(plan('(('), scope)).toBe(false);
});

test('backoff grows by factor up to the cap; maxDuration bounds the next start', () => {
  const plan = retryPlan({ backoff: { duration: '1s', factor: 2, cap: '5s', maxDuration: '10s' } }, {});
  expect([0, 1, 2, 3, 4].map((a) => retryDelay(plan, a))).toEqual([1000, 2000, 4000, 5000, 5000]);
  expect(retryDelay(retryPlan({}, {}), 3)).toBe(0);
  expect(pastMaxDuration(plan, 0, 9000, 1000)).toBe(false);
  expect(pastMaxDuration(plan, 0, 9000, 1001)).toBe(true);
  expect(pastMaxDuration(retryPlan({}, {}), 0, 1e12, 1e12)).toBe(false);
});
