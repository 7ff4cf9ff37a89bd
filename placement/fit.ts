// Where a job's slots go right now (or at a future time, on a projected view of the cluster).
// Topology-aware: one NVLink domain if possible, else one IB island, else the fewest islands of one
// cluster; best-fit inside a group so large holes stay whole; coolest rack first on ties. With
// topology off it is a greedy first-fit in inventory order (the Kubernetes-default-like baseline).
// A packing policy (packing.ts) gets the first say over jobs that fit on a single node.
// Hard constraints hold under every one of them: a GPU job with needsNvlink gets all its slots inside
// one declared NVLink domain, and a job with needsIb or strictIsland all its slots inside one IB
// island (wantsOneDomain / wantsOneIsland); where no such group can take it, there is no fit.
import { blockMayHold, freeMax, islandTemps, NODE_BLOCK, NODE_SHIFT, shapeIndex } from './fit-index.js';
import { packFit } from './packing.js';
import type { ClusterState } from './state.js';
import type { JobRequest, PolicyConfig } from './types.js';
import { EPS, mayOversubscribe, overPhysical, readsGpus, slotsOn, wantsOneDomain, wantsOneIsland, type Fit } from './slots.js';
import { emptyView, type View } from './view.js';

export { copyView, liveView, type View } from './view.js';
// The slot arithmetic below fit, fit-index and packing (they all use it; none imports fit.ts for it).
export { eligible, mayOversubscribe, overPhysical, readsGpus, slotsOn, wantsOneDomain, wantsOneIsland, type Fit } from './slots.js';


const spans = new WeakMap<ClusterState, Uint8Array>();

/** Per NVLink domain: 1 when its nodes sit in more than one IB island. */
function domainsSpanningIslands(s: ClusterState): Uint8Array {
  let a = spans.get(s);
  if (!a) {
    a = new Uint8Array(s.domains.length);
    s.domains.forEach((d, g) => (a![g] = d.nodes.some((i) => s.islandOf[i] !== s.islandOf[d.nodes[0]]) ? 1 : 0));
    spans.set(s, a);
  }
  return a;
}

/** Do all of the fit's nodes belong to one declared NVLink domain? */
export function inOneDomain(s: ClusterState, nodes: readonly number[]): boolean {
  const d = s.domainOf[nodes[0]];
  return d >= 0 && nodes.every((i) => s.domainOf[i] === d);
}

/** Cheap necessary condition: can the island's physical free capacity hold even one slot? */
function islandMayHold(s: ClusterState, isl: number, job: JobRequest): boolean {
  return s.islandFreeCpu[isl] + EPS >= job.per.cpus && s.islandFreeGpu[isl] + EPS >= job.per.gpus;
}

export function findFit(s: ClusterState, v: View, job: JobRequest, pol: PolicyConfig): Fit | undefined {
  const os = mayOversubscribe(job, pol);
  const need = job.count;
  if (need <= 0) return undefined;
  if (!v.gpuTracked && readsGpus(s, job, pol)) throw new Error(`job ${job.id} needs GPU state the view does not track`);
  // Whole-cluster bound on physical capacity; oversubscribing classes see up to the largest ratio.
  if (v.live && !os && (need * job.per.cpus > s.freeCpu + EPS || need * job.per.gpus > s.freeGpu + EPS || need * job.per.memoryMB > s.freeMem + EPS)) return undefined;
  if (pol.packing && pol.packing !== 'topology') {
    const one = packFit(s, v, job, pol, os);
    // A single slot that fits on no node fits nowhere; a gang may still span nodes.
    if (one || need === 1) return one;
  }
  return pol.topology ? topologyFit(s, v, job, pol, os, need) : firstFit(s, v, job, os, need);
}

