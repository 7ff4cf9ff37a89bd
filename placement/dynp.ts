// A self-tuning queue order (Streit's dynP, "A self-tuning job scheduler family with dynamic policy
// switching", JSSPP 2002): before each pass, the waiting jobs are planned under every candidate order
// on a free-capacity profile (running jobs end at their estimates, each job then takes the earliest
// slot its request fits, as conservative backfilling plans), and the pass runs with the order whose
// plan has the lowest mean bounded slowdown. Requested times (or a job's estimate) and what runs now
// only: no run times, no future arrivals. Opt-in, not the default: measured in docs/placement.md
// (better than the 'score' order on lightly loaded logs, worse on the heavily loaded Lublin logs,
// where the plan of today's queue misses the small jobs still to come that Smith's rule favours).
import type { ClusterState } from './state.js';
import { planned, type JobRequest, type PolicyConfig, type QueueOrder } from './types.js';
import { queueOrder } from './policies.js';
import { lastAtOrBefore } from './sorted.js';

/** The candidates measured in docs/placement.md: Tandem's default order first, then the classic ones. */
export const DYNP_ORDERS: QueueOrder[] = ['score', 'sjf', 'saf', 'f1', 'fcfs'];

/** bsld's lower bound on run time, in seconds (the τ = 10 s the benchmarks use). */
const TAU = 10;

export interface PlanScore {
  order: QueueOrder;
  bsld: number;
  maxWait: number;
}

/**
 * A step function of free CPUs and GPUs from `now` on: times[k] starts segment k, which has
 * cpu[k] / gpu[k] free; the last segment runs to infinity.
 */
class Profile {
  times: number[];
  cpu: number[];
  gpu: number[];

  constructor(s: ClusterState, now: number) {
    this.times = [now];
    this.cpu = [s.freeCpu];
    this.gpu = [s.freeGpu];
    // runningByEnd is kept sorted by estimated end.
    for (const a of s.runningByEnd()) {
      const t = Math.max(now, a.estEnd);
      const k = this.split(t);
      for (let i = k; i < this.times.length; i++) {
        this.cpu[i] += a.job.per.cpus * a.job.count;
        this.gpu[i] += a.job.per.gpus * a.job.count;
      }
    }
  }

  /** The index of the segment starting at t, splitting the one that holds it. */
  private split(t: number): number {
    const lo = lastAtOrBefore(this.times, t);
    if (this.times[lo] === t) return lo;
    this.times.splice(lo + 1, 0, t);
    this.cpu.splice(lo + 1, 0, this.cpu[lo]);
    this.gpu.splice(lo + 1, 0, this.gpu[lo]);
    return lo + 1;
  }

  /** Books the earliest slot where `cpu`/`gpu` stay free for `len`; returns its start. */
  place(cpu: number, gpu: number, len: number): number {
    const eps = 1e-9;
    const n = this.times.length;
    for (let k = 0; k < n; k++) {
      if (this.cpu[k] + eps < cpu || this.gpu[k] + eps < gpu) continue;
      const start = this.times[k];
      const end = start + len;
      let ok = true;
      let j = k + 1;
      for (; j < n && this.times[j] < end; j++) {
        if (this.cpu[j] + eps < cpu || this.gpu[j] + eps < gpu) {
          ok = false;
          break;
        }
      }
      if (!ok) {
        k = j - 1; // the next start to try is after the segment that failed
        continue;
      }
      const a = this.split(start);
      const b = this.split(end);
      for (let i = a; i < b; i++) {
        this.cpu[i] -= cpu;
        this.gpu[i] -= gpu;
      }
      return start;
    }
    return Infinity; // larger than the whole machine
  }
}

/** Plans the waiting jobs in `order` and scores the plan. */
export function planScore(s: ClusterState, queue: JobRequest[], now: number, pol: PolicyConfig, order: QueueOrder): PlanScore {
  const p = new Profile(s, now);
  let sum = 0;
  let n = 0;
  let maxWait = 0;
  for (const j of queueOrder(s, { ...pol, order }, queue, now)) {
    if (s.running.has(j.id)) continue;
    const len = planned(j);
    const start = p.place(j.per.cpus * j.count, j.per.gpus * j.count, len);
    if (!Number.isFinite(start)) continue;
    const wait = start - j.submit;
    maxWait = Math.max(maxWait, wait);
    sum += Math.max(1, (wait + len) / Math.max(len, TAU));
    n++;
  }
  return { order, bsld: n ? sum / n : 1, maxWait };
}

/**
 * The order a pass runs with under PolicyConfig.dynp: the candidate whose plan has the lowest mean
 * bounded slowdown; ties go to the earlier candidate, so the first one runs when the queue gives no
 * reason to switch (fewer than two jobs waiting).
 */
export function chooseOrder(s: ClusterState, queue: JobRequest[], now: number, pol: PolicyConfig, candidates: QueueOrder[]): QueueOrder {
  if (queue.length < 2) return candidates[0];
  let best: PlanScore | undefined;
  for (const o of candidates) {
    const x = planScore(s, queue, now, pol, o);
    if (!best || x.bsld < best.bsld - 1e-12) best = x;
  }
  return best!.order;
}
