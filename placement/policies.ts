// Admission policies that do not depend on where a job lands: tenant quotas, QoS burst limits and
// guarantees (weighted DRF entitlements), queue order, deadlines and price.
import type { Allocation, ClusterState, Usage } from './state.js';
import { inOneDomain, type Fit } from './fit.js';
import { PRICE_RULES, QOS_RULES, planned, type JobRequest, type PolicyConfig, type QosClass, type TenantSpec } from './types.js';

export function demand(job: JobRequest): Usage {
  return { cpus: job.per.cpus * job.count, gpus: job.per.gpus * job.count, mem: job.per.memoryMB * job.count };
}

const tenantOf = (pol: PolicyConfig, name: string): TenantSpec | undefined => pol.tenants.find((t) => t.name === name);

/** The tenant's fair share of the cluster per resource: capacity × weight / Σ weights. */
export function entitlement(s: ClusterState, pol: PolicyConfig, tenant: string): Usage | undefined {
  const t = tenantOf(pol, tenant);
  if (!t) return undefined;
  const total = pol.tenants.reduce((a, x) => a + (x.weight ?? 1), 0);
  const f = (t.weight ?? 1) / total;
  return { cpus: s.totalCpu * f, gpus: s.totalGpu * f, mem: s.totalMem * f };
}

/** Dominant share of `u` relative to `base` (DRF): the largest per-resource fraction. */
export function dominant(u: Usage, base: Usage): number {
  let d = 0;
  if (base.cpus > 0) d = Math.max(d, u.cpus / base.cpus);
  if (base.gpus > 0) d = Math.max(d, u.gpus / base.gpus);
  if (base.mem > 0) d = Math.max(d, u.mem / base.mem);
  return d;
}

const add = (a: Usage, b: Usage, sign = 1): Usage => ({ cpus: a.cpus + sign * b.cpus, gpus: a.gpus + sign * b.gpus, mem: a.mem + sign * b.mem });

export interface Limit {
  reason: 'quota' | 'qos-burst';
  /**
   * Returns true when usage u stays within the limit. Monotone (true for u stays true for any usage
   * at most u in every resource): checkLimits relies on it to step over whole blocks of jobs.
   */
  within: (u: Usage) => boolean;
  describe: string;
}

/** The hard limits the job's tenant and class impose (quota caps; the class's burst ceiling). */
export function limitsFor(s: ClusterState, pol: PolicyConfig, job: JobRequest): Limit[] {
  const out: Limit[] = [];
  const t = tenantOf(pol, job.tenant);
  if (pol.quotas && t?.quota) {
    const q = t.quota;
    out.push({
      reason: 'quota',
      within: (u) => (q.cpus === undefined || u.cpus <= q.cpus + 1e-9) && (q.gpus === undefined || u.gpus <= q.gpus + 1e-9) && (q.memoryMB === undefined || u.mem <= q.memoryMB + 1e-9),
      describe: `tenant ${job.tenant} quota (${[q.cpus !== undefined ? `${q.cpus} CPUs` : '', q.gpus !== undefined ? `${q.gpus} GPUs` : '', q.memoryMB !== undefined ? `${q.memoryMB} MB` : ''].filter(Boolean).join(', ')})`,
    });
  }
  const e = pol.qos ? entitlement(s, pol, job.tenant) : undefined;
  if (e) {
    const burst = QOS_RULES[job.qos].burst;
    out.push({ reason: 'qos-burst', within: (u) => dominant(u, e) <= burst + 1e-9, describe: `${job.qos} burst limit (${Math.round(burst * 100)}% of tenant ${job.tenant}'s entitlement)` });
  }
  return out;
}

const safe = (u: Usage) => Number.isSafeInteger(u.cpus) && Number.isSafeInteger(u.gpus) && Number.isSafeInteger(u.mem);

/**
 * ok with `borrowing`: only the class's burst limit stands in the way and the job may borrow past it
 * (mayBorrow): it starts only in capacity that is idle now, and stays reclaimable.
 */
export type LimitCheck = { ok: true; borrowing?: { limit: Limit; at: number } } | { ok: false; never: boolean; limit: Limit; at: number };

/** May this job borrow past its burst limit? Only work that loses little when reclaimed. */
export function mayBorrow(pol: PolicyConfig, job: JobRequest): boolean {
  return pol.borrowing && job.checkpointable === true && job.preemptible !== false;
}

