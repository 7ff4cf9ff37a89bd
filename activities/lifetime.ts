// What a set of activities holds open between calls, and how it is let go. Almost nothing is: the
// backend clients open and close a connection per request. Placement's Kubernetes source keeps two
// watches while decisions are asked (activities/placement-sources.ts); they are closed when the worker
// that served the activities stops (workers/worker.ts createTandemWorker, workers/plugin.ts runContext).
// A registry beside the object rather than a property on it: Temporal registers every own property of
// an activities object, and the object is spread into larger ones on its way to the Worker.
const closers = new WeakMap<object, () => Promise<void> | void>();

/** `activities`, with what closes what it holds. */
export function closeWith<T extends object>(activities: T, close: () => Promise<void> | void): T {
  closers.set(activities, close);
  return activities;
}

/**
 * Lets go of what `activities` holds now (nothing for an object closeWith never saw). The closer stays
 * registered: activities used again after a close reopen what they need (a watch restarts at the next
 * decision), and the next close lets go of that too; closers are idempotent, so closing twice is safe.
 */
export async function closeActivities(activities: object | undefined): Promise<void> {
  const close = activities && closers.get(activities);
  if (close) await close();
}
