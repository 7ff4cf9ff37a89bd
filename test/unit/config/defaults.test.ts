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

test("the await activity's heartbeat must be well below the heartbeat timeout", () => {
  expect(defaultsProblems({ ...DEFAULTS, runningPollMs: 15_000 })).toEqual([expect.stringMatching(/^runningPollMs .* must be at most a third of the heartbeat timeout \(30000 ms\)$/)]);
  expect(defaultsProblems(DEFAULTS, { heartbeatTimeoutMs: 2000 })).toEqual([
    expect.stringMatching(/^heartbeatThrottleMs/),
    expect.stringMatching(/^runningPollMs/),
    expect.stringMatching(/^k8sHeartbeatMs/),
    expect.stringMatching(/^httpTimeoutMs \(30000 ms\) must not exceed the heartbeat timeout/),
  ]);
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