/** Checks the job against its limits; when blocked, estimates when the tenant's running jobs free enough. */
export function checkLimits(s: ClusterState, pol: PolicyConfig, job: JobRequest, now: number): LimitCheck {
  const need = demand(job);
  let borrowing: { limit: Limit; at: number } | undefined;
  for (const limit of limitsFor(s, pol, job)) {
    const u = add(s.usage(job.tenant), need);
    if (limit.within(u)) continue;
    // A borrower may run past its burst limit, even one it exceeds on its own, on lent capacity.
    if (limit.reason === 'qos-burst' && mayBorrow(pol, job)) {
      borrowing = { limit, at: Infinity };
      continue;
    }
    if (!limit.within(need)) return { ok: false, never: true, limit, at: Infinity };
    // Hot on busy clusters (every blocked job walks its tenant's running jobs, earliest end first):
    // one mutable usage and the same subtractions, in the same order, as u − demand(a) each step.
    const bl = s.runBlocks(job.tenant);
    const left = { ...u };
    const end = { cpus: 0, gpus: 0, mem: 0 };
    let at = Infinity;
    walk: for (let b = 0; bl && b < bl.n; b++) {
      // Usage only falls along the walk (block sums hold non-negative demands) and a limit that
      // fails on some usage fails on any larger one, so a block whose end still breaks the limit
      // has no answer inside it. Skipping it is one subtraction, exact when everything is a safe
      // integer (then it equals the one-by-one result); otherwise the block is walked.
      if (bl.inexact[b] === 0 && safe(left)) {
        end.cpus = left.cpus - bl.cpus[b];
        end.gpus = left.gpus - bl.gpus[b];
        end.mem = left.mem - bl.mem[b];
        if (safe(end) && !limit.within(end)) {
          left.cpus = end.cpus;
          left.gpus = end.gpus;
          left.mem = end.mem;
          continue;
        }
      }
      for (const a of bl.items[b]) {
        const { per, count } = a.job;
        left.cpus = left.cpus - per.cpus * count;
        left.gpus = left.gpus - per.gpus * count;
        left.mem = left.mem - per.memoryMB * count;
        if (limit.within(left)) {
          at = Math.max(now, a.estEnd);
          break walk;
        }
      }
    }
    return { ok: false, never: false, limit, at };
  }
  return borrowing ? { ok: true, borrowing } : { ok: true };
}

/** Resources (cpus, gpus, mem) in which the tenant holds more than `burst` × its entitlement. */
function overBurst(s: ClusterState, pol: PolicyConfig, tenant: string, burst: number): [boolean, boolean, boolean] | undefined {
  const e = entitlement(s, pol, tenant);
  if (!e) return undefined;
  const u = s.usage(tenant);
  const over = (x: number, cap: number) => cap > 0 && x > burst * cap + 1e-9;
  const r: [boolean, boolean, boolean] = [over(u.cpus, e.cpus), over(u.gpus, e.gpus), over(u.mem, e.mem)];
  return r[0] || r[1] || r[2] ? r : undefined;
}

/**
 * Borrowing's reclaim (Kueue's reclaimWithinCohort) for one job against many victims while the state
 * stands still; undefined when the job cannot reclaim. A job within its own burst limit (it borrows
 * nothing itself) may preempt a checkpointable job of another tenant that holds, beyond its own
 * class's burst, a resource this job asks for: that capacity is lent, and its owners get it back.
 */
export function reclaimTest(s: ClusterState, pol: PolicyConfig, job: JobRequest): ((victim: JobRequest) => boolean) | undefined {
  if (!pol.borrowing || !pol.qos) return undefined;
  const ej = entitlement(s, pol, job.tenant);
  if (!ej || dominant(add(s.usage(job.tenant), demand(job)), ej) > QOS_RULES[job.qos].burst + 1e-9) return undefined;
  const need = demand(job);
  const known = new Map<string, boolean>();
  return (victim) => {
    if (victim.tenant === job.tenant || victim.checkpointable !== true || victim.preemptible === false) return false;
    const key = `${victim.tenant}\u0000${victim.qos}`;
    let ok = known.get(key);
    if (ok === undefined) {
      const over = overBurst(s, pol, victim.tenant, QOS_RULES[victim.qos].burst);
      known.set(key, (ok = over !== undefined && ((over[0] && need.cpus > 0) || (over[1] && need.gpus > 0) || (over[2] && need.mem > 0))));
    }
    return ok;
  };
}

