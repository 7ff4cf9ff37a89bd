// Run-time prediction from online information only (Tsafrir, Etsion and Feitelson, "Backfilling Using
// System-Generated Predictions Rather Than User Runtime Estimates", TPDS 2007): a job's run time is
// guessed from its user's last two completed jobs, never from the job's own (unknown) run, and a
// running job that outlives its guess has the guess raised (EASY++'s correction) until it reaches
// the request. Pure: the caller feeds it completions and asks it before a pass.
import type { Allocation, ClusterState } from './state.js';
import { planned, type JobRequest } from './types.js';

/**
 * What the predictor remembers of a user: the accuracy (run / requested walltime) of their last two
 * completed jobs. Tsafrir et al. average the last two run times; averaging their accuracy instead
 * gives the same guess when a user asks for the same walltime each time (the common case: a site
 * default or a habit) and scales with the request when a user asks for more for bigger work. A user
 * whose requests were exact keeps getting the request (accuracy 1), so traces with exact estimates
 * plan as before.
 */
interface UserHistory {
  last: number;
  before: number;
  n: number;
}

/** Never guess below this (s): the bounded-slowdown floor τ, and a guard against 0 s runs. */
export const MIN_ESTIMATE = 10;

export class RuntimePredictor {
  private readonly users = new Map<string, UserHistory>();
  /** Corrections made (EASY++): running jobs whose guess was too short and was raised. */
  corrections = 0;

  /** A job of `job.tenant` ended after `run` seconds (killed at its walltime counts as its walltime). */
  observe(job: Pick<JobRequest, 'tenant' | 'walltime'>, run: number): void {
    if (!(job.walltime > 0) || !(run >= 0)) return;
    const acc = Math.min(1, run / job.walltime);
    const h = this.users.get(job.tenant);
    if (!h) this.users.set(job.tenant, { last: acc, before: acc, n: 1 });
    else {
      h.before = h.last;
      h.last = acc;
      h.n++;
    }
  }

  /** The guess for a job about to queue, or undefined when its user has no completed job yet (the request stands). */
  estimate(job: Pick<JobRequest, 'tenant' | 'walltime'>): number | undefined {
    const h = this.users.get(job.tenant);
    if (!h) return undefined;
    const acc = h.n >= 2 ? (h.last + h.before) / 2 : h.last;
    return Math.min(job.walltime, Math.max(MIN_ESTIMATE, Math.ceil(job.walltime * acc)));
  }

  /**
   * EASY++'s correction: every running job whose planned end has passed while it still runs gets a
   * longer guess (its planned run doubled, at least to now + MIN_ESTIMATE, never past its walltime),
   * so reservations stop counting on capacity that has not come free. Re-books the allocation in
   * place (same nodes and GPUs). Returns how many it corrected.
   */
  correct(s: ClusterState, now: number): number {
    let late: Allocation[] | undefined;
    for (const a of s.running.values()) if (a.job.estimate !== undefined && a.estEnd <= now && a.estEnd < a.start + a.job.walltime) (late ??= []).push(a);
    if (!late) return 0;
    for (const a of late) {
      const ran = now - a.start;
      const next = Math.min(a.job.walltime, Math.max(2 * planned(a.job), ran + MIN_ESTIMATE));
      s.release(a.job.id);
      s.allocate({ ...a.job, estimate: next }, a.nodes, a.slots, a.start, a.gpus);
    }
    this.corrections += late.length;
    return late.length;
  }
}
