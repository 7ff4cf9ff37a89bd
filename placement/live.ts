// The live path: one ClusterState kept between decisions and moved by events (a job started, a job
// finished, a fresh observation of the site), instead of being rebuilt from the inventory and every
// running job on each call as `decide` does. A decision is worked out on the kept state and then taken
// back exactly, so asking never changes what the state says; only `start`/`finish`/`observe` do.
// Pure and deterministic, like the rest of the engine.
import { schedule } from './engine.js';
import { shareProblem } from './gpus.js';
import { ClusterState } from './state.js';
import type { Decision, Inventory, JobRequest, PolicyConfig } from './types.js';

/** A job that runs: where (node ids, slots per node, optionally the GPU indices on each node) and since when. */
export interface RunningJob {
  job: JobRequest;
  nodes: { node: string; slots: number; gpuIndex?: number[] }[];
  start: number;
}

/** What an observation changed. `rebuilt`: the inventory itself changed, so the state was built afresh. */
export interface ObserveResult {
  rebuilt: boolean;
  started: number;
  finished: number;
  changed: number;
}

/**
 * Books a running job on `s` as `decide` always has: a job on nodes the inventory no longer has is
 * left out, a share the engine would refuse still counts (as a node-level share), and GPU indices
 * that do not add up are left to the engine to choose. Returns false when the job was left out.
 */
export function bookRunning(s: ClusterState, r: RunningJob): boolean {
  const idx = r.nodes.map((n) => s.index.get(n.node));
  if (idx.some((i) => i === undefined)) return false;
  const { per } = r.job;
  const j = shareProblem(per) ? { ...r.job, per: { cpus: per.cpus, gpus: per.gpus, memoryMB: per.memoryMB } } : r.job;
  const slots = r.nodes.map((n) => n.slots);
  const gpus = r.nodes.every((n) => n.gpuIndex) ? r.nodes.map((n, k) => n.gpuIndex!.map((g) => s.gpuOff[idx[k]!] + g)) : undefined;
  try {
    s.allocate(j, idx as number[], slots, r.start, gpus);
  } catch {
    s.allocate(j, idx as number[], slots, r.start);
  }
  return true;
}

/** A from-scratch state: the inventory with every running job booked in list order (what `decide` builds). */
export function buildState(inv: Inventory, running: readonly RunningJob[]): ClusterState {
  const s = new ClusterState(inv);
  for (const r of running) if (!s.running.has(r.job.id)) bookRunning(s, r);
  return s;
}

/** The single-job pass `decide` runs: 'none' becomes 'easy' (one job has nobody to hold back). */
export function decideOn(s: ClusterState, job: JobRequest, now: number, pol: PolicyConfig): Decision {
  const d = schedule(s, [job], now, { ...pol, backfill: pol.backfill === 'none' ? 'easy' : pol.backfill }).find((x) => x.jobId === job.id);
  return d ?? { kind: 'reject', jobId: job.id, reason: 'no-decision', explanation: 'the engine produced no decision for this job' };
}

/**
 * The decision for one job against an inventory and what already runs there, built from scratch (the
 * reference the live path is checked against). A running job's `gpuIndex` names the GPUs (indices on
 * the node) its GPU units sit on, when known.
 */
export function decide(inv: Inventory, running: readonly RunningJob[], job: JobRequest, now: number, pol: PolicyConfig): Decision {
  return decideOn(buildState(inv, running), job, now, pol);
}

/**
 * Plain data equal field by field (arrays element by element, objects key by key), without building
 * a string of either: what tells an observed inventory from the kept one. Loops over lists; it
 * recurses only as deep as the inventory nests (site, cluster, partition, node, price).
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a !== a && b !== b; // NaN equals NaN
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let k = 0; k < a.length; k++) if (!sameData(a[k], b[k])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    n++;
    if (!sameData(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) n--;
  return n === 0;
}

/** The same inventory: equal inventories build equal states. */
export const sameInventory = (a: Inventory, b: Inventory): boolean => sameData(a.sites, b.sites);

/** Same nodes and slots; GPU indices only where both sides name them (an observation that does not
 *  say which GPUs a job holds leaves them where the state has them). */
const sameSlots = (a: RunningJob['nodes'], b: RunningJob['nodes']) =>
  a.length === b.length && a.every((n, k) => n.node === b[k].node && n.slots === b[k].slots && (!n.gpuIndex || !b[k].gpuIndex || n.gpuIndex.join(',') === b[k].gpuIndex.join(',')));

/** Shallow equality of two job requests (their `per` compared field by field). */
export function sameJob(a: JobRequest, b: JobRequest): boolean {
  if (a === b) return true;
  const ka = Object.keys(a) as (keyof JobRequest)[];
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (k === 'per') {
      const p = a.per;
      const q = b.per;
      if (p.cpus !== q.cpus || p.gpus !== q.gpus || p.memoryMB !== q.memoryMB || p.gpuMilli !== q.gpuMilli) return false;
    } else if (a[k] !== b[k]) return false;
  }
  return true;
}

