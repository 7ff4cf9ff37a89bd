// Reservations for blocked jobs (EASY: the first; conservative: every one up to a depth) and the
// backfill test: a later job may start now only if every reservation it overlaps keeps what it needs.
import { findFit, readsGpus, type Fit } from './fit.js';
import { unitMilli, unitsPerSlot } from './gpus.js';
import type { Allocation, ClusterState } from './state.js';
import { planned, type JobRequest, type PolicyConfig } from './types.js';
import { copyView, emptyView, holdOnView, liveView, releaseOnView, type Hold, type View } from './view.js';

export interface Reservation {
  jobId: string;
  at: number;
  end: number;
  fit: Fit;
  /** Per reserved node: what is left at `at` after the reserved job takes its share. */
  spare: Map<number, { cpus: number; gpus: number; mem: number }>;
  /** The reserved job's own use per node, so later reservations can plan around it. */
  hold: Map<number, Hold>;
  /**
   * Set when the reserved job borrows past its burst limit: the tenant it borrows for. Such a
   * reservation binds only that tenant's jobs and other borrowers (see `binds`), so lent capacity
   * stays the lender's to use within its own limits.
   */
  borrower?: string;
}

/**
 * Does reservation `r` constrain `job`? A borrower's reservation keeps its own tenant's and other
 * borrowers' backfill off the nodes it is draining, but never the lending tenants' jobs that run
 * within their limits: borrowing stays a use of idle capacity, reclaimable, not a claim on it.
 */
export function binds(r: Reservation, job: JobRequest, jobBorrows: boolean): boolean {
  return r.borrower === undefined || jobBorrows || job.tenant === r.borrower;
}

function holdOf(job: JobRequest, fit: Fit) {
  const hold = new Map<number, Hold>();
  const { per } = job;
  fit.nodes.forEach((i, k) => hold.set(i, { cpus: per.cpus * fit.slots[k], gpus: per.gpus * fit.slots[k], mem: per.memoryMB * fit.slots[k], units: unitsPerSlot(per) * fit.slots[k], milli: unitMilli(per) }));
  return hold;
}

/**
 * Earliest time the job fits if running jobs end at their estimates and earlier reservations keep
 * their nodes: releases are replayed in order of estimated end on a projected view.
 */
export function reserve(s: ClusterState, job: JobRequest, now: number, pol: PolicyConfig, earlier: Reservation[]): Reservation | undefined {
  const view = copyView(s, undefined, readsGpus(s, job, pol));
  // Kept sorted by the state (estimated end, then id): no sort of every running job per reservation.
  const ends = s.runningByEnd();
  const times: number[] = [now];
  for (const a of ends) times.push(Math.max(now, a.estEnd));
  for (const r of earlier) times.push(r.end);
  times.sort((a, b) => a - b);
  let next = 0;
  let last = -Infinity;
  // Necessary condition before the (costly) fit: enough physical capacity freed overall.
  const osBound = pol.oversubscription;
  let freeCpu = s.freeCpu;
  let freeGpu = s.freeGpu;
  const needCpu = job.per.cpus * job.count;
  const needGpu = job.per.gpus * job.count;
  for (const t of times) {
    if (t === last) continue;
    last = t;
    while (next < ends.length && Math.max(now, ends[next].estEnd) <= t) {
      const a = ends[next++];
      releaseOnView(view, a);
      freeCpu += a.job.per.cpus * a.job.count;
      freeGpu += a.job.per.gpus * a.job.count;
    }
    if (!osBound && (needCpu > freeCpu + 1e-9 || needGpu > freeGpu + 1e-9)) continue;
    const overlapping = earlier.filter((r) => r.at < t + planned(job) && r.end > t);
    let v: View = view;
    if (overlapping.length) {
      v = copyView(s, view);
      for (const r of overlapping) for (const [i, h] of r.hold) holdOnView(s, v, i, h);
    }
    const fit = findFit(s, v, job, pol);
    if (!fit) continue;
    const hold = holdOf(job, fit);
    const spare = new Map<number, { cpus: number; gpus: number; mem: number }>();
    for (const [i, h] of hold) spare.set(i, { cpus: s.capCpu[i] - v.usedCpu[i] - h.cpus, gpus: s.capGpu[i] - v.usedGpu[i] - h.gpus, mem: s.capMem[i] - v.usedMem[i] - h.mem });
    return { jobId: job.id, at: t, end: t + planned(job), fit, spare, hold };
  }
  return undefined;
}

/**
 * Can `job` start now on `fit` without delaying any reservation? Commits the use when it can. Spare
 * capacity is counted per node, not per GPU: a backfilled share may take the fraction of the GPU a
 * reserved share was planned on (reservations are advisory; the reserved job is placed afresh).
 * `freed`: victims preempted to make room for the job. What one of them would still have held on a
 * node when a reservation begins (the reservation counted it as busy) is credited back there.
 */
export function backfillAllowed(job: JobRequest, fit: Fit, now: number, reservations: Reservation[], commit: boolean, extraNodes = true, freed: readonly Allocation[] = []): boolean {
  const end = now + planned(job);
  const touched: { r: Reservation; i: number; c: number; g: number; m: number }[] = [];
  for (const r of reservations) {
    if (r.at >= end) continue; // finishes (by its estimate) before the reservation begins
    if (!extraNodes) return false;
    for (let k = 0; k < fit.nodes.length; k++) {
      const sp = r.spare.get(fit.nodes[k]);
      if (!sp) continue;
      let c = job.per.cpus * fit.slots[k];
      let g = job.per.gpus * fit.slots[k];
      let m = job.per.memoryMB * fit.slots[k];
      for (const a of freed) {
        // reserve() replays an end at max(now, estEnd): a victim ending later is busy at r.at.
        if (!(Math.max(now, a.estEnd) > r.at)) continue;
        const q = a.nodes.indexOf(fit.nodes[k]);
        if (q < 0) continue;
        c -= a.job.per.cpus * a.slots[q];
        g -= a.job.per.gpus * a.slots[q];
        m -= a.job.per.memoryMB * a.slots[q];
      }
      if (sp.cpus - c < -1e-9 || sp.gpus - g < -1e-9 || sp.mem - m < -1e-9) return false;
      touched.push({ r, i: fit.nodes[k], c, g, m });
    }
  }
  if (commit)
    for (const t of touched) {
      const sp = t.r.spare.get(t.i)!;
      sp.cpus -= t.c;
      sp.gpus -= t.g;
      sp.mem -= t.m;
    }
  return true;
}

/** Does the job fit on the cluster at all (everything idle)? Cached per job shape. */
export function fitsEmpty(s: ClusterState, job: JobRequest, pol: PolicyConfig): boolean {
  return findFit(s, emptyView(s), job, pol) !== undefined;
}

export { liveView };
