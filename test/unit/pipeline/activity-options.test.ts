// The activity option profiles and the tuning defaults the pipeline runs with. These values were
// inline in the workflow before; spelled out here so that a change to one is a visible change.
import { NON_RETRYABLE_TYPES } from '../../../contract/failures.js';
import { compileTuning } from '../../../contract/tuning.js';
import { OBSERVATION_RETRY, deployCall, localBookkeeping, readinessGate, rollout, shortIo, staging, watchJob } from '../../../workflows/pipeline/activity-options.js';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const untilItEnds = { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: NON_RETRYABLE_TYPES };

test('observation retries: 10 attempts, 1 s doubling to 30 s, never a non-retryable type', () => {
  expect(OBSERVATION_RETRY).toEqual({ initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE_TYPES });
});

test('each profile', () => {
  // Short calls carry a heartbeat timeout the worker's keep-alive (workers/keepalive.ts) meets while they run: a lost task is retried after it.
  expect(shortIo()).toEqual({ startToCloseTimeout: '2m', heartbeatTimeout: '20s', retry: OBSERVATION_RETRY });
  expect(localBookkeeping()).toEqual({ startToCloseTimeout: '2m', retry: OBSERVATION_RETRY });
  expect(watchJob(600_000, 30_000)).toEqual({ startToCloseTimeout: 600_000 + 3_600_000, heartbeatTimeout: 30_000, retry: untilItEnds });
  expect(staging(5000)).toEqual({ startToCloseTimeout: '30m', heartbeatTimeout: 5000, retry: OBSERVATION_RETRY });
  expect(deployCall(2)).toEqual({ startToCloseTimeout: '1m', heartbeatTimeout: '20s', retry: { ...OBSERVATION_RETRY, maximumAttempts: 2 } });
  expect(readinessGate(120_000, 30_000)).toEqual({ startToCloseTimeout: 150_000, heartbeatTimeout: 30_000, retry: { ...OBSERVATION_RETRY, maximumAttempts: 3 } });
  expect(rollout(30_000)).toEqual({ startToCloseTimeout: '30m', heartbeatTimeout: 30_000, retry: untilItEnds });
});

test('the tuning defaults the pipeline used to spell inline', () => {
  expect(compileTuning({})).toEqual({ heartbeatTimeoutMs: 30_000, pollMaxMs: 64_000, failover: undefined });
  expect(compileTuning({ failover: {} }).failover).toEqual({ sites: undefined, graceMs: 60_000, leaseTtlMs: 30_000, maxFailovers: 3, waitIntervalMs: 30_000, maxWaitMs: 30 * 60_000 });
  expect(compileTuning({ failover: { graceMs: 20_000 } }).failover?.leaseTtlMs).toBe(10_000);
});

test('the pure pipeline modules stay out of the workflow runtime', () => {
  const dir = fileURLToPath(new URL('../../../workflows/pipeline/', import.meta.url));
  const pure = ['activity-options.ts', 'identity.ts', 'job-shape.ts', 'messages.ts', 'patches.ts', 'retry.ts'];
  expect(readdirSync(dir)).toEqual(expect.arrayContaining(pure));
  for (const f of pure) expect({ f, imports: /from '@temporalio\/workflow'/.test(readFileSync(dir + f, 'utf8')) }).toEqual({ f, imports: false });
});