export const sameRun = (a: RunningJob, b: RunningJob) => a.start === b.start && sameSlots(a.nodes, b.nodes) && sameJob(a.job, b.job);

/** What one decision on the kept state may leave out or may not preempt (LiveCluster.decide). */
export interface DecideOptions {
  without?: Iterable<string>;
  mayPreempt?: (victim: JobRequest) => boolean;
}

export class LiveCluster {
  private s: ClusterState;
  private inv: Inventory;
  /** What was booked for each running job, as it was given (observations are diffed against it). */
  private readonly booked = new Map<string, RunningJob>();

  constructor(inv: Inventory, running: readonly RunningJob[] = []) {
    this.inv = inv;
    this.s = new ClusterState(inv);
    for (const r of running) this.start(r);
  }

  get state(): ClusterState {
    return this.s;
  }

  get size(): number {
    return this.booked.size;
  }

  /**
   * A job started (or was found running). A job already running is moved to where it now runs. What
   * is kept for it names the GPUs it was bound to, so that a later rebuild or re-booking puts it there.
   */
  start(r: RunningJob): boolean {
    if (this.booked.has(r.job.id)) this.finish(r.job.id);
    if (!bookRunning(this.s, r)) return false;
    const s = this.s;
    const a = s.running.get(r.job.id)!;
    this.booked.set(r.job.id, a.gpus ? { ...r, nodes: r.nodes.map((n, k) => ({ ...n, gpuIndex: a.gpus![k].map((g) => g - s.gpuOff[a.nodes[k]]) })) } : r);
    return true;
  }

  /** The running jobs as kept (for a rebuild from the same facts). */
  runningJobs(): RunningJob[] {
    return [...this.booked.values()];
  }

  /** A job finished, failed or was cancelled. */
  finish(jobId: string): boolean {
    if (!this.booked.delete(jobId)) return false;
    this.s.release(jobId);
    return true;
  }

  /**
   * A fresh look at the site: the same inventory moves the state by the difference in running work
   * (cost in proportion to the running list, with no node work for jobs that did not change); a
   * different inventory (nodes added, drained, resized) builds the state again.
   */
  observe(inv: Inventory, running: readonly RunningJob[]): ObserveResult {
    if (!sameInventory(inv, this.inv)) {
      this.inv = inv;
      this.s = new ClusterState(inv);
      this.booked.clear();
      let started = 0;
      for (const r of running) if (!this.booked.has(r.job.id) && this.start(r)) started++;
      return { rebuilt: true, started, finished: 0, changed: 0 };
    }
    const seen = new Set<string>();
    let started = 0;
    let changed = 0;
    let finished = 0;
    for (const r of running) {
      if (seen.has(r.job.id)) continue;
      seen.add(r.job.id);
      const had = this.booked.get(r.job.id);
      if (had && sameRun(had, r)) continue;
      if (had) changed++;
      else started++;
      this.start(r);
    }
    const gone: string[] = [];
    for (const id of this.booked.keys()) if (!seen.has(id)) gone.push(id);
    for (const id of gone) finished += Number(this.finish(id));
    return { rebuilt: false, started, finished, changed };
  }

  /**
   * The decision for one job now, on the kept state. The pass books a start (and releases victims)
   * as it goes; ClusterState.rollback takes both back and restores every figure they touched, so the
   * state is as it was to the last bit. `ask.without`: running jobs the decision leaves out (released
   * for it, booked again after); `ask.mayPreempt`: which running jobs this asker may take as victims,
   * beyond their own `preemptible` (the activity's rule: its own run's jobs and higher priorities never).
   */
  decide(job: JobRequest, now: number, pol: PolicyConfig, ask: DecideOptions = {}): Decision {
    const s = this.s;
    s.begin();
    s.mayPreempt = ask.mayPreempt;
    try {
      if (ask.without) for (const id of ask.without) s.release(id);
      return decideOn(s, job, now, pol);
    } finally {
      s.mayPreempt = undefined;
      s.rollback();
    }
  }

  /** decide, then, if the job starts, book it (and finish its victims): the job really runs now. */
  place(job: JobRequest, now: number, pol: PolicyConfig): Decision {
    const d = this.decide(job, now, pol);
    if (d.kind === 'start' || d.kind === 'preempt') {
      if (d.kind === 'preempt') for (const v of d.victims) this.finish(v);
      const p = d.placement;
      this.start({ job, start: now, nodes: p.nodes.map((n) => ({ node: n.node, slots: n.slots, ...(n.gpuIndex ? { gpuIndex: n.gpuIndex } : {}) })) });
    }
    return d;
  }
}
