// Admission policies that do not depend on where a job lands: tenant quotas, QoS burst limits and
// guarantees (weighted DRF entitlements), queue order, deadlines and price.
import type { Allocation, ClusterState, Usage } from './state.js';
import { inOneDomain, type Fit } from './fit.js';
import { PRICE_RULES, QOS_RULES, type JobRequest, type PolicyConfig, type QosClass, type TenantSpec } from './types.js';

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

export type LimitCheck = { ok: true } | { ok: false; never: boolean; limit: Limit; at: number };

/** Checks the job against its limits; when blocked, estimates when the tenant's running jobs free enough. */
export function checkLimits(s: ClusterState, pol: PolicyConfig, job: JobRequest, now: number): LimitCheck {
  const need = demand(job);
  for (const limit of limitsFor(s, pol, job)) {
    const u = add(s.usage(job.tenant), need);
    if (limit.within(u)) continue;
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
  return { ok: true };
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

/** Rank for preemption: a job may only displace strictly lower-ranked jobs. */
export function rank(pol: PolicyConfig, job: JobRequest): number {
  return pol.order === 'las' ? -lasQueue(pol, job) : job.priority;
}

/** Deadline-urgent: it must start within one walltime of now to finish in time. */
export function urgent(pol: PolicyConfig, job: JobRequest, now: number): boolean {
  return pol.deadlines && job.deadline !== undefined && job.deadline - job.walltime - now <= job.walltime;
}

const cmpId = (a: JobRequest, b: JobRequest) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function baseCompare(pol: PolicyConfig, now: number): (a: JobRequest, b: JobRequest) => number {
  const lead = (a: JobRequest, b: JobRequest) => Number(urgent(pol, b, now)) - Number(urgent(pol, a, now)) || (pol.deadlines && urgent(pol, a, now) ? (a.deadline ?? 0) - (b.deadline ?? 0) : 0);
  const tolerant = (a: JobRequest, b: JobRequest) => (pol.order === 'fairshare' || pol.order === 'priority' ? Number(a.delayTolerant ?? false) - Number(b.delayTolerant ?? false) : 0);
  switch (pol.order) {
    case 'fcfs':
      return (a, b) => lead(a, b) || a.submit - b.submit || cmpId(a, b);
    case 'sjf':
      return (a, b) => lead(a, b) || a.walltime - b.walltime || a.submit - b.submit || cmpId(a, b);
    case 'las':
      return (a, b) => lead(a, b) || lasQueue(pol, a) - lasQueue(pol, b) || a.submit - b.submit || cmpId(a, b);
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
  const cmp = baseCompare(pol, now);
  const sorted = [...queue].sort(cmp);
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
