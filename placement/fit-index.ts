// Incremental index behind the topology fit on the live state. For one job shape (slot resources,
// max per node, GPU model, job type, oversubscription) it keeps every node's slot count and the slot
// sums per IB island and NVLink domain, and buckets islands and domains by their sum so that "the
// group whose capacity exceeds the need by the least, cooler then earlier on ties" is a lookup, not a
// scan. It catches up by replaying ClusterState's change log, so a fit costs O(nodes changed since the
// shape was last seen + log of groups) instead of O(nodes). Decisions are identical to the scan (a
// property test compares them on random inventories). Pure and deterministic: plain memoisation.
import { EPS, slotsOn } from './slots.js';
import type { View } from './view.js';
import type { ClusterState } from './state.js';
import type { JobRequest, PolicyConfig } from './types.js';

/** Sets of groups bucketed by value; in each bucket a bit set over the groups' tie-break rank. */
export class BestFit {
  readonly value: Float64Array;
  private readonly words: number;
  private readonly buckets = new Map<number, { bits: Uint32Array; count: number; hint: number }>();
  private readonly pool: Uint32Array[] = [];
  /** Distinct values held by at least one group, ascending (value 0 is never held). */
  private readonly vals: number[] = [];

  /** `rankOf[g]`: position of group g in tie-break order; `groupAt` is its inverse. */
  constructor(
    private readonly rankOf: Int32Array,
    private readonly groupAt: Int32Array,
  ) {
    this.value = new Float64Array(rankOf.length);
    this.words = (rankOf.length + 31) >>> 5;
  }

  set(g: number, v: number): void {
    const old = this.value[g];
    if (old === v) return;
    if (old > 0) this.remove(g, old);
    this.value[g] = v;
    if (v > 0) this.add(g, v);
  }

  /** The group with the smallest value ≥ need, lowest rank among equals; -1 when none. */
  best(need: number): number {
    const vals = this.vals;
    const lo = lowerBound(vals, need);
    if (lo === vals.length) return -1;
    const b = this.buckets.get(vals[lo])!;
    let w = b.hint;
    while (b.bits[w] === 0) w++;
    b.hint = w;
    const x = b.bits[w];
    return this.groupAt[(w << 5) + (31 - Math.clz32(x & -x))];
  }

  private add(g: number, v: number): void {
    let b = this.buckets.get(v);
    if (!b) {
      const bits = this.pool.pop() ?? new Uint32Array(this.words);
      this.buckets.set(v, (b = { bits, count: 0, hint: this.words }));
      const vals = this.vals;
      const lo = lowerBound(vals, v);
      vals.splice(lo, 0, v);
    }
    const r = this.rankOf[g];
    const w = r >>> 5;
    b.bits[w] |= 1 << (r & 31);
    b.count++;
    if (w < b.hint) b.hint = w;
  }

  private remove(g: number, v: number): void {
    const b = this.buckets.get(v)!;
    const r = this.rankOf[g];
    b.bits[r >>> 5] &= ~(1 << (r & 31));
    if (--b.count === 0) {
      this.buckets.delete(v);
      this.pool.push(b.bits); // all bits are clear again
      const vals = this.vals;
      const lo = lowerBound(vals, v);
      vals.splice(lo, 1);
    }
  }
}

export interface ShapeIndex {
  slots: Float64Array;
  islands: BestFit;
  /** Present when the shape asks for GPUs and the inventory has NVLink domains. */
  domains?: BestFit;
  total: number;
}

interface Entry extends ShapeIndex {
  job: JobRequest;
  os: boolean;
  synced: number;
}

interface PerState {
  shapes: Map<string, Entry>;
  /** Average rack temperature per island / domain (the scan's groupTemp), and tie-break ranks. */
  islandTemp: Float64Array;
  domainTemp: Float64Array;
  ranks: Map<string, { rankOf: Int32Array; groupAt: Int32Array }>;
}

const MAX_SHAPES = 16;
/** Slot counts beyond this fall back to the scan, so sums stay exact integers in a double. */
const MAX_EXACT = 2 ** 31 - 1;
const states = new WeakMap<ClusterState, PerState>();

function avgTemps(s: ClusterState, groups: { nodes: number[] }[]): Float64Array {
  const out = new Float64Array(groups.length);
  groups.forEach((g, k) => {
    let t = 0;
    for (const i of g.nodes) t += s.temp[i];
    out[k] = t / g.nodes.length;
  });
  return out;
}

