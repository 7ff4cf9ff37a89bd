// Priority / guarantee preemption: the fewest victims, then the fewest non-checkpointable ones, then
// the least lost work. Exact over small candidate sets, greedy-then-prune beyond a search budget.
import { findFit, readsGpus, type Fit } from './fit.js';
import { guaranteeTest, lostWork, rank, reclaimTest } from './policies.js';
import type { Allocation, ClusterState } from './state.js';
import type { JobRequest, PolicyConfig } from './types.js';
import { copyView, releaseOnView, type View } from './view.js';

export interface VictimChoice {
  victims: Allocation[];
  fit: Fit;
  why: string;
}

const SEARCH_BUDGET = 4000;
/**
 * Beyond this many candidates the search looks only at candidates on the nodes where the job would
 * go if every candidate left. With thousands of candidates (a busy cluster of low-priority work) the
 * budgeted search and its greedy fallback would otherwise try victims scattered over the whole
 * cluster, one full fit each, before any node comes free; below it the search is as before.
 */
const NARROW_AT = 64;

function viewWithout(s: ClusterState, victims: Allocation[], gpus: boolean, base: View | undefined): View {
  const v = copyView(s, base, gpus);
  for (const a of victims) releaseOnView(v, a);
  return v;
}

interface Scored {
  set: Allocation[];
  fit: Fit;
  key: [number, number, number];
}

const better = (a: [number, number, number], b: [number, number, number]) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * `base`: the view victims are taken off (the live state when absent); the engine passes one with
 * reservations' holds on it so that the job's new place keeps clear of what they will need.
 */
export function chooseVictims(s: ClusterState, job: JobRequest, now: number, pol: PolicyConfig, base?: View): VictimChoice | undefined {
  const r = rank(pol, job);
  const gpus = readsGpus(s, job, pol);
  let cands: { a: Allocation; cost: number; byGuarantee: boolean; byReclaim: boolean }[] = [];
  const guaranteeAllows = guaranteeTest(s, pol, job);
  const reclaims = reclaimTest(s, pol, job);
  // Without a guarantee or lent capacity to call on, only lower-ranked jobs qualify: none when the job
  // ranks at or below every running one (a blocked job would otherwise walk them all to find nothing).
  if (!guaranteeAllows && !reclaims && pol.order !== 'las' && pol.order !== 'srsf' && !(s.lowestPriority() < r)) return undefined;
  for (const a of s.running.values()) {
    if (a.job.preemptible === false || (s.mayPreempt && !s.mayPreempt(a.job))) continue;
    const byRank = rank(pol, a.job) < r;
    const byGuarantee = !byRank && guaranteeAllows !== undefined && guaranteeAllows(a.job);
    const byReclaim = !byRank && !byGuarantee && reclaims !== undefined && reclaims(a.job);
    if (byRank || byGuarantee || byReclaim) cands.push({ a, cost: lostWork(a, now), byGuarantee, byReclaim });
  }
  if (!cands.length) return undefined;
  cands.sort((x, y) => Number(!x.a.job.checkpointable) - Number(!y.a.job.checkpointable) || x.cost - y.cost || (x.a.job.id < y.a.job.id ? -1 : 1));
  const wide = findFit(s, viewWithout(s, cands.map((c) => c.a), gpus, base), job, pol);
  if (!wide) return undefined;
  if (cands.length > NARROW_AT) {
    const on = new Set(wide.nodes);
    cands = cands.filter((c) => c.a.nodes.some((i) => on.has(i)));
  }

  const keyOf = (set: typeof cands): [number, number, number] => [set.length, set.filter((c) => !c.a.job.checkpointable).length, set.reduce((t, c) => t + c.cost, 0)];
  let best: Scored | undefined;
  let budget = SEARCH_BUDGET;
  // Exact: increasing set size; at the first size with any feasible set keep the best-scored one.
  for (let size = 1; size <= cands.length && !best && budget > 0; size++) {
    const idx = Array.from({ length: size }, (_, k) => k);
    for (;;) {
      if (budget-- <= 0) break;
      const set = idx.map((k) => cands[k]);
      const fit = findFit(s, viewWithout(s, set.map((c) => c.a), gpus, base), job, pol);
      if (fit) {
        const key = keyOf(set);
        if (!best || better(key, best.key) < 0) best = { set: set.map((c) => c.a), fit, key };
      }
      // next combination
      let p = size - 1;
      while (p >= 0 && idx[p] === cands.length - size + p) p--;
      if (p < 0) break;
      idx[p]++;
      for (let q = p + 1; q < size; q++) idx[q] = idx[q - 1] + 1;
    }
  }
  if (!best) {
    // Budget spent: add in preference order until it fits, then drop any victim not needed.
    const set: typeof cands = [];
    for (const c of cands) {
      set.push(c);
      if (findFit(s, viewWithout(s, set.map((x) => x.a), gpus, base), job, pol)) break;
    }
    for (let k = set.length - 1; k >= 0; k--) {
      const without = set.filter((_, q) => q !== k);
      if (findFit(s, viewWithout(s, without.map((x) => x.a), gpus, base), job, pol)) set.splice(k, 1);
    }
    const fit = findFit(s, viewWithout(s, set.map((x) => x.a), gpus, base), job, pol);
    if (!fit) return undefined;
    best = { set: set.map((c) => c.a), fit, key: keyOf(set) };
  }
  const names = best.set.map((a) => `${a.job.id}${a.job.checkpointable ? ' (checkpointable)' : ''}`).join(', ');
  const guaranteeUsed = best.set.some((a) => cands.find((c) => c.a === a)?.byGuarantee);
  const reclaimUsed = best.set.some((a) => cands.find((c) => c.a === a)?.byReclaim);
  const why = guaranteeUsed
    ? `${job.qos} guarantee of tenant ${job.tenant} reclaims capacity borrowed by ${names}`
    : reclaimUsed
      ? `tenant ${job.tenant}, within its ${job.qos} burst limit, reclaims capacity lent beyond their tenants' burst limits to ${names}`
      : `priority ${job.priority} outranks ${names}`;
  return { victims: best.set, fit: best.fit, why: `${why}; ${best.key[0]} victim(s), ${best.key[1]} not checkpointable, ${Math.round(best.key[2])} unit-seconds of work lost` };
}
