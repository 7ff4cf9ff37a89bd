// Single-node packing policies: for a job whose slots all fit on one node, which node. 'best-fit'
// leaves the least CPU and GPU behind, each relative to the largest node (the packing baseline of the
// FGD paper). 'fgd' moves the cluster down the fragmentation gradient: it scores each node by how much
// the job changes its expected GPU fragmentation under the target workload, on the integer scale the
// FGD authors' scheduler plugin uses (fgdScore), takes the best score, and on that node the GPU for a
// share that scores best. Ties go to the cooler rack when the thermal policy is on, then to inventory
// order.
import { blockMayHold, freeMax, NODE_BLOCK, NODE_SHIFT } from './fit-index.js';
import { overPhysical, slotsOn, wantsOneDomain, type Fit } from './slots.js';
import { compileWorkload, fragmentation, fragmentationOf, type CompiledWorkload } from './fragmentation.js';
import { MILLI, unitsPerSlot } from './gpus.js';
import type { ClusterState } from './state.js';
import type { JobRequest, PolicyConfig } from './types.js';
import type { View } from './view.js';

export function packFit(s: ClusterState, v: View, job: JobRequest, pol: PolicyConfig, os: boolean): Fit | undefined {
  const need = job.count;
  const w = pol.packing === 'fgd' ? compileWorkload(pol.targetWorkload ?? []) : undefined;
  const before = w && fragmentationOf(s, v, w);
  const { maxCpu, maxGpu } = largestNode(s);
  let best = -1;
  let bestScore = Infinity;
  let bestGpus: number[] | undefined;
  let bestGrowth = 0;
  let candidates = 0;
  const gpus: number[] = [];
  const free = v.live ? freeMax(s) : undefined;
  // One node is inside one IB island; inside one NVLink domain only when it declares one.
  const inDomain = wantsOneDomain(job);
  for (let i = 0; i < s.n; i++) {
    if (free && (i & (NODE_BLOCK - 1)) === 0 && !blockMayHold(free, i >> NODE_SHIFT, job, os, need)) {
      i += NODE_BLOCK - 1;
      continue;
    }
    if (inDomain && s.domainOf[i] < 0) continue;
    if (slotsOn(s, v, i, job, os) < need) continue;
    candidates++;
    gpus.length = 0;
    // Lower is better: best-fit's share left, FGD's score negated.
    let growth = 0;
    let score: number;
    if (w) {
      const was = before!(i);
      growth = fragmentationAfter(s, v, w, i, job, gpus, was) - was;
      score = -fgdScore(growth);
    } else score = leftAfter(s, v, i, job, maxCpu, maxGpu);
    if (score < bestScore || (score === bestScore && pol.thermal && s.temp[i] < s.temp[best])) {
      best = i;
      bestScore = score;
      bestGpus = gpus.length ? [...gpus] : undefined;
      bestGrowth = growth;
    }
  }
  if (best < 0) return undefined;
  const why = w
    ? `FGD packing: expected GPU fragmentation ${bestGrowth > 0 ? '+' : ''}${Math.round(bestGrowth)} thousandths (score ${-bestScore}/100), the best of ${candidates} candidate node(s)`
    : `best-fit packing: leaves ${bestScore.toFixed(3)} of the largest node's CPU + GPU, the least of ${candidates} candidate node(s)`;
  return { nodes: [best], slots: [need], oversubscribed: overPhysical(s, v, best, job, need), ...(bestGpus && { gpus: [bestGpus] }), why };
}

/** Best fit's score: CPU and GPU the node keeps after the job, each over the largest node's. */
function leftAfter(s: ClusterState, v: View, i: number, job: JobRequest, maxCpu: number, maxGpu: number): number {
  const { per, count } = job;
  const cpu = Math.max(0, s.capCpu[i] - v.usedCpu[i] - per.cpus * count);
  const gpu = Math.max(0, s.capGpu[i] - v.usedGpu[i] - per.gpus * count);
  return (maxCpu > 0 ? cpu / maxCpu : 0) + (maxGpu > 0 ? gpu / maxGpu : 0);
}

