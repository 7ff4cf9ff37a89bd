// The defaults are consistent with each other and with the pipeline tuning defaults they work under.
import { DEFAULTS, TUNING_DEFAULTS, defaultsProblems } from '../../../config/defaults.js';
import { TUNING_DEFAULTS as CONTRACT_TUNING } from '../../../contract/tuning.js';
import { existsSync } from 'node:fs';

test('the shipped defaults are consistent', () => {
  expect(defaultsProblems()).toEqual([]);
});

test('tuning defaults are the contract\'s, not a copy', () => {
  expect(TUNING_DEFAULTS).toBe(CONTRACT_TUNING);
});

test('heartbeats must be well below the heartbeat timeout; the watch cadence does not follow the poll gap', () => {
  // The default poll ceiling (64 s) is beyond the heartbeat timeout (30 s): no problem, the watch
  // activities heartbeat every 10 s whatever the gap.
  expect(TUNING_DEFAULTS.pollMaxMs).toBeGreaterThan(TUNING_DEFAULTS.heartbeatTimeoutMs);
  // The progress refresh of a running job is not a heartbeat any more either.
  expect(defaultsProblems({ ...DEFAULTS, runningPollMs: 15_000 })).toEqual([]);
  expect(defaultsProblems(DEFAULTS, { ...TUNING_DEFAULTS, heartbeatTimeoutMs: 2000 })).toEqual([
    expect.stringMatching(/^heartbeatThrottleMs/),
    "the watch activities' heartbeat cadence (666 ms, a third of the heartbeat timeout 2000 ms) must not be finer than heartbeatThrottleMs (1000 ms), which would hold them back",
    expect.stringMatching(/^k8sHeartbeatMs/),
    expect.stringMatching(/^httpTimeoutMs \(30000 ms\) must not exceed the heartbeat timeout/),
  ]);
});

test('a job under the default failover lease is observed (and its lease renewed) at least three times per TTL', () => {
  expect(defaultsProblems(DEFAULTS, { ...TUNING_DEFAULTS, failover: { graceMs: 1000 } })).toEqual(['the longest poll gap under the default failover lease (200 ms) must be at most a third of the lease (500 ms)']);
});

test('other inconsistencies are named', () => {
  expect(defaultsProblems({ ...DEFAULTS, devUiPort: DEFAULTS.devPort, pollInitialMs: 5000, tokenTimeoutMs: 60_000 })).toEqual([
    expect.stringMatching(/^tokenTimeoutMs/),
    expect.stringMatching(/^pollInitialMs/),
    'devPort and devUiPort must differ (both 7233)',
  ]);
});

test('the default Argo schema file exists', () => {
  expect(existsSync(DEFAULTS.argoSchemaFile)).toBe(true);
});
