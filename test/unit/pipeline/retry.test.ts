// Job retry policies and the delays that become workflow timers.
import { PipelineSpecSchema, type PipelineSpecInput } from '../../../contract/pipeline.js';
import { DEFAULT_RETRY, QUOTA_DEADLINE_MARGIN_MS, deployAttempts, quotaBackoffMs, quotaTimeLeftMs, retryDelayMs, stageRetry } from '../../../workflows/pipeline/retry.js';

const spec = (input: Partial<PipelineSpecInput> = {}) => PipelineSpecSchema.parse({ name: 'demo', ...input });

describe('stageRetry', () => {
  test('defaults: 3 attempts, 10 s doubling up to 5 min', () => {
    expect(stageRetry(spec(), 'train')).toEqual(DEFAULT_RETRY);
    expect(DEFAULT_RETRY).toEqual({ maxAttempts: 3, initialInterval: '10s', backoffCoefficient: 2, maximumInterval: '5m' });
  });

  test("the stage's fields win over the spec's, which win over the defaults", () => {
    const s = spec({ retry: { maxAttempts: 5, initialInterval: '1s' }, stages: { train: { retry: { maxAttempts: 2 } } } });
    expect(stageRetry(s, 'train')).toEqual({ maxAttempts: 2, initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m' });
    expect(stageRetry(s, 'preprocess')).toEqual({ maxAttempts: 5, initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m' });
  });
});

test('retryDelayMs backs off exponentially and is capped', () => {
  const r = { maxAttempts: 10, initialInterval: '10s', backoffCoefficient: 2, maximumInterval: '1m' };
  expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(r, n))).toEqual([10_000, 20_000, 40_000, 60_000, 60_000]);
  expect(retryDelayMs({ ...r, backoffCoefficient: 1 }, 7)).toBe(10_000);
});

test('deploy calls take their attempts from the deploy stage, then the spec, then 3', () => {
  expect(deployAttempts(spec())).toBe(3);
  expect(deployAttempts(spec({ retry: { maxAttempts: 5 } }))).toBe(5);
  expect(deployAttempts(spec({ retry: { maxAttempts: 5 }, stages: { deploy: { retry: { maxAttempts: 1 } } } }))).toBe(1);
});

describe('quota waits', () => {
  test('stop a margin before the deadline, and never without one', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(quotaTimeLeftMs('2030-01-01T00:00:10Z', now)).toBe(10_000 - QUOTA_DEADLINE_MARGIN_MS);
    expect(quotaTimeLeftMs('2029-12-31T23:59:59Z', now)).toBeLessThan(0);
    expect(quotaTimeLeftMs(undefined, now)).toBe(Infinity);
  });

  test('double from the ledger interval, up to ten intervals, and never past the time left', () => {
    expect([0, 1, 2, 3, 4, 5].map((round) => quotaBackoffMs(1000, round, Infinity))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(quotaBackoffMs(1000, 3, 2500)).toBe(2500);
  });
});