/** QoS guarantee: may this job preempt `victim` because its tenant is below its guarantee and the victim's tenant is borrowing? */
export function guaranteeAllows(s: ClusterState, pol: PolicyConfig, job: JobRequest, victim: JobRequest): boolean {
  return guaranteeTest(s, pol, job)?.(victim) ?? false;
}

/**
 * guaranteeAllows for one job against many victims while the state stands still; undefined when the
 * job's own side rules out every victim. The answer depends on a victim only through its tenant and
 * class, so it is worked out once per pair: a blocked job asks about every running allocation.
 */
export function guaranteeTest(s: ClusterState, pol: PolicyConfig, job: JobRequest): ((victim: JobRequest) => boolean) | undefined {
  const ej = pol.qos ? entitlement(s, pol, job.tenant) : undefined;
  if (!ej || !(dominant(add(s.usage(job.tenant), demand(job)), ej) <= QOS_RULES[job.qos].guarantee + 1e-9)) return undefined;
  const known = new Map<string, Map<QosClass, boolean>>();
  return (victim) => {
    if (victim.tenant === job.tenant) return false;
    let byQos = known.get(victim.tenant);
    if (!byQos) known.set(victim.tenant, (byQos = new Map()));
    let ok = byQos.get(victim.qos);
    if (ok === undefined) {
      const ev = entitlement(s, pol, victim.tenant);
      byQos.set(victim.qos, (ok = ev !== undefined && dominant(s.usage(victim.tenant), ev) > QOS_RULES[victim.qos].guarantee + 1e-9));
    }
    return ok;
  };
}

/** Tiresias-style discretised least-attained-service queue index (0 = least served). */
export function lasQueue(pol: PolicyConfig, job: JobRequest): number {
  const a = job.attained ?? 0;
  let q = 0;
  while (q < pol.lasThresholds.length && a >= pol.lasThresholds[q]) q++;
  return q;
}

/**
 * 'srsf''s remaining service: requested walltime × GPUs less the GPU-seconds attained; a CPU-only job
 * (attained counts GPU-seconds) counts walltime × CPUs.
 */
export function remainingService(job: JobRequest): number {
  if (job.per.gpus > 0) return Math.max(0, job.walltime * job.per.gpus * job.count - (job.attained ?? 0));
  return job.walltime * job.per.cpus * job.count;
}

/** Rank for preemption: a job may only displace strictly lower-ranked jobs. */
export function rank(pol: PolicyConfig, job: JobRequest): number {
  return pol.order === 'las' ? -lasQueue(pol, job) : pol.order === 'srsf' ? -remainingService(job) : job.priority;
}

/** Deadline-urgent: it must start within one walltime of now to finish in time. */
export function urgent(pol: PolicyConfig, job: JobRequest, now: number): boolean {
  return pol.deadlines && job.deadline !== undefined && job.deadline - job.walltime - now <= job.walltime;
}

/** Bounded slowdown's floor (s): a job asking for less counts as this long, as in bsld with τ = 10 s. */
export const SCORE_TAU = 10;

/**
 * The 'score' order's key of a waiting job, smaller first: its requested size (dominant share of the
 * cluster, `total`) × max(requested walltime, τ)². This is Smith's rule for the sum of bounded
 * slowdowns: running job j first delays every other job by its run, at a cost of that delay over the
 * other job's max(run, τ); with the work a job takes (size × walltime) as its processing time and
 * 1 / max(walltime, τ) as its weight, the ratio that orders an optimal single-machine schedule is
 * size × walltime × max(walltime, τ). Unlike shortest-request-first, it counts width (a wide job
 * takes the machine from many others), and unlike smallest-area-first it counts that a short job's
 * slowdown grows fastest. Requested times only. PolicyConfig.starvation, when set, ages it (ageKey).
 */
export function scoreKey(job: JobRequest, total: Usage): number {
  const r = Math.max(planned(job), SCORE_TAU);
  // A job that asks for nothing measurable still orders by its walltime.
  return Math.max(dominant(demand(job), total), 1e-12) * r * r;
}