function perState(s: ClusterState): PerState {
  let p = states.get(s);
  if (!p) states.set(s, (p = { shapes: new Map(), islandTemp: avgTemps(s, s.islands), domainTemp: avgTemps(s, s.domains), ranks: new Map() }));
  return p;
}

function ranksOf(p: PerState, kind: 'i' | 'd', thermal: boolean) {
  const key = `${kind}${thermal ? 1 : 0}`;
  let r = p.ranks.get(key);
  if (!r) {
    const temp = kind === 'i' ? p.islandTemp : p.domainTemp;
    const groupAt = Int32Array.from({ length: temp.length }, (_, g) => g);
    if (thermal) groupAt.sort((a, b) => temp[a] - temp[b] || a - b);
    const rankOf = new Int32Array(temp.length);
    groupAt.forEach((g, k) => (rankOf[g] = k));
    p.ranks.set(key, (r = { rankOf, groupAt }));
  }
  return r;
}

export const islandTemps = (s: ClusterState): Float64Array => perState(s).islandTemp;

function shapeKey(job: JobRequest, os: boolean, thermal: boolean): string {
  const { per } = job;
  return `${per.cpus}|${per.gpus}|${per.gpuMilli ?? ''}|${per.memoryMB}|${job.maxPerNode ?? ''}|${per.gpus > 0 ? (job.gpuModel ?? '') : ''}|${job.type}|${os ? 1 : 0}|${thermal ? 1 : 0}`;
}

/**
 * The up-to-date index for the job's shape on the live view, or undefined when the scan must be used
 * (a shape whose slot counts are too large to sum exactly).
 */
export function shapeIndex(s: ClusterState, live: View, job: JobRequest, pol: PolicyConfig, os: boolean): ShapeIndex | undefined {
  const p = perState(s);
  const key = shapeKey(job, os, pol.thermal);
  let e = p.shapes.get(key);
  if (e && e.synced < s.changeBase) {
    p.shapes.delete(key);
    e = undefined;
  }
  if (!e) {
    if (p.shapes.size >= MAX_SHAPES) p.shapes.delete(p.shapes.keys().next().value as string);
    const ir = ranksOf(p, 'i', pol.thermal);
    const useDomains = job.per.gpus > 0 && s.domains.length > 0;
    const dr = useDomains ? ranksOf(p, 'd', pol.thermal) : undefined;
    e = { job, os, synced: s.changeBase + s.changes.length, slots: new Float64Array(s.n), islands: new BestFit(ir.rankOf, ir.groupAt), domains: dr && new BestFit(dr.rankOf, dr.groupAt), total: 0 };
    const islandSum = new Float64Array(s.islands.length);
    const domainSum = new Float64Array(s.domains.length);
    for (let i = 0; i < s.n; i++) {
      const k = slotsOn(s, live, i, job, os);
      if (k > MAX_EXACT) return undefined;
      e.slots[i] = k;
      islandSum[s.islandOf[i]] += k;
      if (useDomains && s.domainOf[i] >= 0) domainSum[s.domainOf[i]] += k;
      e.total += k;
    }
    islandSum.forEach((v, g) => e!.islands.set(g, v));
    if (e.domains) domainSum.forEach((v, g) => e!.domains!.set(g, v));
  } else {
    p.shapes.delete(key); // most recently used last
    const from = e.synced - s.changeBase;
    const log = s.changes;
    for (let q = from; q < log.length; q++) {
      const i = log[q];
      const k = slotsOn(s, live, i, e.job, os);
      if (k > MAX_EXACT) {
        p.shapes.delete(key);
        return undefined;
      }
      const d = k - e.slots[i];
      if (d === 0) continue;
      e.slots[i] = k;
      e.total += d;
      const isl = s.islandOf[i];
      e.islands.set(isl, e.islands.value[isl] + d);
      const dom = s.domainOf[i];
      if (e.domains && dom >= 0) e.domains.set(dom, e.domains.value[dom] + d);
    }
    e.synced = s.changeBase + log.length;
  }
  p.shapes.set(key, e);
  return e;
}

/** Nodes per block of FreeMax (a power of two: node i is in block i >> NODE_SHIFT). */
export const NODE_SHIFT = 6;
export const NODE_BLOCK = 1 << NODE_SHIFT;

