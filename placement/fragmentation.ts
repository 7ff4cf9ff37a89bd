// FGD's measure of GPU fragmentation (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
// Workloads with Fragmentation Gradient Descent", ATC'23; the authors' simulator computes it in
// NodeGpuShareFragAmountScore). Seen from one task shape, a node's free GPU thousandths are fragments
// when the task cannot run there at all (too little CPU, wrong GPU model, too few GPUs with room), and
// otherwise those on GPUs too full for it; a CPU-only task uses no GPU, so to it all of them are. The
// node's fragmentation is the expectation over the target workload. Memory counts only for shapes that
// state it: FGD's definition has CPU and GPU alone.
import type { ClusterState } from './state.js';
import { MILLI } from './gpus.js';
import type { View } from './view.js';
import type { WorkloadShape } from './types.js';

const EPS = 1e-9;

/** A workload prepared for repeated measurement: distinct GPU demands are evaluated once per node. */
export interface CompiledWorkload {
  /** Distinct GPU demands: `units[d]` GPUs with at least `need[d]` thousandths free each. */
  need: Int32Array;
  units: Int32Array;
  share: Float64Array;
  cpus: Float64Array;
  /** Negative: not checked. */
  mem: Float64Array;
  model: (string | undefined)[];
  /** Index into need/units; -1 for a CPU-only shape. */
  demand: Int32Array;
  /** Scratch per demand: can the node's GPUs hold it, and the thousandths on GPUs too full for it. */
  fits: Uint8Array;
  small: Float64Array;
}

const compiled = new WeakMap<WorkloadShape[], CompiledWorkload>();

/** Compiled once per array (a policy's workload is plain data that is not edited in place). */
export function compileWorkload(shapes: WorkloadShape[]): CompiledWorkload {
  let w = compiled.get(shapes);
  if (w) return w;
  const keys = new Map<string, number>();
  const need: number[] = [];
  const units: number[] = [];
  const demand = shapes.map((m) => {
    const d = m.gpuMilli !== undefined ? { need: m.gpuMilli, units: 1 } : m.gpus > 0 ? { need: MILLI, units: Math.ceil(m.gpus) } : undefined;
    if (!d) return -1;
    const key = `${d.need}x${d.units}`;
    let k = keys.get(key);
    if (k === undefined) {
      keys.set(key, (k = need.length));
      need.push(d.need);
      units.push(d.units);
    }
    return k;
  });
  w = {
    need: Int32Array.from(need),
    units: Int32Array.from(units),
    share: Float64Array.from(shapes, (m) => m.share),
    cpus: Float64Array.from(shapes, (m) => m.cpus),
    mem: Float64Array.from(shapes, (m) => m.memoryMB ?? -1),
    model: shapes.map((m) => m.gpuModel),
    demand: Int32Array.from(demand),
    fits: new Uint8Array(need.length),
    small: new Float64Array(need.length),
  };
  compiled.set(shapes, w);
  return w;
}

/** Expected fragmented GPU thousandths of a node with `cpus`/`mem` free and GPUs free[from .. from + len). */
export function fragmentation(w: CompiledWorkload, cpus: number, mem: number, model: string | undefined, free: Int32Array, from: number, len: number): number {
  let total = 0;
  for (let x = from; x < from + len; x++) total += free[x];
  if (total === 0) return 0;
  for (let d = 0; d < w.need.length; d++) {
    const need = w.need[d];
    let room = 0;
    let small = 0;
    for (let x = from; x < from + len; x++) {
      if (free[x] >= need) room++;
      else small += free[x];
    }
    w.fits[d] = room >= w.units[d] ? 1 : 0;
    w.small[d] = small;
  }
  let f = 0;
  for (let m = 0; m < w.share.length; m++) {
    const d = w.demand[m];
    const usable = d >= 0 && w.fits[d] === 1 && (w.model[m] === undefined || w.model[m] === model) && w.cpus[m] <= cpus + EPS && (w.mem[m] < 0 || w.mem[m] <= mem + EPS);
    f += w.share[m] * (usable ? w.small[d] : total);
  }
  return f;
}

/** Fragmentation of node i as view v has it. */
export function nodeFragmentation(s: ClusterState, v: View, w: CompiledWorkload, i: number): number {
  const from = s.gpuOff[i];
  return fragmentation(w, Math.max(0, s.capCpu[i] - v.usedCpu[i]), Math.max(0, s.capMem[i] - v.usedMem[i]), s.gpuModel[i], v.gpu.free, from, s.gpuOff[i + 1] - from);
}

interface Memo {
  w: CompiledWorkload;
  value: Float64Array;
  fresh: Uint8Array;
  synced: number;
}

const memos = new WeakMap<ClusterState, Memo>();

/**
 * Node fragmentation on view v, remembered per node for the live state until the change log says the
 * node changed (a packing pass asks for every node, and few change between passes).
 */
export function fragmentationOf(s: ClusterState, v: View, w: CompiledWorkload): (i: number) => number {
  if (!v.live) return (i) => nodeFragmentation(s, v, w, i);
  let m = memos.get(s);
  if (!m || m.w !== w) memos.set(s, (m = { w, value: new Float64Array(s.n), fresh: new Uint8Array(s.n), synced: s.changeBase + s.changes.length }));
  else if (m.synced < s.changeBase) m.fresh.fill(0);
  else for (let q = m.synced - s.changeBase; q < s.changes.length; q++) m.fresh[s.changes[q]] = 0;
  m.synced = s.changeBase + s.changes.length;
  const memo = m;
  return (i) => {
    if (!memo.fresh[i]) {
      memo.value[i] = nodeFragmentation(s, v, w, i);
      memo.fresh[i] = 1;
    }
    return memo.value[i];
  };
}

/**
 * FGD's "typical pods": the most frequent shapes of a task list, most frequent first, until they cover
 * `coverage` of the tasks (the authors' experiments use 95%), with shares renormalised over them.
 * Shapes are equal when every field is; ties keep first appearance. Pure: callers bring the tasks.
 */
export function typicalWorkload(tasks: Omit<WorkloadShape, 'share'>[], coverage = 0.95): WorkloadShape[] {
  const counts = new Map<string, { shape: Omit<WorkloadShape, 'share'>; n: number; first: number }>();
  tasks.forEach((t, k) => {
    const key = `${t.cpus}|${t.memoryMB ?? ''}|${t.gpuMilli ?? ''}|${t.gpuMilli === undefined ? t.gpus : ''}|${t.gpuModel ?? ''}`;
    const c = counts.get(key);
    if (c) c.n++;
    else counts.set(key, { shape: t, n: 1, first: k });
  });
  const ranked = [...counts.values()].sort((a, b) => b.n - a.n || a.first - b.first);
  const kept: typeof ranked = [];
  let covered = 0;
  for (const c of ranked) {
    if (covered >= coverage * tasks.length) break;
    kept.push(c);
    covered += c.n;
  }
  return kept.map((c) => ({ ...c.shape, share: c.n / covered }));
}
