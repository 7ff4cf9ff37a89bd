// The two activity slot pools (workers/slots.ts): long waits move out of the short pool once their
// task is known, and each pool is a bound. Permits are handed back as the bridge does: the object the
// reservation returned, to markSlotUsed and then releaseSlot.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SlotPermit } from '@temporalio/worker';
import { ActivitySlots, LONG_WAIT_ACTIVITIES, workerTuner } from '../../../workers/slots.js';

const ctx = { slotType: 'activity' as const, taskQueue: 'q', workerIdentity: 'w', workerBuildId: '', isSticky: false };
const info = (activityType: string) => ({ type: 'activity' as const, activityType });
/** Resolves to 'reserved' or, if still waiting after the microtasks run, 'waiting'. */
async function outcome(p: Promise<unknown>): Promise<'reserved' | 'waiting'> {
  return Promise.race([p.then(() => 'reserved' as const), new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 20))]);
}
/** Reserves, then marks the slot used by `activityType`; returns its permit. */
async function run(slots: ActivitySlots, activityType: string, signal = new AbortController().signal): Promise<SlotPermit> {
  const permit = await slots.reserveSlot(ctx, signal);
  slots.markSlotUsed({ slotInfo: info(activityType), permit });
  return permit;
}

describe('ActivitySlots', () => {
  test('watches do not take short slots: short work still gets a slot with every short slot once held by a watch', async () => {
    const slots = new ActivitySlots({ maxActivities: 2, maxWatches: 10 });
    const watches = [];
    for (let i = 0; i < 6; i++) watches.push(await run(slots, 'awaitJob'));
    expect(slots.use()).toEqual({ short: 0, watches: 6, waiting: 0 });
    // Two short calls at once: the pool's bound.
    const submit = await run(slots, 'submitJob');
    expect(slots.tryReserveSlot()).not.toBeNull();
    expect(slots.use()).toEqual({ short: 2, watches: 6, waiting: 0 });
    // A third waits until one of them ends.
    const third = slots.reserveSlot(ctx, new AbortController().signal);
    expect(await outcome(third)).toBe('waiting');
    expect(slots.tryReserveSlot()).toBeNull();
    slots.releaseSlot({ slotInfo: info('submitJob'), permit: submit });
    expect(await outcome(third)).toBe('reserved');
    // Every watch ends: back to the two short slots in use.
    for (const permit of watches) slots.releaseSlot({ slotInfo: info('awaitJob'), permit });
    expect(slots.use()).toEqual({ short: 2, watches: 0, waiting: 0 });
  });

  test('past maxWatches the worker takes nothing more, until a watch ends', async () => {
    const slots = new ActivitySlots({ maxActivities: 5, maxWatches: 2 });
    const first = await run(slots, 'k8sAwaitRollout');
    await run(slots, 'k8sAwaitRollout');
    const next = slots.reserveSlot(ctx, new AbortController().signal);
    expect(await outcome(next)).toBe('waiting');
    expect(slots.tryReserveSlot()).toBeNull();
    slots.releaseSlot({ slotInfo: info('k8sAwaitRollout'), permit: first });
    expect(await outcome(next)).toBe('reserved');
    expect(slots.use()).toEqual({ short: 1, watches: 1, waiting: 0 });
  });

  test('the pool is the permit\'s, not the release\'s slot info: a release without info or a second release of one permit cannot drift the counts', async () => {
    const slots = new ActivitySlots({ maxActivities: 3, maxWatches: 3 });
    const watch = await run(slots, 'awaitJob');
    slots.releaseSlot({ permit: watch }); // no slot info: still the watch pool's
    expect(slots.use()).toEqual({ short: 0, watches: 0, waiting: 0 });
    slots.releaseSlot({ slotInfo: info('awaitJob'), permit: watch });
    expect(slots.use()).toEqual({ short: 0, watches: 0, waiting: 0 });
    const eager = slots.tryReserveSlot()!; // an eager activity's permit, marked as a watch
    slots.markSlotUsed({ slotInfo: info('watchAt'), permit: eager });
    slots.markSlotUsed({ slotInfo: info('watchAt'), permit: eager });
    expect(slots.use()).toEqual({ short: 0, watches: 1, waiting: 0 });
  });

  test('a slot released unused (a poll that timed out) frees its short slot; an aborted reservation leaves no waiter', async () => {
    const slots = new ActivitySlots({ maxActivities: 1, maxWatches: 1 });
    const abort = new AbortController();
    const held = await slots.reserveSlot(ctx, abort.signal);
    const pending = slots.reserveSlot(ctx, abort.signal);
    expect(slots.use().waiting).toBe(1);
    abort.abort(new Error('not needed'));
    await expect(pending).rejects.toThrow('not needed');
    expect(slots.use()).toEqual({ short: 1, watches: 0, waiting: 0 });
    slots.releaseSlot({ permit: held });
    expect(slots.use()).toEqual({ short: 0, watches: 0, waiting: 0 });
    await expect(slots.reserveSlot(ctx, new AbortController().signal)).resolves.toEqual({ pool: 'short' });
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

  test("every activity the pipeline calls with a long-wait profile (watchJob, readinessGate, rollout) is a long wait", () => {
    // The proxies built from those profiles, and what each calls (workflows/pipeline/*.ts).
    const dir = 'workflows/pipeline';
    const called = new Set<string>();
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.ts'))) {
      const text = readFileSync(join(dir, f), 'utf8');
      const proxies = [...text.matchAll(/const (\w+) = (?:run\.activities|onQueue\([^)]*)\((?:watchJob|readinessGate|rolloutOptions|watchOptions)\b/g)].map((m) => m[1]!);
      for (const p of proxies) for (const m of text.matchAll(new RegExp(`\\b${p}\\.(\\w+)`, 'g'))) called.add(m[1]!);
    }
    called.delete('executeWithOptions');
    expect(called.size).toBeGreaterThan(3);
    for (const name of called) expect([name, LONG_WAIT_ACTIVITIES.has(name)]).toEqual([name, true]);
  });
});