/**
 * The 'score' order's aged key, smaller first: ln(scoreKey × shareWeight) − wait / starvation, i.e.
 * the key divided by e for every `starvation` seconds waited (PolicyConfig.starvation; 0: no aging,
 * the plain key's order). Two waiting jobs' waits differ by their submit times' difference, which
 * does not change as both wait, so the order between them never flips as time passes: it is the
 * static key ln(key) + submit / starvation, and a reservation's holder only changes when a job
 * arrives or leaves. On the traces of table (a) (bench/placement/swf.ts) the alternatives did worse:
 * promoting the oldest job to the head once its wait passed a bound (k × its own request, k × the
 * drain time, k × the longest request, k × the running jobs' mean wait, or a fixed 100–400 h) either
 * moved max wait less or, past a cliff, raised bsld 4–19× on the saturated Lublin windows, where every
 * big job is past the bound and the order turns FCFS; aging at a rate tied to the drain time or the
 * longest request (which reorders waiting jobs as time passes), or only after a grace period, moved
 * max wait less for more bsld; dividing by a power of the response ratio grows too slowly with wait
 * to overcome keys that span ten orders of magnitude. Stronger aging cuts max wait further at a
 * price in bsld, and on fresh traces even the 60 h setting cost more than it bought, so it is off by
 * default (see PolicyConfig.starvation). With starvation 0 it returns the key itself, not its
 * logarithm: near-equal keys then order exactly as before. The simulations are chaotic enough that
 * this matters: with the logarithm (near-equal keys tie and go to the earlier submit), HPC2N's
 * sample 7 goes from bsld 8.7 to 135.8 at any starvation from 150 h up, through one tie broken the
 * other way and a burst of 1 s jobs asking for 4 h that waits behind it.
 */
export function ageKey(key: number, wait: number, starvation: number): number {
  return starvation > 0 ? Math.log(key) - wait / starvation : key;
}

/**
 * Fair-share weight of the 'score' order for a tenant holding dominant share `used` of the cluster
 * when its fair share is `share` (its weight over the weights of the tenants with jobs waiting in
 * this pass): 1 when it runs nothing, 2 at its share, 1 + k at k times it. A tenant's jobs compete
 * by scoreKey × this weight: a heavy user's job must be proportionally smaller to go before a light
 * user's. Keys span many orders of magnitude, so between jobs of different sizes fair share is a
 * mild correction and between jobs of similar size it decides; with one tenant it changes nothing.
 */
export function shareWeight(used: number, share: number): number {
  return 1 + (share > 0 ? used / share : 0);
}

/**
 * F1 (Carastan-Santos & de Camargo, SC'17), smaller first: log10(requested walltime) × cores +
 * 870 × log10(submit time). A baseline: its age term depends on where time 0 is (the bench's traces
 * start at 0), so it is not meant for live use.
 */
export function f1Key(job: JobRequest): number {
  const n = job.count * (job.per.cpus || job.per.gpus || 1);
  return Math.log10(Math.max(job.walltime, 1)) * n + 870 * Math.log10(Math.max(job.submit, 1));
}

const cmpId = (a: JobRequest, b: JobRequest) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The makespan guard's critical jobs (PolicyConfig.makespanGuard): those whose walltime is at least
 * the drain time of the known work on a resource they use. Requested times only: running jobs count
 * until their estimated ends, queued jobs for their whole requests.
 */
export function criticalJobs(s: ClusterState, queue: JobRequest[], now: number): Set<JobRequest> {
  let wCpu = 0;
  let wGpu = 0;
  for (const a of s.running.values()) {
    const left = Math.max(0, a.estEnd - now);
    wCpu += left * a.job.per.cpus * a.job.count;
    wGpu += left * a.job.per.gpus * a.job.count;
  }
  for (const j of queue) {
    if (s.running.has(j.id)) continue;
    wCpu += j.walltime * j.per.cpus * j.count;
    wGpu += j.walltime * j.per.gpus * j.count;
  }
  const dCpu = s.totalCpu > 0 ? wCpu / s.totalCpu : 0;
  const dGpu = s.totalGpu > 0 ? wGpu / s.totalGpu : 0;
  const out = new Set<JobRequest>();
  for (const j of queue) if ((j.per.gpus > 0 && j.walltime >= dGpu) || (j.per.cpus > 0 && j.walltime >= dCpu)) out.add(j);
  return out;
}