const largest = new WeakMap<ClusterState, { maxCpu: number; maxGpu: number }>();

function largestNode(s: ClusterState) {
  let l = largest.get(s);
  if (!l) {
    l = { maxCpu: 0, maxGpu: 0 };
    for (let i = 0; i < s.n; i++) {
      l.maxCpu = Math.max(l.maxCpu, s.capCpu[i]);
      l.maxGpu = Math.max(l.maxGpu, s.capGpu[i]);
    }
    largest.set(s, l);
  }
  return l;
}

/**
 * FGD's node score for a fragmentation growth (thousandths; negative when the job lowers it), exactly
 * as the authors' plugin computes it (kubernetes-scheduler-simulator, fgd_score.go): the drop through a
 * sigmoid onto the Kubernetes scheduler's integer node score 0..100, trunc(100·σ(-growth/1000)). The
 * integer scale is part of the method the paper measured, not a rounding detail: nodes whose growth
 * differs by less than a score step (about 40 thousandths near zero, far more for large growths) tie,
 * and ties go to the first node in order (their scheduler picks the smallest node name), so among
 * near-equal nodes FGD fills the earlier ones instead of chasing the strictly least growth across the
 * whole cluster. That consolidation is most of FGD's gain over best-fit on the openb trace (bench
 * table d: with the raw growth, FGD leaves more GPUs unallocated than best-fit).
 */
export function fgdScore(growth: number): number {
  return Math.trunc(100 / (1 + Math.exp(growth / 1000)));
}

let scratch = new Int32Array(16);

/**
 * Fragmentation of node i once the job's slots are on it, given its
 * fragmentation `before`. Whole GPUs go where allocation would put them (lowest free index); each
 * share goes to the GPU with the best fgdScore, the first such GPU on a tie (as the authors' plugin
 * picks), whose global number is appended to `chosen`. Equal free values are tried once (the first
 * such GPU: a later one would score the same).
 */
function fragmentationAfter(s: ClusterState, v: View, w: CompiledWorkload, i: number, job: JobRequest, chosen: number[], before: number): number {
  const { per, count } = job;
  const from = s.gpuOff[i];
  const len = s.gpuOff[i + 1] - from;
  if (scratch.length < len) scratch = new Int32Array(len);
  const free = scratch;
  for (let x = 0; x < len; x++) free[x] = v.gpu.free[from + x];
  const cpus = Math.max(0, s.capCpu[i] - v.usedCpu[i] - per.cpus * count);
  const mem = Math.max(0, s.capMem[i] - v.usedMem[i] - per.memoryMB * count);
  const model = s.gpuModel[i];
  const units = unitsPerSlot(per) * count;
  const milli = per.gpuMilli;
  if (milli === undefined) {
    for (let x = 0, left = units; x < len && left > 0; x++)
      if (free[x] === MILLI) {
        free[x] = 0;
        left--;
      }
    return fragmentation(w, cpus, mem, model, free, 0, len);
  }
  let f = Infinity;
  for (let u = 0; u < units; u++) {
    let bestX = -1;
    let best = -1;
    for (let x = 0; x < len; x++) {
      if (free[x] < milli || seenBefore(free, x)) continue;
      free[x] -= milli;
      const g = fragmentation(w, cpus, mem, model, free, 0, len);
      free[x] += milli;
      const score = fgdScore(g - before);
      if (score > best) {
        best = score;
        f = g;
        bestX = x;
      }
    }
    free[bestX] -= milli;
    chosen.push(from + bestX);
  }
  return f;
}

function seenBefore(free: Int32Array, x: number): boolean {
  for (let y = 0; y < x; y++) if (free[y] === free[x]) return true;
  return false;
}