function firstFit(s: ClusterState, v: View, job: JobRequest, os: boolean, need: number): Fit | undefined {
  if (wantsOneDomain(job) || wantsOneIsland(job)) return firstFitInGroup(s, v, job, os, need);
  const nodes: number[] = [];
  const slots: number[] = [];
  let rem = need;
  // One cluster per gang: first-fit within the first cluster that can hold it all.
  let clusterKey = '';
  const free = v.live ? freeMax(s) : undefined;
  for (let i = 0; i < s.n && rem > 0; i++) {
    if (free && (i & (NODE_BLOCK - 1)) === 0 && !blockMayHold(free, i >> NODE_SHIFT, job, os, 1)) {
      i += NODE_BLOCK - 1;
      continue;
    }
    const k = slotsOn(s, v, i, job, os);
    if (k === 0) continue;
    const key = `${s.site[i]}/${s.cluster[i]}`;
    if (nodes.length && key !== clusterKey) continue;
    clusterKey = key;
    const take = Math.min(k, rem);
    nodes.push(i);
    slots.push(take);
    rem -= take;
  }
  if (rem > 0) return undefined;
  return { nodes, slots, oversubscribed: nodes.some((i, k) => overPhysical(s, v, i, job, slots[k])) };
}

/** The group a node counts towards for a job bound to one NVLink domain and/or one IB island. */
const groupKey = (s: ClusterState, i: number, dom: boolean, isl: boolean): number =>
  dom ? (isl ? s.domainOf[i] * s.islands.length + s.islandOf[i] : s.domainOf[i]) : s.islandOf[i];

/**
 * First-fit for a job bound to one NVLink domain and/or one IB island: nodes in inventory order, each
 * counted towards its group; the first group to reach the job's size takes it, first-fit inside.
 */
function firstFitInGroup(s: ClusterState, v: View, job: JobRequest, os: boolean, need: number): Fit | undefined {
  const dom = wantsOneDomain(job);
  const isl = wantsOneIsland(job);
  const groups = new Map<number, { nodes: number[]; slots: number[]; sum: number }>();
  const free = v.live ? freeMax(s) : undefined;
  for (let i = 0; i < s.n; i++) {
    if (free && (i & (NODE_BLOCK - 1)) === 0 && !blockMayHold(free, i >> NODE_SHIFT, job, os, 1)) {
      i += NODE_BLOCK - 1;
      continue;
    }
    if (dom && s.domainOf[i] < 0) continue;
    const k = slotsOn(s, v, i, job, os);
    if (k === 0) continue;
    const key = groupKey(s, i, dom, isl);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { nodes: [], slots: [], sum: 0 }));
    const take = Math.min(k, need - g.sum);
    g.nodes.push(i);
    g.slots.push(take);
    g.sum += take;
    if (g.sum >= need) {
      const { nodes, slots } = g;
      return { nodes, slots, oversubscribed: nodes.some((x, q) => overPhysical(s, v, x, job, slots[q])) };
    }
  }
  return undefined;
}

/**
 * For explanations: the most slots of the job one group it is bound to (NVLink domain and/or IB
 * island) could take on the idle cluster.
 */
export function largestGroup(s: ClusterState, job: JobRequest, pol: PolicyConfig): number {
  const dom = wantsOneDomain(job);
  const isl = wantsOneIsland(job);
  const v = emptyView(s);
  const os = mayOversubscribe(job, pol);
  const sums = new Map<number, number>();
  let most = 0;
  for (let i = 0; i < s.n; i++) {
    if (dom && s.domainOf[i] < 0) continue;
    const key = groupKey(s, i, dom, isl);
    const sum = (sums.get(key) ?? 0) + Math.min(job.count, slotsOn(s, v, i, job, os));
    sums.set(key, sum);
    most = Math.max(most, sum);
  }
  return most;
}

interface Scratch {
  slots: Int32Array;
  islandSum: Float64Array;
  domainSum: Float64Array;
}
const scratch = new WeakMap<ClusterState, Scratch>();

