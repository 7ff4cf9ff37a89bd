// The two activity slot pools (workers/slots.ts): long waits move out of the short pool once their
// task is known, and each pool is a bound.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ActivitySlots, LONG_WAIT_ACTIVITIES, workerTuner } from '../../../workers/slots.js';

const ctx = { slotType: 'activity' as const, taskQueue: 'q', workerIdentity: 'w', workerBuildId: '', isSticky: false };
const used = (activityType: string) => ({ slotInfo: { type: 'activity' as const, activityType }, permit: {} });
/** Resolves to 'reserved' or, if still waiting after the microtasks run, 'waiting'. */
async function outcome(p: Promise<unknown>): Promise<'reserved' | 'waiting'> {
  return Promise.race([p.then(() => 'reserved' as const), new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 20))]);
}

describe('ActivitySlots', () => {
  test('watches do not take short slots: short work still gets a slot with every short slot once held by a watch', async () => {
    const slots = new ActivitySlots({ maxActivities: 2, maxWatches: 10 });
    const abort = new AbortController();
    for (let i = 0; i < 6; i++) {
      await slots.reserveSlot(ctx, abort.signal);
      slots.markSlotUsed(used('awaitJob'));
    }
    expect(slots.use()).toEqual({ short: 0, watches: 6, waiting: 0 });
    // Two short calls at once: the pool's bound.
    await slots.reserveSlot(ctx, abort.signal);
    slots.markSlotUsed(used('submitJob'));
    expect(slots.tryReserveSlot()).not.toBeNull();
    expect(slots.use()).toEqual({ short: 2, watches: 6, waiting: 0 });
    // A third waits until one of them ends.
    const third = slots.reserveSlot(ctx, abort.signal);
    expect(await outcome(third)).toBe('waiting');
    expect(slots.tryReserveSlot()).toBeNull();
    slots.releaseSlot(used('submitJob'));
    expect(await outcome(third)).toBe('reserved');
  });

  test('past maxWatches the worker takes nothing more, until a watch ends', async () => {
    const slots = new ActivitySlots({ maxActivities: 5, maxWatches: 2 });
    const abort = new AbortController();
    for (let i = 0; i < 2; i++) {
      await slots.reserveSlot(ctx, abort.signal);
      slots.markSlotUsed(used('k8sAwaitRollout'));
    }
    const next = slots.reserveSlot(ctx, abort.signal);
    expect(await outcome(next)).toBe('waiting');
    expect(slots.tryReserveSlot()).toBeNull();
    slots.releaseSlot(used('k8sAwaitRollout'));
    expect(await outcome(next)).toBe('reserved');
    expect(slots.use()).toEqual({ short: 1, watches: 1, waiting: 0 });
  });

  test('a slot released unused (a poll that timed out) frees its short slot; an aborted reservation leaves no waiter', async () => {
    const slots = new ActivitySlots({ maxActivities: 1, maxWatches: 1 });
    const abort = new AbortController();
    await slots.reserveSlot(ctx, abort.signal);
    const pending = slots.reserveSlot(ctx, abort.signal);
    expect(slots.use().waiting).toBe(1);
    abort.abort(new Error('not needed'));
    await expect(pending).rejects.toThrow('not needed');
    expect(slots.use()).toEqual({ short: 1, watches: 0, waiting: 0 });
    slots.releaseSlot({ permit: {} });
    expect(slots.use()).toEqual({ short: 0, watches: 0, waiting: 0 });
    await expect(slots.reserveSlot(ctx, new AbortController().signal)).resolves.toEqual({});
  });

  test('the long waits are activities that exist, and the tuner bounds every kind of slot', () => {
    // Each is an activity Tandem's workers register (a renamed one would silently fall back to the short pool).
    const sources = readdirSync('activities').filter((f) => f.endsWith('.ts')).map((f) => readFileSync(join('activities', f), 'utf8')).join('\n');
    for (const name of LONG_WAIT_ACTIVITIES) expect(sources).toMatch(new RegExp(`\\basync ${name}\\(`));
    const { tuner, activitySlots } = workerTuner({ maxWorkflowTasks: 40, maxActivities: 100, maxWatches: 500 });
    expect(tuner.workflowTaskSlotSupplier).toEqual({ type: 'fixed-size', numSlots: 40 });
    expect(tuner.activityTaskSlotSupplier).toBe(activitySlots);
    expect(activitySlots.bounds).toEqual({ maxActivities: 100, maxWatches: 500 });
  });
});
