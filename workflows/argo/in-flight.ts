// At most a bounded number of activities in flight per workflow, whatever the templates' `parallelism`
// (Argo's own default is unbounded; Temporal refuses a workflow task that would leave more than 2,000
// activities pending: PENDING_ACTIVITIES_LIMIT_EXCEEDED). Every activity the interpreter calls goes
// through this gate: below the bound it is called in the same tick as before (so the commands of runs
// that never reach it are unchanged and record no marker); at the bound, a run that has the patch waits
// first come first served for a slot, and one recorded before it calls on as it did.
import { condition, patched, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { ArgoRunInput } from '../../argo/lang/types.js';
import { ARGO_SCALE_DEFAULTS } from '../../contract/tuning.js';
import { ARGO_PATCHES } from './api.js';

/** The workflow annotation that sets the bound of one run (docs/argo-scale.md). */
export const MAX_IN_FLIGHT_ANNOTATION = 'tandem.io/max-activities-in-flight';

/** The run's bound: its tuning, else its annotation, else the default; at least 1. */
export function maxInFlight(input: ArgoRunInput): number {
  const fromAnnotation = Number(input.annotations?.[MAX_IN_FLIGHT_ANNOTATION]);
  const n = input.tuning?.maxActivitiesInFlight ?? (Number.isFinite(fromAnnotation) && fromAnnotation > 0 ? fromAnnotation : ARGO_SCALE_DEFAULTS.maxActivitiesInFlight);
  return Math.max(1, Math.floor(n));
}

/**
 * A first-come-first-served bound on what a workflow has running at once (activities here; child
 * workflows in fanout.ts). Below the bound a call goes on in the same tick; at it, `patch` is asked,
 * so only runs that reach the bound record a marker, and a run recorded before the bound calls on.
 */
export class Gate {
  used = 0;
  private readonly waiting: { granted: boolean }[] = [];
  constructor(
    readonly limit: number,
    private readonly patch: string = ARGO_PATCHES.inFlight,
  ) {}

  /** Calls `invoke` now when a slot is free (same tick), else once one is handed over. */
  call<T>(invoke: () => Promise<T>): Promise<T> {
    if (this.used < this.limit || !patched(this.patch)) {
      this.used++;
      return this.track(invoke());
    }
    return this.queued(invoke);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    const done = () => this.release();
    p.then(done, done);
    return p;
  }

  private async queued<T>(invoke: () => Promise<T>): Promise<T> {
    const me = { granted: false };
    this.waiting.push(me);
    try {
      await condition(() => me.granted);
    } catch (e) {
      // Cancelled while waiting: leave the queue, or pass on a slot granted in the meantime.
      const i = this.waiting.indexOf(me);
      if (i >= 0) this.waiting.splice(i, 1);
      else this.release();
      throw e;
    }
    return this.track(invoke());
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next.granted = true;
    else this.used--;
  }
}

/** `acts` with every activity (and its executeWithOptions) behind one gate of `limit` slots. */
export function boundActivities<A extends object>(acts: ActivityInterfaceFor<A>, limit: number): ActivityInterfaceFor<A> {
  const gate = new Gate(limit);
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(acts, {
    get(target, prop) {
      const have = wrapped.get(prop);
      if (have) return have;
      const fn = (target as Record<PropertyKey, unknown>)[prop] as ((...a: unknown[]) => Promise<unknown>) & { executeWithOptions?: (o: unknown, a: unknown[]) => Promise<unknown> };
      if (typeof fn !== 'function') return fn;
      const f = (...a: unknown[]) => gate.call(() => fn(...a));
      f.executeWithOptions = (o: unknown, a: unknown[]) => gate.call(() => fn.executeWithOptions!(o, a));
      wrapped.set(prop, f);
      return f;
    },
  });
}