function scratchOf(s: ClusterState): Scratch {
  let sc = scratch.get(s);
  if (!sc) scratch.set(s, (sc = { slots: new Int32Array(s.n), islandSum: new Float64Array(s.islands.length), domainSum: new Float64Array(s.domains.length) }));
  return sc;
}

function topologyFit(s: ClusterState, v: View, job: JobRequest, pol: PolicyConfig, os: boolean, need: number): Fit | undefined {
  if (v.live) {
    const ix = shapeIndex(s, v, job, pol, os);
    if (ix) {
      if (ix.total < need) return undefined;
      const temps = islandTemps(s);
      return choose(s, v, job, pol, need, ix.slots, ix.islands.value, (g) => temps[g], () => (ix.domains ? ix.domains.best(need) : -1), () => ix.islands.best(need), ix.domains?.value);
    }
  }
  return scanFit(s, v, job, pol, os, need);
}

/**
 * The straightforward topology fit: every node's slot count, summed per island and domain, then the
 * best-fitting group by a scan. The live view normally goes through the incremental index instead
 * (fit-index.ts); both must choose the same nodes.
 */
export function scanFit(s: ClusterState, v: View, job: JobRequest, pol: PolicyConfig, os: boolean, need: number): Fit | undefined {
  const sc = scratchOf(s);
  const { slots, islandSum, domainSum } = sc;
  const useDomains = job.per.gpus > 0 && s.domains.length > 0;
  if (useDomains) domainSum.fill(0);
  let total = 0;
  for (let isl = 0; isl < s.islands.length; isl++) {
    islandSum[isl] = 0;
    const members = s.islands[isl].nodes;
    if (v.live && !os && !islandMayHold(s, isl, job)) {
      for (const i of members) slots[i] = 0;
      continue;
    }
    let sum = 0;
    for (const i of members) {
      const k = slotsOn(s, v, i, job, os);
      slots[i] = k;
      sum += k;
      if (useDomains && k > 0 && s.domainOf[i] >= 0) domainSum[s.domainOf[i]] += k;
    }
    islandSum[isl] = sum;
    total += sum;
  }
  if (total < need) return undefined;

  const groupTemp = (nodes: number[]) => {
    if (!pol.thermal) return 0;
    let t = 0;
    for (const i of nodes) t += s.temp[i];
    return t / nodes.length;
  };
  /** Best fit: the group whose capacity exceeds the need by the least; cooler, then earlier, on ties. */
  const bestGroup = (groups: { nodes: number[] }[], sums: Float64Array): number => {
    let best = -1;
    let bestLeft = Infinity;
    let bestTemp = Infinity;
    for (let g = 0; g < groups.length; g++) {
      if (sums[g] < need) continue;
      const left = sums[g] - need;
      if (left > bestLeft) continue;
      const t = groupTemp(groups[g].nodes);
      if (left < bestLeft || t < bestTemp) {
        best = g;
        bestLeft = left;
        bestTemp = t;
      }
    }
    return best;
  };
  return choose(s, v, job, pol, need, slots, islandSum, (g) => groupTemp(s.islands[g].nodes), () => (useDomains ? bestGroup(s.domains, domainSum) : -1), () => bestGroup(s.islands, islandSum), useDomains ? domainSum : undefined);
}

/**
 * One NVLink domain if one fits, else one island, else the fewest islands of one cluster. A job bound
 * to one domain stops after the first step, one bound to one island after the second; one bound to an
 * island never takes a domain whose nodes span islands (then the best single-island domain, or none).
 */
