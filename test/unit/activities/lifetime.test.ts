// What a worker's activities hold open between calls is let go when the worker stops: the placement
// sources' close() (the Kubernetes source's watches) is reached from the object the Worker is given,
// through every spread on the way (createActivities → tandemActivities).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tandemActivities } from '../../../workers/worker.js';
import { closeActivities, closeWith } from '../../../activities/lifetime.js';
import type { InventorySource } from '../../../activities/placement.js';

test("a worker's activities close their placement sources at each stop, and register nothing extra as an activity", async () => {
  let closed = 0;
  const source: InventorySource = { name: 'held', gather: async () => ({ sites: [], running: [] }), close: () => void closed++ };
  const acts = tandemActivities({ home: mkdtempSync(join(tmpdir(), 'tandem-lifetime-')), inventorySources: [source] }) as Record<string, unknown>;
  // Temporal registers every own property: the closer is not one of them.
  expect(Object.values(acts).every((v) => typeof v === 'function')).toBe(true);
  await closeActivities(acts);
  expect(closed).toBe(1);
  // Used again after a stop (a watch reopened at a decision), the next stop closes again: the sources' close() is idempotent.
  await closeActivities(acts);
  expect(closed).toBe(2);
});

test('an object closeWith never saw closes nothing', async () => {
  await expect(closeActivities({})).resolves.toBeUndefined();
  await expect(closeActivities(undefined)).resolves.toBeUndefined();
  let n = 0;
  const a = closeWith({ f: () => 1 }, () => void n++);
  await closeActivities({ ...a }); // a copy is not the registered object
  expect(n).toBe(0);
});
