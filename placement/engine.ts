// The placement engine: one scheduling pass over a queue produces decisions (start, preempt, reserve,
// reject), each explained and priced. Pure and deterministic: no I/O, no clock (`now` is an input),
// no randomness; the only state is the ClusterState it is given, which it updates for starts.
import { copyView, findFit, liveView, type Fit, type View } from './fit.js';
import { checkLimits, priceOf, queueOrder, urgent } from './policies.js';
import { chooseVictims } from './preempt.js';
import { backfillAllowed, fitsEmpty, reserve, type Reservation } from './reserve.js';
import { ClusterState } from './state.js';
import type { Decision, Inventory, JobRequest, Placement, PolicyConfig } from './types.js';

function describePlacement(s: ClusterState, job: JobRequest, fit: Fit): Placement {
  const domains = new Set<number>();
  const islands = new Set<number>();
  for (const i of fit.nodes) {
    if (s.domainOf[i] >= 0) domains.add(s.domainOf[i]);
    islands.add(s.islandOf[i]);
  }
  const first = fit.nodes[0];
  const parts = [...new Set(fit.nodes.map((i) => s.partition[i]))].join('+');
  return {
    site: s.site[first],
    cluster: s.cluster[first],
    partition: parts,
    nodes: fit.nodes.map((i, k) => ({ node: s.ids[i], slots: fit.slots[k], cpus: job.per.cpus * fit.slots[k], gpus: job.per.gpus * fit.slots[k], memoryMB: job.per.memoryMB * fit.slots[k] })),
    nvlinkDomains: job.per.gpus > 0 ? domains.size : 0,
    ibIslands: islands.size,
  };
}

function where(p: Placement, s: ClusterState, fit: Fit, pol: PolicyConfig): string {
  const span = `${p.nodes.length} node(s) of ${p.site}/${p.cluster}/${p.partition}` + (p.nvlinkDomains ? `, ${p.nvlinkDomains} NVLink domain(s)` : '') + `, ${p.ibIslands} IB island(s)`;
  const temp = pol.thermal && fit.nodes.some((i) => s.temp[i] > 0) ? `, coolest rack ${Math.min(...fit.nodes.map((i) => s.temp[i]))} °C` : '';
  return span + temp + (fit.oversubscribed ? ', oversubscribed' : '');
}

/** The live view plus what reservations starting before `until` will hold. */
function viewWithHolds(s: ClusterState, reservations: Reservation[], until: number): View {
  const v = copyView(s);
  for (const r of reservations) {
    if (r.at >= until) continue;
    for (const [i, h] of r.hold) {
      v.usedCpu[i] += h.cpus;
      v.usedGpu[i] += h.gpus;
      v.usedMem[i] += h.mem;
    }
  }
  return v;
}

const oneDomain = (p: Placement) => p.nvlinkDomains === 1;

export interface PassOptions {
  /** Cap on the number of jobs examined (a scheduler's per-cycle budget); all when absent. */
  maxJobs?: number;
}

