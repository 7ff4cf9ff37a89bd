// A worker's activity slots in two pools, so that long waits cannot starve short work. A watch of a
// training job holds its activity for hours while it does almost nothing (a poll every few seconds,
// a heartbeat), and with one pool of TANDEM_WORKER_MAX_ACTIVITIES slots, that many watches left no
// slot for the submits, placements and catalogue calls the worker's other pipelines were waiting on:
// at 1,000 pipelines a worker's 100 slots were all watches and no new stage could start. Here a slot
// is reserved from the short pool before each poll (Temporal reserves before it knows the task); once
// the task turns out to be a long wait it moves to the watch pool, and its short slot is free again.
//
// Both pools are bounds: past TANDEM_WORKER_MAX_WATCHES watches the worker polls for no more activity
// tasks at all (any task might be another watch), so the server keeps them for another worker rather
// than this one running out of memory. The watch bound is soft by the polls already out when it is
// reached (Temporal's pollers, a handful): each of those may still bring one more watch.
import { DEFAULTS } from '../config/defaults.js';
import type { WorkerSlots } from '../config/worker.js';
import type { ActivitySlotInfo, CustomSlotSupplier, SlotMarkUsedContext, SlotPermit, SlotReleaseContext, SlotReserveContext, TunerHolder } from '@temporalio/worker';

/**
 * Activities that wait on something outside the worker (a scheduler's job, a rollout, a model server's
 * readiness, a site to answer again) for minutes to days, polling and heartbeating while they do. Not
 * Argo's pods: on the local target a pod is a process on this machine, real work the short bound is for.
 */
export const LONG_WAIT_ACTIVITIES: ReadonlySet<string> = new Set([
  'awaitJob', // a pipeline stage's job, to its end
  'watchAt', // the failover path's watch of a train job at a site
  'fenceWhenReachable', // a site that stopped answering, until it answers
  'awaitReadiness', // a local model server's readiness gate
  'k8sAwaitRollout', // a vLLM Deployment's rollout
  'k8sGateServing', // its readiness gate
  'k8sRollbackServing', // rolling it back, until the earlier revision serves again
  'runBenchmarks', // a migration's benchmark jobs on both pools, to their end
]);

export interface ActivitySlotBounds {
  /** Short activities (and polls not yet matched to a task) at once. */
  maxActivities: number;
  /** Long waits (LONG_WAIT_ACTIVITIES) at once, beside them. */
  maxWatches: number;
}

/** What the pools hold now (tests, and the reason a worker stopped polling). */
export interface ActivitySlotUse {
  short: number;
  watches: number;
  waiting: number;
}

/** A permit knows its pool: the bridge hands the same object back to markSlotUsed and releaseSlot. */
interface Permit {
  pool: 'short' | 'watch' | 'released';
}

/** The activity slot supplier of a Tandem worker. */
export class ActivitySlots implements CustomSlotSupplier<ActivitySlotInfo> {
  readonly type = 'custom' as const;
  private short = 0;
  private watches = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    readonly bounds: ActivitySlotBounds,
    private readonly isLongWait: (activityType: string) => boolean = (t) => LONG_WAIT_ACTIVITIES.has(t),
  ) {}

  use(): ActivitySlotUse {
    return { short: this.short, watches: this.watches, waiting: this.waiters.length };
  }

  private free(): boolean {
    return this.short < this.bounds.maxActivities && this.watches < this.bounds.maxWatches;
  }

  async reserveSlot(_ctx: SlotReserveContext, abortSignal: AbortSignal): Promise<SlotPermit> {
    while (!this.free()) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          abortSignal.removeEventListener('abort', abort);
          resolve();
        };
        const abort = () => {
          const i = this.waiters.indexOf(wake);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(abortSignal.reason);
        };
        if (abortSignal.aborted) return reject(abortSignal.reason);
        abortSignal.addEventListener('abort', abort, { once: true });
        this.waiters.push(wake);
      });
    }
    this.short++;
    return { pool: 'short' } satisfies Permit;
  }

  tryReserveSlot(): SlotPermit | null {
    if (!this.free()) return null;
    this.short++;
    return { pool: 'short' } satisfies Permit;
  }

  markSlotUsed({ slotInfo, permit }: SlotMarkUsedContext<ActivitySlotInfo>): void {
    if (!this.isLongWait(slotInfo.activityType)) return;
    const p = permit as Permit;
    if (p.pool !== 'short') return; // marked once already
    p.pool = 'watch';
    this.short--;
    this.watches++;
    this.wake();
  }

  releaseSlot({ permit }: SlotReleaseContext<ActivitySlotInfo>): void {
    // By the pool the permit is in now, not by the task's info: a permit released unused (a poll that
    // timed out) or after a short task frees a short slot, one moved by markSlotUsed a watch slot.
    const p = permit as Permit;
    if (p.pool === 'released') return;
    if (p.pool === 'watch') this.watches--;
    else this.short--;
    p.pool = 'released';
    this.wake();
  }

  /** Every waiter re-checks: a freed watch slot can unblock as many reservations as a short one. */
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

export interface WorkerSlotBounds extends ActivitySlotBounds {
  maxWorkflowTasks: number;
}

/** The tuner for Worker.create: fixed workflow-task, local-activity and Nexus slots, and the two activity pools. */
export function workerTuner(b: WorkerSlotBounds): { tuner: TunerHolder; activitySlots: ActivitySlots } {
  const activitySlots = new ActivitySlots({ maxActivities: b.maxActivities, maxWatches: b.maxWatches });
  return {
    activitySlots,
    tuner: {
      workflowTaskSlotSupplier: { type: 'fixed-size', numSlots: b.maxWorkflowTasks },
      activityTaskSlotSupplier: activitySlots,
      // Local activities (the pipelines' short bookkeeping) and Nexus tasks: Temporal's defaults.
      localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: 100 },
      nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: 100 },
    },
  };
}

/**
 * A Tandem worker's slot options from its TANDEM_WORKER_* configuration (config/worker.ts), defaults for
 * what it leaves out: the workflow cache and the tuner. Temporal refuses more concurrent workflow tasks
 * than cached workflows, so the first is capped by the second.
 */
export function slotOptions(slots: Partial<WorkerSlots> = {}): { maxCachedWorkflows: number; tuner: TunerHolder } {
  const maxCachedWorkflows = slots.maxCachedWorkflows ?? DEFAULTS.workerMaxCachedWorkflows;
  const { tuner } = workerTuner({
    // (0 turns the cache off: then there is no cap)
    // and never below 2, as Temporal's own options have it)
    maxWorkflowTasks: maxCachedWorkflows > 0 ? Math.max(2, Math.min(slots.maxWorkflowTasks ?? DEFAULTS.workerMaxWorkflowTasks, maxCachedWorkflows)) : (slots.maxWorkflowTasks ?? DEFAULTS.workerMaxWorkflowTasks),
    maxActivities: slots.maxActivities ?? DEFAULTS.workerMaxActivities,
    maxWatches: slots.maxWatches ?? DEFAULTS.workerMaxWatches,
  });
  return { maxCachedWorkflows, tuner };
}