function baseCompare(s: ClusterState, pol: PolicyConfig, now: number, critical?: Set<JobRequest>): (a: JobRequest, b: JobRequest) => number {
  const lead = (a: JobRequest, b: JobRequest) => Number(urgent(pol, b, now)) - Number(urgent(pol, a, now)) || (pol.deadlines && urgent(pol, a, now) ? (a.deadline ?? 0) - (b.deadline ?? 0) : 0);
  const tolerant = (a: JobRequest, b: JobRequest) => (pol.order === 'fairshare' || pol.order === 'priority' || pol.order === 'score' ? Number(a.delayTolerant ?? false) - Number(b.delayTolerant ?? false) : 0);
  switch (pol.order) {
    case 'fcfs':
      return (a, b) => lead(a, b) || a.submit - b.submit || cmpId(a, b);
    case 'sjf':
      return (a, b) => lead(a, b) || a.walltime - b.walltime || a.submit - b.submit || cmpId(a, b);
    case 'las':
      return (a, b) => lead(a, b) || lasQueue(pol, a) - lasQueue(pol, b) || a.submit - b.submit || cmpId(a, b);
    case 'srsf':
      return (a, b) => lead(a, b) || remainingService(a) - remainingService(b) || a.submit - b.submit || cmpId(a, b);
    case 'saf':
      return (a, b) => lead(a, b) || a.walltime * a.count * (a.per.cpus || a.per.gpus) - b.walltime * b.count * (b.per.cpus || b.per.gpus) || a.submit - b.submit || cmpId(a, b);
    case 'f1': {
      const memo = new Map<JobRequest, number>();
      const k = (j: JobRequest) => {
        let v = memo.get(j);
        if (v === undefined) memo.set(j, (v = f1Key(j)));
        return v;
      };
      return (a, b) => lead(a, b) || k(a) - k(b) || a.submit - b.submit || cmpId(a, b);
    }
    case 'score': {
      // Keys are worked out once per pass; ties go to the earlier submit (FCFS).
      const total = { cpus: s.totalCpu, gpus: s.totalGpu, mem: s.totalMem };
      const memo = new Map<JobRequest, number>();
      const sk = (j: JobRequest) => {
        let v = memo.get(j);
        if (v === undefined) memo.set(j, (v = ageKey(scoreKey(j, total), now - j.submit, pol.starvation)));
        return v;
      };
      const crit = (a: JobRequest, b: JobRequest) => (critical ? Number(critical.has(b)) - Number(critical.has(a)) || (critical.has(a) ? b.walltime - a.walltime : 0) : 0);
      return (a, b) => lead(a, b) || b.priority - a.priority || tolerant(a, b) || crit(a, b) || sk(a) - sk(b) || a.submit - b.submit || cmpId(a, b);
    }
    case 'priority':
    case 'fairshare':
      return (a, b) => lead(a, b) || b.priority - a.priority || tolerant(a, b) || a.submit - b.submit || cmpId(a, b);
  }
}

/**
 * The order in which a pass considers jobs. Weighted DRF interleaves tenants: the next job comes from
 * the tenant with the smallest dominant share / weight, counting what this pass has already started.
 * Returns an iterator so that starts made during the pass move the shares.
 */
export function* queueOrder(s: ClusterState, pol: PolicyConfig, queue: JobRequest[], now: number): Generator<JobRequest> {
  const critical = pol.order === 'score' && pol.makespanGuard ? criticalJobs(s, queue, now) : undefined;
  const cmp = baseCompare(s, pol, now, critical);
  const sorted = [...queue].sort(cmp);
  if (pol.order === 'score' && pol.fairShare) {
    yield* scoreOrder(s, pol, sorted, now, cmp, critical);
    return;
  }
  if (!(pol.order === 'fairshare' && pol.fairShare)) {
    yield* sorted;
    return;
  }
  const byTenant = new Map<string, JobRequest[]>();
  for (const j of sorted) {
    const l = byTenant.get(j.tenant);
    if (l) l.push(j);
    else byTenant.set(j.tenant, [j]);
  }
  const total = { cpus: s.totalCpu, gpus: s.totalGpu, mem: s.totalMem };
  const weight = (t: string) => pol.tenants.find((x) => x.name === t)?.weight ?? 1;
  const heads = [...byTenant.entries()].map(([t, list]) => ({ t, list, at: 0 }));
  for (;;) {
    let best: (typeof heads)[number] | undefined;
    let bestKey = Infinity;
    for (const h of heads) {
      if (h.at >= h.list.length) continue;
      const j = h.list[h.at];
      // Deadline-urgent and higher-priority work is not held back by fair share.
      const key = (urgent(pol, j, now) ? -2e9 : 0) - j.priority * 1e6 + dominant(s.usage(h.t), total) / weight(h.t);
      if (key < bestKey || (key === bestKey && best && cmp(j, best.list[best.at]) < 0)) {
        best = h;
        bestKey = key;
      }
    }
    if (!best) return;
    yield best.list[best.at++];
  }
}