function choose(
  s: ClusterState,
  v: View,
  job: JobRequest,
  pol: PolicyConfig,
  need: number,
  slots: ArrayLike<number>,
  islandSum: ArrayLike<number>,
  islandTemp: (g: number) => number,
  bestDomain: () => number,
  bestIsland: () => number,
  domainSum: ArrayLike<number> | undefined,
): Fit | undefined {
  const oneDomain = wantsOneDomain(job);
  const oneIsland = wantsOneIsland(job);
  let d = bestDomain();
  if (d >= 0 && oneIsland && domainsSpanningIslands(s)[d]) d = oneDomain && domainSum ? bestDomainInOneIsland(s, pol, domainSum, need) : -1;
  if (d >= 0) return pick(s, v, job, slots, s.domains[d].nodes, need, pol);
  if (oneDomain) return undefined;
  const isl = bestIsland();
  if (isl >= 0) return pick(s, v, job, slots, s.islands[isl].nodes, need, pol);
  if (oneIsland) return undefined;

  // Span the fewest islands of one cluster: largest islands first.
  const temp = (g: number) => (pol.thermal ? islandTemp(g) : 0);
  const byCluster = new Map<string, number[]>();
  for (let g = 0; g < s.islands.length; g++) {
    if (islandSum[g] <= 0) continue;
    const first = s.islands[g].nodes[0];
    const key = `${s.site[first]}/${s.cluster[first]}`;
    const list = byCluster.get(key);
    if (list) list.push(g);
    else byCluster.set(key, [g]);
  }
  let bestList: number[] | undefined;
  for (const list of byCluster.values()) {
    list.sort((a, b) => islandSum[b] - islandSum[a] || temp(a) - temp(b) || a - b);
    let acc = 0;
    let used = 0;
    for (const g of list) {
      if (acc >= need) break;
      acc += islandSum[g];
      used++;
    }
    if (acc >= need && (!bestList || used < bestList.length)) bestList = list.slice(0, used);
  }
  if (!bestList) return undefined;
  const members: number[] = [];
  for (const g of bestList) for (const i of s.islands[g].nodes) members.push(i);
  return pick(s, v, job, slots, members, need, pol);
}

/** Best fit among the domains inside one island: least left over, then cooler (thermal), then earlier. */
function bestDomainInOneIsland(s: ClusterState, pol: PolicyConfig, sums: ArrayLike<number>, need: number): number {
  const spanning = domainsSpanningIslands(s);
  let best = -1;
  let bestLeft = Infinity;
  let bestTemp = Infinity;
  for (let g = 0; g < s.domains.length; g++) {
    if (spanning[g] || !(sums[g] >= need)) continue;
    const left = sums[g] - need;
    const t = pol.thermal ? s.domains[g].nodes.reduce((a, i) => a + s.temp[i], 0) / s.domains[g].nodes.length : 0;
    if (left < bestLeft || (left === bestLeft && t < bestTemp)) {
      best = g;
      bestLeft = left;
      bestTemp = t;
    }
  }
  return best;
}

/** Inside a chosen group: a single best-fit node when one can finish the job, else the largest first. */
function pick(s: ClusterState, v: View, job: JobRequest, slots: ArrayLike<number>, members: number[], need: number, pol: PolicyConfig): Fit | undefined {
  const cand = members.filter((i) => slots[i] > 0);
  const cooler = (a: number, b: number) => (pol.thermal ? s.temp[a] - s.temp[b] : 0) || a - b;
  const nodes: number[] = [];
  const taken: number[] = [];
  let rem = need;
  const used = new Set<number>();
  while (rem > 0) {
    let single = -1;
    let largest = -1;
    for (const i of cand) {
      if (used.has(i)) continue;
      const k = slots[i];
      if (k >= rem && (single < 0 || k < slots[single] || (k === slots[single] && cooler(i, single) < 0))) single = i;
      if (largest < 0 || k > slots[largest] || (k === slots[largest] && cooler(i, largest) < 0)) largest = i;
    }
    const i = single >= 0 ? single : largest;
    if (i < 0) return undefined;
    const take = Math.min(slots[i], rem);
    used.add(i);
    nodes.push(i);
    taken.push(take);
    rem -= take;
  }
  return { nodes, slots: taken, oversubscribed: nodes.some((i, k) => overPhysical(s, v, i, job, taken[k])) };
}