/**
 * Per block of NODE_BLOCK consecutive nodes (inventory order) of the live state, the most any up node
 * in it has free of each resource, computed exactly as slotsOn computes a node's room (capacity ×
 * ratio − use), physical and oversubscribed. Rounding is monotone, so where the largest room holds
 * fewer than k slots no node of the block holds k: scans in inventory order step over full blocks,
 * which on a busy cluster is most of them. Blocks are recomputed lazily from the change log.
 */
export class FreeMax {
  readonly cpu: Float64Array;
  readonly cpuOs: Float64Array;
  readonly gpu: Float64Array;
  readonly gpuOs: Float64Array;
  readonly mem: Float64Array;
  private readonly stale: Uint8Array;
  private synced = -1;

  constructor(private readonly s: ClusterState) {
    const blocks = (s.n + NODE_BLOCK - 1) >> NODE_SHIFT;
    this.cpu = new Float64Array(blocks);
    this.cpuOs = new Float64Array(blocks);
    this.gpu = new Float64Array(blocks);
    this.gpuOs = new Float64Array(blocks);
    this.mem = new Float64Array(blocks);
    this.stale = new Uint8Array(blocks);
  }

  /** Marks the blocks of nodes changed since the last call; all of them when the log was cleared since. */
  sync(): this {
    const s = this.s;
    if (this.synced < s.changeBase) this.stale.fill(1);
    else for (let q = this.synced - s.changeBase; q < s.changes.length; q++) this.stale[s.changes[q] >> NODE_SHIFT] = 1;
    this.synced = s.changeBase + s.changes.length;
    return this;
  }

  /** Brings block b up to date (after sync). */
  fresh(b: number): void {
    if (!this.stale[b]) return;
    this.stale[b] = 0;
    const s = this.s;
    let cpu = -Infinity;
    let cpuOs = -Infinity;
    let gpu = -Infinity;
    let gpuOs = -Infinity;
    let mem = -Infinity;
    const end = Math.min(s.n, (b + 1) << NODE_SHIFT);
    for (let i = b << NODE_SHIFT; i < end; i++) {
      if (s.down[i]) continue;
      // A NaN room fits nothing in slotsOn, so comparisons that skip it are right.
      const c = s.capCpu[i] - s.usedCpu[i];
      const co = s.capCpu[i] * s.osCpu[i] - s.usedCpu[i];
      const g = s.capGpu[i] - s.usedGpu[i];
      const go = s.capGpu[i] * s.osGpu[i] - s.usedGpu[i];
      const m = s.capMem[i] - s.usedMem[i];
      if (c > cpu) cpu = c;
      if (co > cpuOs) cpuOs = co;
      if (g > gpu) gpu = g;
      if (go > gpuOs) gpuOs = go;
      if (m > mem) mem = m;
    }
    this.cpu[b] = cpu;
    this.cpuOs[b] = cpuOs;
    this.gpu[b] = gpu;
    this.gpuOs[b] = gpuOs;
    this.mem[b] = mem;
  }
}

const freeMaxes = new WeakMap<ClusterState, FreeMax>();

/** The live state's FreeMax, synced with its change log. */
export function freeMax(s: ClusterState): FreeMax {
  let f = freeMaxes.get(s);
  if (!f) freeMaxes.set(s, (f = new FreeMax(s)));
  return f.sync();
}

/** The first index whose value is ≥ x in an ascending array (its length when none). */
function lowerBound(vals: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = vals.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (vals[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * False only when no node of FreeMax block b can take `min` of the job's slots (slotsOn is below
 * `min` on every one): each room goes through slotsOn's own arithmetic, at the block's largest.
 */
export function blockMayHold(f: FreeMax, b: number, job: JobRequest, os: boolean, min: number): boolean {
  f.fresh(b);
  const { per } = job;
  if (per.cpus > 0 && Math.floor(((os ? f.cpuOs[b] : f.cpu[b]) + EPS) / per.cpus) < min) return false;
  if (per.gpus > 0 && Math.floor(((os ? f.gpuOs[b] : f.gpu[b]) + EPS) / per.gpus) < min) return false;
  if (per.memoryMB > 0 && Math.floor((f.mem[b] + EPS) / per.memoryMB) < min) return false;
  return true;
}
