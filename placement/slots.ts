// How many of a job's slots a node can take, and the job-shape predicates every fit strategy shares.
// It sits below fit.ts, fit-index.ts and packing.ts, which all use it, so none of them import each
// other for it.
import { gpuSlotCap } from './gpus.js';
import type { ClusterState } from './state.js';
import { QOS_RULES, type JobRequest, type PolicyConfig } from './types.js';
import type { View } from './view.js';

export interface Fit {
  nodes: number[];
  slots: number[];
  /** Some slot sits beyond a node's physical capacity (allowed only for oversubscribing classes). */
  oversubscribed: boolean;
  /** GPUs (global numbers) per node entry, when the policy chose them; else allocation chooses. */
  gpus?: number[][];
  /** Why a packing policy chose this node, for the decision's explanation. */
  why?: string;
}

export const EPS = 1e-9;

/**
 * Must a projection made to fit this job track per-GPU state? Shares and FGD always read it; whole
 * GPUs only beside shares, so without shares running (a whole-GPU cluster) projections skip the copy.
 */
export const readsGpus = (s: ClusterState, job: JobRequest, pol: PolicyConfig): boolean =>
  job.per.gpuMilli !== undefined || pol.packing === 'fgd' || (job.per.gpus > 0 && (s.sharesRunning > 0 || s.gpu.partialTotal > 0));

/**
 * needsNvlink binds jobs that ask for GPUs (NVLink joins GPUs): every slot on nodes of one declared
 * NVLink domain. A node without `nvlinkDomain` is in no domain, so it never takes such a job.
 */
export const wantsOneDomain = (job: JobRequest): boolean => job.needsNvlink === true && job.per.gpus > 0;

/**
 * needsIb (MPI ranks talk over InfiniBand) and strictIsland: every slot inside one IB island. A node
 * without `ibIsland` is an island of its own (as everywhere in the engine).
 */
export const wantsOneIsland = (job: JobRequest): boolean => job.strictIsland === true || job.needsIb === true;

export function mayOversubscribe(job: JobRequest, pol: PolicyConfig): boolean {
  return pol.oversubscription && QOS_RULES[job.qos].oversubscribe;
}

export function eligible(s: ClusterState, i: number, job: JobRequest): boolean {
  if (s.down[i]) return false;
  if (job.gpuModel !== undefined && job.per.gpus > 0 && s.gpuModel[i] !== job.gpuModel) return false;
  const types = s.jobTypes[i];
  return types === undefined || types.includes(job.type);
}

/** How many of the job's slots node i can take on view v. */
export function slotsOn(s: ClusterState, v: View, i: number, job: JobRequest, os: boolean): number {
  if (!eligible(s, i, job)) return 0;
  const { per } = job;
  let k = job.maxPerNode ?? Number.MAX_SAFE_INTEGER;
  if (per.cpus > 0) k = Math.min(k, Math.floor((s.capCpu[i] * (os ? s.osCpu[i] : 1) - v.usedCpu[i] + EPS) / per.cpus));
  if (per.gpus > 0) {
    k = Math.min(k, Math.floor((s.capGpu[i] * (os ? s.osGpu[i] : 1) - v.usedGpu[i] + EPS) / per.gpus));
    // Per-GPU state matters only for shares and beside them; whole-GPU-only clusters (the common
    // case, and a hot loop) never look it up.
    if (k > 0 && (per.gpuMilli !== undefined || (v.gpu.partialTotal > 0 && v.gpu.partial[i] > 0))) k = Math.min(k, gpuSlotCap(s.gpuOff, v.gpu, i, per));
  }
  if (per.memoryMB > 0) k = Math.min(k, Math.floor((s.capMem[i] - v.usedMem[i] + EPS) / per.memoryMB));
  return k > 0 ? k : 0;
}

export function overPhysical(s: ClusterState, v: View, i: number, job: JobRequest, k: number): boolean {
  return v.usedCpu[i] + job.per.cpus * k > s.capCpu[i] + EPS || v.usedGpu[i] + job.per.gpus * k > s.capGpu[i] + EPS;
}
