// The watch activities' pause (activities/poll.ts): heartbeats on their own schedule whatever the poll
// gap, with an injected clock; and the poll backoff, which under a lease never exceeds its poll cap.
import { PollBackoff, pauseWithHeartbeats, type PauseClock } from '../../../activities/poll.js';
import { leasePollCapMs } from '../../../contract/failover.js';
import { TUNING_DEFAULTS, watchHeartbeatMs } from '../../../contract/tuning.js';
import { DEFAULTS } from '../../../config/defaults.js';

/** A virtual clock: sleeping advances it; heartbeats are recorded with the time they were sent. */
function fakeClock(opts: { overrunMs?: number; cancelAtMs?: number } = {}) {
  let t = 0;
  const beats: number[] = [];
  const sleeps: number[] = [];
  const clock: PauseClock = {
    now: () => t,
    sleep: async (ms) => {
      sleeps.push(ms);
      if (opts.cancelAtMs !== undefined && t + ms >= opts.cancelAtMs) {
        t = opts.cancelAtMs;
        throw new Error('cancelled');
      }
      t += ms + (opts.overrunMs ?? 0);
    },
    heartbeat: () => void beats.push(t),
  };
  return { clock, beats, sleeps, now: () => t };
}

/** The longest stretch without a heartbeat, from the start of the pause to its end. */
const longestGap = (beats: number[], end: number) => Math.max(...[0, ...beats, end].slice(1).map((b, i) => b - [0, ...beats][i]!));

test('a 64 s pause under the default 30 s heartbeat timeout heartbeats every 10 s and once at its end', async () => {
  const every = watchHeartbeatMs(TUNING_DEFAULTS.heartbeatTimeoutMs);
  expect(every).toBe(10_000);
  const c = fakeClock();
  await pauseWithHeartbeats(TUNING_DEFAULTS.pollMaxMs, every, c.clock);
  expect(c.beats).toEqual([10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 64_000]);
  expect(c.now()).toBe(64_000);
  expect(longestGap(c.beats, c.now())).toBeLessThanOrEqual(TUNING_DEFAULTS.heartbeatTimeoutMs / 3);
});

test('any pause, however long, keeps every heartbeat gap within a third of the heartbeat timeout', async () => {
  for (const timeout of [2000, 3000, 30_000, 120_000]) {
    for (const pause of [1, 199, 1000, 64_000, 3 * 3_600_000]) {
      const c = fakeClock();
      await pauseWithHeartbeats(pause, watchHeartbeatMs(timeout), c.clock);
      expect(longestGap(c.beats, c.now())).toBeLessThanOrEqual(timeout / 3);
      expect(c.now()).toBe(pause);
    }
  }
});

test('a pause shorter than the cadence is one sleep and one heartbeat; a zero pause does nothing', async () => {
  const c = fakeClock();
  await pauseWithHeartbeats(200, 10_000, c.clock);
  expect(c.sleeps).toEqual([200]);
  expect(c.beats).toEqual([200]);
  const z = fakeClock();
  await pauseWithHeartbeats(0, 10_000, z.clock);
  expect(z.sleeps).toEqual([]);
  expect(z.beats).toEqual([]);
});

test('sleeps that overrun do not stretch the pause: time is read from the clock', async () => {
  const c = fakeClock({ overrunMs: 1500 });
  await pauseWithHeartbeats(30_000, 10_000, c.clock);
  expect(c.sleeps).toEqual([10_000, 10_000, 7000]);
  expect(c.now()).toBe(31_500); // the last sleep overran too: 3 × 1.5 s, not more
});

test('cancellation (a rejected sleep) ends the pause at once, without a further heartbeat', async () => {
  const c = fakeClock({ cancelAtMs: 25_000 });
  await expect(pauseWithHeartbeats(64_000, 10_000, c.clock)).rejects.toThrow('cancelled');
  expect(c.beats).toEqual([10_000, 20_000]);
  expect(c.now()).toBe(25_000);
});

test('an activity without a heartbeat timeout still heartbeats (cancellation arrives only with heartbeats)', () => {
  expect(watchHeartbeatMs(undefined)).toBe(10_000);
  expect(watchHeartbeatMs(0)).toBe(10_000);
  expect(watchHeartbeatMs(2000)).toBe(666);
});

const pauses = (b: PollBackoff, n: number, fast: (i: number) => boolean = () => false) => Array.from({ length: n }, (_, i) => b.pause(fast(i)));

test('the backoff doubles from its start up to the poll ceiling, and stays at the fast gap while a job runs', () => {
  const b = new PollBackoff({ initialMs: DEFAULTS.pollInitialMs, maxMs: TUNING_DEFAULTS.pollMaxMs, fastMs: DEFAULTS.runningPollMs });
  expect(pauses(b, 12)).toEqual([200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 51_200, 64_000, 64_000, 64_000]);
  expect(pauses(b, 4, () => true)).toEqual([1000, 1000, 1000, 1000]);
  expect(pauses(b, 3)).toEqual([2000, 4000, 8000]);
});

test('under a lease no pause exceeds a third of its TTL, whatever the start, the ceiling or how long the job queues', () => {
  for (const leaseTtlMs of [1000, 4000, 30_000, 600_000]) {
    for (const initialMs of [20, 200, 5000, 100_000]) {
      const cap = leasePollCapMs(leaseTtlMs);
      const b = new PollBackoff({ initialMs, maxMs: Math.min(TUNING_DEFAULTS.pollMaxMs, cap), fastMs: DEFAULTS.runningPollMs });
      const seen = pauses(b, 40, (i) => i % 7 === 3);
      expect(Math.max(...seen)).toBeLessThanOrEqual(leaseTtlMs / 3);
    }
  }
  // The default lease (half the default 60 s grace window): a queued job is renewed every 10 s at most.
  expect(leasePollCapMs(30_000)).toBe(10_000);
});
