// Resource use the fit works against: the live state, or a projection of it (victims gone, running
// jobs ended by their estimates, reserved capacity held back). Projections copy and then edit it.
import { copyGpus, freshGpus, giveUnits, takeUnits, unitMilli, type GpuState } from './gpus.js';
import type { Allocation, ClusterState } from './state.js';

export interface View {
  usedCpu: Float64Array;
  usedGpu: Float64Array;
  usedMem: Float64Array;
  gpu: GpuState;
  /**
   * False: `gpu` is the source's, left as it was, and edits skip it. Cheaper for projections made to
   * fit a job that needs no per-GPU state (readsGpus in fit.ts; findFit refuses any other job on it).
   */
  gpuTracked: boolean;
  /** True only for the live state, whose island aggregates let whole islands be skipped. */
  live: boolean;
}

/** What a reservation keeps on one node: its counters, and `units` GPU units of `milli` each. */
export interface Hold {
  cpus: number;
  gpus: number;
  mem: number;
  units: number;
  milli: number;
}

export const liveView = (s: ClusterState): View => ({ usedCpu: s.usedCpu, usedGpu: s.usedGpu, usedMem: s.usedMem, gpu: s.gpu, gpuTracked: true, live: true });

/** A projection to edit; `gpus` false leaves the GPU state untracked (see View.gpuTracked). */
export function copyView(s: ClusterState, v: View = liveView(s), gpus = true): View {
  const tracked = gpus && v.gpuTracked;
  return { usedCpu: Float64Array.from(v.usedCpu), usedGpu: Float64Array.from(v.usedGpu), usedMem: Float64Array.from(v.usedMem), gpu: tracked ? copyGpus(v.gpu) : v.gpu, gpuTracked: tracked, live: false };
}

const idle = new WeakMap<ClusterState, GpuState>();

/** Nothing running (read-only: the GPU state is shared between calls). */
export function emptyView(s: ClusterState): View {
  let gpu = idle.get(s);
  if (!gpu) idle.set(s, (gpu = freshGpus(s.gpuOff)));
  return { usedCpu: new Float64Array(s.n), usedGpu: new Float64Array(s.n), usedMem: new Float64Array(s.n), gpu, gpuTracked: true, live: false };
}

/** Takes a running allocation off a projected view, GPUs included. */
export function releaseOnView(v: View, a: Allocation): void {
  const { per } = a.job;
  for (let k = 0; k < a.nodes.length; k++) {
    const i = a.nodes[k];
    v.usedCpu[i] -= per.cpus * a.slots[k];
    v.usedGpu[i] -= per.gpus * a.slots[k];
    v.usedMem[i] -= per.memoryMB * a.slots[k];
  }
  if (a.gpus && v.gpuTracked) for (let k = 0; k < a.nodes.length; k++) giveUnits(v.gpu, a.nodes[k], unitMilli(per), a.gpus[k]);
}

const discard: number[] = [];

/**
 * Puts a reservation's hold on node i of a projected view. Its GPUs are chosen on this view the way
 * an allocation would choose them; reservations are advisory, so units that no longer fit are skipped.
 */
export function holdOnView(s: ClusterState, v: View, i: number, h: Hold): void {
  v.usedCpu[i] += h.cpus;
  v.usedGpu[i] += h.gpus;
  v.usedMem[i] += h.mem;
  if (h.units > 0 && v.gpuTracked) {
    takeUnits(s.gpuOff, v.gpu, i, h.milli, h.units, discard);
    discard.length = 0;
  }
}
