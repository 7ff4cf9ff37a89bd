// The placement engine: one scheduling pass over a queue produces decisions (start, preempt, reserve,
// reject), each explained and priced. Pure and deterministic: no I/O, no clock (`now` is an input),
// no randomness; the only state is the ClusterState it is given, which it updates for starts.
import { duration, inTime } from './explain.js';
import { carbonHold } from './energy.js';
import { findFit, largestGroup, readsGpus, wantsOneDomain, wantsOneIsland, type Fit } from './fit.js';
import { shareProblem } from './gpus.js';
import { checkLimits, priceOf, queueOrder, urgent } from './policies.js';
import { chooseOrder } from './dynp.js';
import { chooseVictims } from './preempt.js';
import { backfillAllowed, binds, fitsEmpty, reserve, type Reservation } from './reserve.js';
import { ClusterState, type Allocation } from './state.js';
import { planned, type Decision, type JobRequest, type Placement, type PolicyConfig, type SlotAssignment } from './types.js';
import { copyView, holdOnView, liveView, type View } from './view.js';

/** `a`: the booked allocation, whose GPU shares the placement names (an executor binds them). */
function describePlacement(s: ClusterState, job: JobRequest, fit: Fit, a?: Allocation): Placement {
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
    nodes: fit.nodes.map((i, k) => {
      const n: SlotAssignment = { node: s.ids[i], slots: fit.slots[k], cpus: job.per.cpus * fit.slots[k], gpus: job.per.gpus * fit.slots[k], memoryMB: job.per.memoryMB * fit.slots[k] };
      if (job.per.gpuMilli !== undefined && a?.gpus) n.gpuIndex = a.gpus[k].map((x) => x - s.gpuOff[i]);
      return n;
    }),
    nvlinkDomains: job.per.gpus > 0 ? domains.size : 0,
    ibIslands: islands.size,
  };
}

function where(p: Placement, s: ClusterState, fit: Fit, pol: PolicyConfig, job: JobRequest): string {
  // Islands are named only where the inventory declares some: a laptop or a flat cluster has none.
  const islands = fit.nodes.some((i) => s.islands[s.islandOf[i]].declared) ? `, ${p.ibIslands} IB island(s)` : '';
  const span = `${p.nodes.length} node(s) of ${p.site}/${p.cluster}/${p.partition}` + (p.nvlinkDomains ? `, ${p.nvlinkDomains} NVLink domain(s)` : '') + islands;
  const temp = pol.thermal && fit.nodes.some((i) => s.temp[i] > 0) ? `, coolest rack ${fit.nodes.reduce((m, i) => Math.min(m, s.temp[i]), Infinity)} °C` : '';
  return span + temp + (fit.oversubscribed ? ', oversubscribed' : '') + (fit.why ? `; ${fit.why}` : '') + bound(job);
}

/** The hard topology constraints the job carries, for explanations. */
function bound(job: JobRequest): string {
  return (wantsOneDomain(job) ? '; needsNvlink: inside one NVLink domain' : '') + (job.needsIb ? '; needsIb: inside one IB island' : '');
}

/** Why a job that fits nowhere, even on the idle cluster, is rejected. */
function tooLarge(s: ClusterState, job: JobRequest, pol: PolicyConfig): string {
  const what = `${job.count} slot(s) of ${job.per.cpus} CPU / ${job.per.gpus} GPU / ${job.per.memoryMB} MB`;
  const model = job.gpuModel ? ` with ${job.gpuModel} GPUs` : '';
  const oneDomain = wantsOneDomain(job);
  const oneIsland = wantsOneIsland(job);
  if ((oneDomain || job.needsIb) && fitsEmpty(s, { ...job, needsNvlink: false, needsIb: false, strictIsland: false }, pol)) {
    // The cluster could hold it; the group it must stay in never can.
    const groups = [oneDomain ? 'NVLink domain' : '', oneIsland ? 'IB island' : ''].filter(Boolean).join(' inside one ');
    const most = largestGroup(s, job, pol);
    const flags = [oneDomain ? 'needsNvlink' : '', job.needsIb ? 'needsIb' : '', job.strictIsland ? 'strictIsland' : ''].filter(Boolean).join(', ');
    return `no single ${groups} can ever hold ${what}${model}, and the job must stay inside one (${flags}): the largest holds ${most} of its ${job.count} slot(s) on the idle cluster`;
  }
  return `no set of ${what} exists on any one cluster${model}${oneIsland ? ' inside one IB island' : ''}${oneDomain ? ' inside one NVLink domain' : ''}`;
}

