// Priority / guarantee preemption: the fewest victims, then the fewest non-checkpointable ones, then
// the least lost work. Exact over small candidate sets, greedy-then-prune beyond a search budget.
import { findFit, readsGpus, type Fit } from './fit.js';
import { guaranteeTest, lostWork, rank } from './policies.js';
import type { Allocation, ClusterState } from './state.js';
import type { JobRequest, PolicyConfig } from './types.js';
import { copyView, releaseOnView, type View } from './view.js';

export interface VictimChoice {
  victims: Allocation[];
  fit: Fit;
  why: string;
}

const SEARCH_BUDGET = 4000;

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
  const cands: { a: Allocation; cost: number; byGuarantee: boolean }[] = [];
  const guaranteeAllows = guaranteeTest(s, pol, job);
  // Without a guarantee to call on, only lower-ranked jobs qualify: none when the job ranks at or
  // below every running one (a blocked job would otherwise walk them all to find nothing).
  if (!guaranteeAllows && pol.order !== 'las' && !(s.lowestPriority() < r)) return undefined;
  for (const a of s.running.values()) {
    if (a.job.preemptible === false) continue;
    const byRank = rank(pol, a.job) < r;
    const byGuarantee = !byRank && guaranteeAllows !== undefined && guaranteeAllows(a.job);
    if (byRank || byGuarantee) cands.push({ a, cost: lostWork(a, now), byGuarantee });
  }
  if (!cands.length) return undefined;
  cands.sort((x, y) => Number(!x.a.job.checkpointable) - Number(!y.a.job.checkpointable) || x.cost - y.cost || (x.a.job.id < y.a.job.id ? -1 : 1));
  if (!findFit(s, viewWithout(s, cands.map((c) => c.a), gpus, base), job, pol)) return undefined;

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
  const why = guaranteeUsed
    ? `${job.qos} guarantee of tenant ${job.tenant} reclaims capacity borrowed by ${names}`
    : `priority ${job.priority} outranks ${names}`;
  return { victims: best.set, fit: best.fit, why: `${why}; ${best.key[0]} victim(s), ${best.key[1]} not checkpointable, ${Math.round(best.key[2])} unit-seconds of work lost` };
}