/** One scheduling pass. Starts and preemptions are applied to `s`; reservations are advisory. */
export function schedule(s: ClusterState, queue: JobRequest[], now: number, pol: PolicyConfig, opts: PassOptions = {}): Decision[] {
  const decisions: Decision[] = [];
  const reservations: Reservation[] = [];
  let headBlocked = false;
  let examined = 0;
  const live = liveView(s);
  for (const job of queueOrder(s, pol, queue, now)) {
    if (opts.maxJobs !== undefined && examined++ >= opts.maxJobs) break;
    if (s.running.has(job.id)) continue;
    if (pol.deadlines && job.deadline !== undefined && now + job.walltime > job.deadline) {
      decisions.push({ kind: 'reject', jobId: job.id, reason: 'deadline', explanation: `cannot finish by its deadline: ${job.walltime} s of walltime from now ends ${now + job.walltime - job.deadline} s late` });
      continue;
    }
    const lim = checkLimits(s, pol, job, now);
    if (!lim.ok) {
      if (lim.never) decisions.push({ kind: 'reject', jobId: job.id, reason: lim.limit.reason, explanation: `asks for more than the ${lim.limit.describe} allows even when the tenant runs nothing else` });
      else decisions.push({ kind: 'reserve', jobId: job.id, at: lim.at, reason: lim.limit.reason, price: 0, explanation: `held by the ${lim.limit.describe}; the tenant's running jobs free enough by t=${lim.at}` });
      continue;
    }
    if (headBlocked && pol.backfill === 'none') break;
    let fit = findFit(s, live, job, pol);
    if (fit && reservations.length && !backfillAllowed(job, fit, now, reservations, false, pol.backfillExtraNodes) && pol.backfillExtraNodes) {
      // The best spot now collides with a reservation: look again with reserved capacity taken out.
      fit = findFit(s, viewWithHolds(s, reservations, now + job.walltime), job, pol);
    }
    if (fit) {
      if (reservations.length && !backfillAllowed(job, fit, now, reservations, true, pol.backfillExtraNodes)) {
        if (pol.backfill === 'conservative' && reservations.length < pol.reservationDepth) addReservation(job);
        continue;
      }
      const p = describePlacement(s, job, fit);
      s.allocate(job, fit.nodes, fit.slots, now);
      const backfilled = reservations.length > 0;
      decisions.push({
        kind: 'start',
        jobId: job.id,
        placement: p,
        price: priceOf(s, pol, job, fit, oneDomain(p)),
        backfilled,
        oversubscribed: fit.oversubscribed,
        explanation: `start now on ${where(p, s, fit, pol)}` + (backfilled ? `; backfilled: it does not delay ${reservations.map((r) => r.jobId).join(', ')}` : '') + (urgent(pol, job, now) ? '; deadline-urgent' : ''),
      });
      continue;
    }
    if (pol.preemption) {
      const v = chooseVictims(s, job, now, pol);
      if (v) {
        for (const a of v.victims) s.release(a.job.id);
        const p = describePlacement(s, job, v.fit);
        s.allocate(job, v.fit.nodes, v.fit.slots, now);
        decisions.push({ kind: 'preempt', jobId: job.id, placement: p, victims: v.victims.map((a) => a.job.id), price: priceOf(s, pol, job, v.fit, oneDomain(p)), explanation: `preempt ${v.victims.map((a) => a.job.id).join(', ')} and start on ${where(p, s, v.fit, pol)}: ${v.why}` });
        continue;
      }
    }
    if (pol.backfill === 'none') {
      headBlocked = true;
      addReservation(job);
      continue;
    }
    // EASY reserves for the first blocked job only; depth 0 means no reservations at all (greedy).
    if (reservations.length < (pol.backfill === 'easy' ? Math.min(1, pol.reservationDepth) : pol.reservationDepth)) addReservation(job);
  }
  return decisions;

  function addReservation(job: JobRequest): void {
    const r = reserve(s, job, now, pol, reservations);
    if (!r) {
      if (!fitsEmpty(s, job, pol)) decisions.push({ kind: 'reject', jobId: job.id, reason: 'too-large', explanation: `no set of ${job.count} slot(s) of ${job.per.cpus} CPU / ${job.per.gpus} GPU / ${job.per.memoryMB} MB exists on any one cluster${job.gpuModel ? ` with ${job.gpuModel} GPUs` : ''}${job.strictIsland ? ' inside one IB island' : ''}` });
      return;
    }
    if (pol.deadlines && job.deadline !== undefined && r.end > job.deadline) {
      decisions.push({ kind: 'reject', jobId: job.id, reason: 'deadline', explanation: `the earliest start t=${r.at} ends at t=${r.end}, after its deadline t=${job.deadline}` });
      return;
    }
    reservations.push(r);
    const p = describePlacement(s, job, r.fit);
    decisions.push({ kind: 'reserve', jobId: job.id, at: r.at, placement: p, reason: 'resources', price: priceOf(s, pol, job, r.fit, oneDomain(p)), explanation: `reserved from t=${r.at} on ${where(p, s, r.fit, pol)} (running jobs end by their estimates)` });
  }
}

/** The decision for one job against an inventory and what already runs there (the activity's entry). */
export function decide(inv: Inventory, running: { job: JobRequest; nodes: { node: string; slots: number }[]; start: number }[], job: JobRequest, now: number, pol: PolicyConfig): Decision {
  const s = new ClusterState(inv);
  for (const r of running) {
    const idx = r.nodes.map((n) => s.index.get(n.node));
    if (idx.some((i) => i === undefined)) continue; // a job on nodes that are no longer in the inventory
    s.allocate(r.job, idx as number[], r.nodes.map((n) => n.slots), r.start);
  }
  const d = schedule(s, [job], now, { ...pol, backfill: pol.backfill === 'none' ? 'easy' : pol.backfill }).find((x) => x.jobId === job.id);
  return d ?? { kind: 'reject', jobId: job.id, reason: 'no-decision', explanation: 'the engine produced no decision for this job' };
}

export { ClusterState };