/**
 * The 'score' order with fair share: each tenant's jobs in score order; the next job is the head with
 * the smallest ageKey of scoreKey × shareWeight of its tenant, with what this pass has started counted (urgent
 * and higher-priority work first, as everywhere). One tenant: exactly the score order.
 */
function* scoreOrder(s: ClusterState, pol: PolicyConfig, sorted: JobRequest[], now: number, cmp: (a: JobRequest, b: JobRequest) => number, critical?: Set<JobRequest>): Generator<JobRequest> {
  const byTenant = new Map<string, JobRequest[]>();
  for (const j of sorted) {
    const l = byTenant.get(j.tenant);
    if (l) l.push(j);
    else byTenant.set(j.tenant, [j]);
  }
  if (byTenant.size === 1) {
    yield* sorted;
    return;
  }
  const total = { cpus: s.totalCpu, gpus: s.totalGpu, mem: s.totalMem };
  const weight = (t: string) => pol.tenants.find((x) => x.name === t)?.weight ?? 1;
  const sum = [...byTenant.keys()].reduce((a, t) => a + weight(t), 0);
  const heads = [...byTenant.entries()].map(([t, list]) => ({ t, list, at: 0, share: weight(t) / sum }));
  for (;;) {
    let best: (typeof heads)[number] | undefined;
    let bestKey: [number, number, number, number] = [-1, -Infinity, -1, -Infinity];
    for (const h of heads) {
      if (h.at >= h.list.length) continue;
      const j = h.list[h.at];
      // A critical job (makespan guard) is not held back by fair share either: it lengthens everyone's schedule.
      const key: [number, number, number, number] = [Number(urgent(pol, j, now)), j.priority, Number(critical?.has(j) ?? false), -ageKey(scoreKey(j, total) * shareWeight(dominant(s.usage(h.t), total), h.share), now - j.submit, pol.starvation)];
      const c = key[0] - bestKey[0] || key[1] - bestKey[1] || key[2] - bestKey[2] || key[3] - bestKey[3];
      if (c > 0 || (c === 0 && best && cmp(j, best.list[best.at]) < 0)) {
        best = h;
        bestKey = key;
      }
    }
    if (!best) return;
    yield best.list[best.at++];
  }
}

/**
 * Does the placement use NVLink, the resource the surcharge prices? It follows where the job lands,
 * not what it asked for: more than one GPU in total, all on nodes of one declared NVLink domain (on
 * single-node domains: more than one GPU of one node). One GPU, or GPUs split across domains or on
 * nodes without one, talk over PCIe/IB and pay no surcharge, whatever needsNvlink says.
 */
export function usesNvlink(s: ClusterState, job: JobRequest, fit: Fit): boolean {
  return job.per.gpus * job.count > 1 && inOneDomain(s, fit.nodes);
}

/** Price of running the job on the fit for its walltime, with the cost policy's modifiers. */
export function priceOf(s: ClusterState, pol: PolicyConfig, job: JobRequest, fit: Fit): number {
  let perHour = 0;
  for (let k = 0; k < fit.nodes.length; k++) {
    const p = s.price[fit.nodes[k]];
    perHour += fit.slots[k] * (job.per.cpus * p.cpuHour + job.per.gpus * p.gpuHour);
  }
  let price = (perHour * job.walltime) / 3600;
  if (pol.cost) {
    if (usesNvlink(s, job, fit)) price *= 1 + PRICE_RULES.nvlinkSurcharge;
    if (job.delayTolerant) price *= 1 - PRICE_RULES.delayTolerantDiscount;
  }
  return Math.round(price * 100) / 100;
}

/** Work a victim loses if preempted now: everything since start, or since its last checkpoint. */
export function lostWork(a: Allocation, now: number, checkpointEvery = 600): number {
  const elapsed = Math.max(0, now - a.start);
  const lost = a.job.checkpointable ? Math.min(elapsed, checkpointEvery) : elapsed;
  const d = demand(a.job);
  return lost * (d.cpus + 10 * d.gpus);
}
