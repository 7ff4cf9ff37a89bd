// A launcher's tuning is checked at the boundary (contract/tuning.ts validateTuning, called by the SDK's
// launch): its shape, and timings that cannot work with the worker, each refused naming its field.
import { InputError } from '../../../contract/input-error.js';
import { TUNING_DEFAULTS, validateTuning } from '../../../contract/tuning.js';
import { DEFAULTS } from '../../../config/defaults.js';

const worker = { heartbeatThrottleMs: DEFAULTS.heartbeatThrottleMs };
const refusal = (t: unknown): InputError => {
  try {
    validateTuning(t, worker);
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error(`tuning ${JSON.stringify(t)} was accepted`);
};

test('the defaults, and the tunings the suites launch with, are accepted', () => {
  expect(validateTuning(undefined, worker)).toEqual({});
  expect(validateTuning({ ...TUNING_DEFAULTS, failover: {} }, worker)).toMatchObject({ heartbeatTimeoutMs: 30_000 });
  for (const t of [{ heartbeatTimeoutMs: 2000, pollMaxMs: 500 }, { heartbeatTimeoutMs: 3000, pollMaxMs: 500, failover: { sites: ['zurich', 'lugano'], graceMs: 8000, leaseTtlMs: 4000 } }, { pollMaxMs: 3_600_000 }]) {
    expect(validateTuning(t, worker)).toEqual(t);
  }
});

test('a heartbeat timeout below twice the worker heartbeat cadence is refused with why and what to use', () => {
  const e = refusal({ heartbeatTimeoutMs: 1500 });
  expect(e.issues).toEqual([{ path: 'tuning.heartbeatTimeoutMs', message: "1500 ms is below twice the worker's heartbeat cadence (1000 ms: the worker sends heartbeats at most once per 1000 ms), so a healthy watch could time out; use at least 2000 ms" }]);
  expect(e.message).toBe("invalid pipeline tuning\n  - tuning.heartbeatTimeoutMs: 1500 ms is below twice the worker's heartbeat cadence (1000 ms: the worker sends heartbeats at most once per 1000 ms), so a healthy watch could time out; use at least 2000 ms");
  // A slower worker throttle raises the floor.
  expect(() => validateTuning({ heartbeatTimeoutMs: 5000 }, { heartbeatThrottleMs: 3000 })).toThrow(/use at least 6000 ms/);
});

test('shape errors and lease problems name their fields', () => {
  expect(refusal({ heartbeatTimeoutMs: 500, pollMax: 1 }).issues.map((i) => i.path)).toEqual(['tuning.heartbeatTimeoutMs', 'tuning.pollMax']);
  expect(refusal({ failover: { graceMs: 8000, leaseTtlMs: 6000 } }).issues).toEqual([{ path: 'tuning.failover.leaseTtlMs', message: expect.stringMatching(/^the failover lease \(6000 ms\) must end at least 3000 ms inside the grace window \(8000 ms\)/) }]);
  expect(refusal({ pollMaxMs: 1.5 }).issues[0]!.path).toBe('tuning.pollMaxMs');
});
