// The pause between two job-status polls, shared by every watch activity (awaitJob, watchAt). A job may
// stay queued for hours and the poll backoff grows to pollMaxMs (64 s by default), far beyond the
// heartbeat timeout (30 s): so the pause heartbeats on its own schedule, a third of the activity's
// heartbeat timeout, repeating what the activity last reported (watchAt reads failingSince back from it
// on a retried attempt). Heartbeating also keeps the watch cancellable: the SDK delivers cancellation
// only in the answer to a heartbeat.
import { CancelledFailure, type Context } from '@temporalio/activity';
import { watchHeartbeatMs } from '../contract/tuning.js';

/** What a pause needs of its activity: time, a (cancellable) sleep and a heartbeat. Injected in tests. */
export interface PauseClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  heartbeat(): void;
}

/**
 * Waits `ms`, heartbeating at least every `everyMs` and once more at the end (just before the next
 * observation, which may itself take up to an HTTP timeout). Time is read from the clock, so a sleep
 * that overruns does not stretch the pause; a rejected sleep (cancellation) ends it at once.
 */
export async function pauseWithHeartbeats(ms: number, everyMs: number, clock: PauseClock): Promise<void> {
  const until = clock.now() + ms;
  for (let left = ms; left > 0; left = until - clock.now()) {
    await clock.sleep(Math.min(left, everyMs));
    clock.heartbeat();
  }
}

/**
 * The pause between two status polls of a watch activity; `details` are what it last heartbeated, sent
 * again with every heartbeat of the pause. A cancelled watch says so in the log before it stops.
 */
export async function pollPause(ctx: Context, ms: number, jobId: string, details?: unknown): Promise<void> {
  const clock: PauseClock = { now: Date.now, sleep: (t) => ctx.sleep(t), heartbeat: () => ctx.heartbeat(details) };
  try {
    await pauseWithHeartbeats(ms, watchHeartbeatMs(ctx.info.heartbeatTimeoutMs), clock);
  } catch (e) {
    if (e instanceof CancelledFailure) ctx.log.info('stopped watching job (cancelled)', { jobId });
    throw e;
  }
}

/**
 * The poll backoff of a watch: it doubles from `initialMs` up to `maxMs` (a queued job is polled ever
 * more rarely), and while `fast` (the job runs, so its progress should stay fresh, or it could not be
 * observed) it is held at `fastMs` or below. No pause ever exceeds `maxMs`: a watch under a lease passes
 * the lease's poll cap there, so that renewals come well inside the lease's TTL however long it queues.
 */
export class PollBackoff {
  private next: number;

  constructor(private readonly o: { initialMs: number; maxMs: number; fastMs: number }) {
    this.next = Math.min(o.initialMs, o.maxMs);
  }

  /** The pause to take now. */
  pause(fast: boolean): number {
    if (fast) this.next = Math.min(this.next, this.o.fastMs);
    const now = this.next;
    this.next = Math.min(now * 2, this.o.maxMs);
    return now;
  }
}