/** The live view plus what reservations starting before `until` will hold. */
function viewWithHolds(s: ClusterState, reservations: Reservation[], until: number, job: JobRequest, pol: PolicyConfig): View {
  const v = copyView(s, undefined, readsGpus(s, job, pol));
  for (const r of reservations) {
    if (r.at >= until) continue;
    for (const [i, h] of r.hold) holdOnView(s, v, i, h);
  }
  return v;
}

/**
 * Does the job need at least one whole GPU node? Only then can narrow jobs strand it forever by
 * keeping every node partly used; a narrower borrower finds room as soon as any job ends.
 */
function wholeNodes(s: ClusterState, job: JobRequest): boolean {
  if (!(job.per.gpus > 0)) return false;
  let most = 0;
  for (let i = 0; i < s.n; i++) most = Math.max(most, s.capGpu[i]);
  return most > 0 && job.per.gpus * job.count >= most;
}

const gpuDemand = (job: JobRequest) => job.per.gpus * job.count;

export interface PassOptions {
  /** Cap on the number of jobs examined (a scheduler's per-cycle budget); all when absent. */
  maxJobs?: number;
}

/** One scheduling pass. Starts and preemptions are applied to `s`; reservations are advisory. */
export function schedule(s: ClusterState, queue: JobRequest[], now: number, pol: PolicyConfig, opts: PassOptions = {}): Decision[] {
  if (pol.dynp?.length) pol = { ...pol, order: chooseOrder(s, queue, now, pol, pol.dynp), dynp: undefined };
  const decisions: Decision[] = [];
  const reservations: Reservation[] = [];
  let headBlocked = false;
  let examined = 0;
  const live = liveView(s);
  // Per tenant, the widest GPU demand queued: only a borrower that wide may drain nodes (below).
  const widest = new Map<string, number>();
  if (pol.borrowing) for (const j of queue) if (!s.running.has(j.id)) widest.set(j.tenant, Math.max(widest.get(j.tenant) ?? 0, gpuDemand(j)));
  for (const job of queueOrder(s, pol, queue, now)) {
    if (opts.maxJobs !== undefined && examined++ >= opts.maxJobs) break;
    if (s.running.has(job.id)) continue;
    const bad = shareProblem(job.per);
    if (bad) {
      decisions.push({ kind: 'reject', jobId: job.id, reason: 'invalid', explanation: `cannot be placed as asked: ${bad}` });
      continue;
    }
    const held = pol.carbonAware && carbonHold(pol.carbonAware, job, now);
    if (held) {
      // Held jobs take no reservation: EASY backfill goes on around them as if they had not arrived.
      decisions.push({ kind: 'reserve', jobId: job.id, at: held.until, reason: 'carbon', price: 0, explanation: `held for a cleaner start ${inTime(held.until - now)}: mean carbon intensity over its walltime ${Math.round(held.thenG)} instead of ${Math.round(held.nowG)} gCO2/kWh now (carbon-aware, at most ${duration(pol.carbonAware!.maxDelay)} after submit)` });
      continue;
    }
    if (pol.deadlines && job.deadline !== undefined && now + job.walltime > job.deadline) {
      decisions.push({ kind: 'reject', jobId: job.id, reason: 'deadline', explanation: `cannot finish by its deadline: ${duration(job.walltime)} of walltime from now ends ${duration(now + job.walltime - job.deadline)} late` });
      continue;
    }
    const lim = checkLimits(s, pol, job, now);
    if (!lim.ok) {
      if (lim.never) decisions.push({ kind: 'reject', jobId: job.id, reason: lim.limit.reason, explanation: `asks for more than the ${lim.limit.describe} allows even when the tenant runs nothing else` });
      else decisions.push({ kind: 'reserve', jobId: job.id, at: lim.at, reason: lim.limit.reason, price: 0, explanation: `held by the ${lim.limit.describe}; the tenant's running jobs free enough ${inTime(lim.at - now)}` });
      continue;
    }
    if (headBlocked && pol.backfill === 'none') break;
    const borrowing = lim.borrowing;
    // The reservations this job must respect: a borrower's binds only its tenant and other borrowers.
    const res = reservations.filter((r) => binds(r, job, borrowing !== undefined));
    let fit = findFit(s, live, job, pol);
    if (fit && res.length && !backfillAllowed(job, fit, now, res, false, pol.backfillExtraNodes) && pol.backfillExtraNodes) {
      // The best spot now collides with a reservation: look again with reserved capacity taken out.
      fit = findFit(s, viewWithHolds(s, res, now + planned(job), job, pol), job, pol);
    }
    if (borrowing && !fit) {
      // A borrower takes only capacity that is idle now: it never preempts. Without a reservation,
      // though, a wide borrower (a whole-node NVLink job, say) waits forever behind narrow ones that
      // keep every node partly used; so a blocked borrower that needs whole GPU nodes reserves like
      // any job (EASY's one; conservative: up to the depth), a reservation that binds only its own
      // tenant's jobs and other borrowers (`binds`): the lender's jobs within their limits still use,
      // and may reclaim, that capacity, and the tenant's quotas were checked above as hard caps.
      // Only the widest GPU demand its tenant has queued may drain: draining for whichever wide job
      // comes first in the order leaves the widest (the LPT tail) to run last, which cost more than
      // the fragmentation it saved (docs/placement.md, table (b)'s gap).
      if (pol.backfill !== 'none' && wholeNodes(s, job) && gpuDemand(job) >= (widest.get(job.tenant) ?? 0) && count(true) < depthLimit() && addReservation(job, job.tenant)) continue;
      const own = checkLimits(s, { ...pol, borrowing: false }, job, now);
      const at = own.ok ? now : own.never ? Infinity : own.at;
      decisions.push({ kind: 'reserve', jobId: job.id, at, reason: 'qos-burst', price: 0, explanation: `held by the ${borrowing.limit.describe}; it may borrow idle capacity past it, and none fits it now` + (Number.isFinite(at) ? `; the tenant's running jobs free enough ${inTime(at - now)}` : '') });
      continue;
    }
    if (fit) {
      if (res.length && !backfillAllowed(job, fit, now, res, true, pol.backfillExtraNodes)) {
        if (pol.backfill === 'conservative' && count(borrowing !== undefined) < pol.reservationDepth) addReservation(job, borrowing && job.tenant);
        continue;
      }
      const p = describePlacement(s, job, fit, s.allocate(job, fit.nodes, fit.slots, now, fit.gpus));
      const backfilled = res.length > 0;
      decisions.push({
        kind: 'start',
        jobId: job.id,
        placement: p,
        price: priceOf(s, pol, job, fit),
        backfilled,
        oversubscribed: fit.oversubscribed,
        ...(borrowing && { borrowed: true }),
        explanation:
          `start now on ${where(p, s, fit, pol, job)}` +
          (backfilled ? `; backfilled: it does not delay ${res.map((r) => r.jobId).join(', ')}` : '') +
          (urgent(pol, job, now) ? '; deadline-urgent' : '') +
          (borrowing ? `; borrows idle capacity past the ${borrowing.limit.describe}, reclaimable by preemption` : ''),
      });
      continue;
    }
    if (pol.preemption) {
      // A job that starts by preemption passes the same backfill test as one that starts in free
      // capacity: reserved jobs keep what they need (victims' use at their start is credited back).
      let v = chooseVictims(s, job, now, pol);
      if (v && res.length && !backfillAllowed(job, v.fit, now, res, false, pol.backfillExtraNodes, v.victims) && pol.backfillExtraNodes) {
        // Its best victims sit where a reservation needs room: choose again with reserved capacity taken out.
        v = chooseVictims(s, job, now, pol, viewWithHolds(s, res, now + planned(job), job, pol));
      }
      if (v && res.length && !backfillAllowed(job, v.fit, now, res, true, pol.backfillExtraNodes, v.victims)) v = undefined;
      if (v) {
        for (const a of v.victims) s.release(a.job.id);
        const p = describePlacement(s, job, v.fit, s.allocate(job, v.fit.nodes, v.fit.slots, now, v.fit.gpus));
        const spared = res.length ? `; it does not delay ${res.map((r) => r.jobId).join(', ')}` : '';
        decisions.push({ kind: 'preempt', jobId: job.id, placement: p, victims: v.victims.map((a) => a.job.id), price: priceOf(s, pol, job, v.fit), explanation: `preempt ${v.victims.map((a) => a.job.id).join(', ')} and start on ${where(p, s, v.fit, pol, job)}: ${v.why}${spared}` });
        continue;
      }
    }
    if (pol.backfill === 'none') {
      headBlocked = true;
      addReservation(job);
      continue;
    }
    // EASY reserves for the first blocked job only; depth 0 means no reservations at all (greedy).
    // Borrowers' reservations are counted apart: they must not take the one a lender's job gets.
    if (count(false) < depthLimit()) addReservation(job);
  }
  return decisions;

  /** Reservations held so far by borrowers (`borrowed`) or by jobs within their limits. */
  function count(borrowed: boolean): number {
    let n = 0;
    for (const r of reservations) if ((r.borrower !== undefined) === borrowed) n++;
    return n;
  }

  function depthLimit(): number {
    return pol.backfill === 'easy' ? Math.min(1, pol.reservationDepth) : pol.reservationDepth;
  }

  /**
   * `borrower`: the tenant the job borrows for (its reservation then binds only that tenant and borrowers).
   * True when it decided the job (reserved or rejected it).
   */
  function addReservation(job: JobRequest, borrower?: string | false): boolean {
    // A job plans around the reservations that bind it; a borrower around all of them.
    const r = reserve(s, job, now, pol, borrower ? reservations : reservations.filter((x) => binds(x, job, false)));
    if (!r) {
      if (fitsEmpty(s, job, pol)) return false; // no decision: a borrower then waits as before
      decisions.push({ kind: 'reject', jobId: job.id, reason: 'too-large', explanation: tooLarge(s, job, pol) });
      return true;
    }
    if (pol.deadlines && job.deadline !== undefined && r.end > job.deadline) {
      decisions.push({ kind: 'reject', jobId: job.id, reason: 'deadline', explanation: `its earliest start, ${inTime(r.at - now)}, would end ${duration(r.end - job.deadline)} after its deadline` });
      return true;
    }
    if (borrower) r.borrower = borrower;
    reservations.push(r);
    const p = describePlacement(s, job, r.fit);
    const lent = borrower ? `; it borrows past its burst limit, so the reservation holds only against tenant ${borrower}'s jobs and other borrowers` : '';
    decisions.push({ kind: 'reserve', jobId: job.id, at: r.at, placement: p, reason: 'resources', price: priceOf(s, pol, job, r.fit), explanation: `reserved from t=${r.at} on ${where(p, s, r.fit, pol, job)} (running jobs end by their estimates)${lent}` });
    return true;
  }
}

export { ClusterState };
