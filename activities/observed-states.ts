// What a job watch saw: each state the backend reported, with when it was first seen, in order. The
// watch returns it with the job's final status (so the history holds it) and heartbeats it (so a
// re-attached watch continues the same list). `tandem ui` splits a job attempt's queue wait from its
// run time with it (ui/jobs.ts); the queue-wait metric (observe/activity-metrics.ts) measures the same span.
export interface ObservedState {
  state: string;
  /** Epoch milliseconds of the first observation. */
  at: number;
}

/** Bounded: a job flapping between states cannot grow its heartbeat or its result without limit. */
const MAX = 32;

export function stateLog(prior: unknown, now: () => number = Date.now) {
  const list: ObservedState[] = Array.isArray(prior) ? prior.filter((o): o is ObservedState => !!o && typeof o.state === 'string' && typeof o.at === 'number').slice(0, MAX) : [];
  return {
    list,
    note(state: string): void {
      if (list[list.length - 1]?.state !== state && list.length < MAX) list.push({ state, at: now() });
    },
  };
}
