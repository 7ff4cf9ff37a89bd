// Which GPU a slot sits on. Node counters (state.ts) answer "how much GPU is free"; this layer answers
// "free where": a share of one GPU (per.gpuMilli) must fit inside a single GPU's remaining thousandths,
// and a whole-GPU slot needs GPUs nobody shares. Fractions without gpuMilli stay node-level shares
// bound to no GPU (the pooled model the engine had before), so those jobs never touch this state.
import type { SlotResources } from './types.js';

export const MILLI = 1000;

/** Free thousandths per GPU, plus per node the count of fully free and of partly taken GPUs. */
export interface GpuState {
  /** Indexed by global GPU number: node i owns off[i] .. off[i + 1] - 1. */
  free: Int32Array;
  whole: Int32Array;
  partial: Int32Array;
  /** Partly taken GPUs over all nodes: while 0, hot paths skip the per-node lookups. */
  partialTotal: number;
}

export function freshGpus(off: Int32Array): GpuState {
  const n = off.length - 1;
  const whole = new Int32Array(n);
  for (let i = 0; i < n; i++) whole[i] = off[i + 1] - off[i];
  return { free: new Int32Array(off[n]).fill(MILLI), whole, partial: new Int32Array(n), partialTotal: 0 };
}

export const copyGpus = (g: GpuState): GpuState => ({ free: g.free.slice(), whole: g.whole.slice(), partial: g.partial.slice(), partialTotal: g.partialTotal });

/** GPU units one slot binds: its share of one GPU, or its whole GPUs; 0 for CPU-only and pooled fractions. */
export function unitsPerSlot(per: SlotResources): number {
  if (per.gpuMilli !== undefined) return 1;
  return per.gpus >= 1 && Number.isInteger(per.gpus) ? per.gpus : 0;
}

/** Thousandths one unit takes. */
export const unitMilli = (per: SlotResources): number => per.gpuMilli ?? MILLI;

/** Why a slot's share cannot be honoured, or undefined when it can. */
export function shareProblem(per: SlotResources): string | undefined {
  const m = per.gpuMilli;
  if (m === undefined) return undefined;
  if (!Number.isInteger(m) || m < 1 || m >= MILLI) return `gpuMilli ${m} is not a share of one GPU (an integer 1..999)`;
  if (Math.abs(per.gpus * MILLI - m) > 1e-6) return `per.gpus ${per.gpus} disagrees with gpuMilli ${m} (it must be ${m / MILLI})`;
  return undefined;
}

/**
 * The cap GPU binding puts on node i's slots for `per` (Infinity: none beyond the node counters).
 * Whole-GPU slots are capped only where shares left GPUs partly taken: elsewhere the counters
 * already bound them, which keeps whole-GPU workloads exactly as they were (oversubscription included).
 */
export function gpuSlotCap(off: Int32Array, g: GpuState, i: number, per: SlotResources): number {
  const m = per.gpuMilli;
  if (m !== undefined) {
    let k = 0;
    for (let x = off[i]; x < off[i + 1]; x++) k += Math.floor(g.free[x] / m);
    return k;
  }
  if (g.partial[i] > 0 && per.gpus >= 1 && Number.isInteger(per.gpus)) return Math.floor(g.whole[i] / per.gpus);
  return Infinity;
}

function setFree(g: GpuState, i: number, x: number, v: number): void {
  const old = g.free[x];
  if (old === MILLI) g.whole[i]--;
  else if (old > 0) {
    g.partial[i]--;
    g.partialTotal--;
  }
  g.free[x] = v;
  if (v === MILLI) g.whole[i]++;
  else if (v > 0) {
    g.partial[i]++;
    g.partialTotal++;
  }
}

/**
 * Binds `units` units of `milli` on node i and appends the GPUs to `out`. A share goes to the tightest
 * GPU it fits (fuller GPUs fill up, emptier ones stay whole); a whole GPU to the lowest free index.
 * Returns how many it bound: fewer only where oversubscription let slots past the physical GPUs.
 */
export function takeUnits(off: Int32Array, g: GpuState, i: number, milli: number, units: number, out: number[]): number {
  let got = 0;
  for (; got < units; got++) {
    let best = -1;
    for (let x = off[i]; x < off[i + 1]; x++) {
      const f = g.free[x];
      if (f < milli) continue;
      if (milli === MILLI) {
        best = x;
        break;
      }
      if (best < 0 || f < g.free[best]) best = x;
    }
    if (best < 0) break;
    setFree(g, i, best, g.free[best] - milli);
    out.push(best);
  }
  return got;
}

/** Binds units on GPUs chosen by the caller (a packing policy); all or nothing, throws if one does not fit. */
export function takeChosen(off: Int32Array, g: GpuState, i: number, milli: number, gpus: readonly number[]): void {
  for (let k = 0; k < gpus.length; k++) {
    const x = gpus[k];
    if (x < off[i] || x >= off[i + 1] || g.free[x] < milli) {
      giveUnits(g, i, milli, gpus.slice(0, k));
      throw new Error(x < off[i] || x >= off[i + 1] ? `GPU ${x} is not on node ${i}` : `GPU ${x - off[i]} of node ${i} has ${g.free[x]} thousandths free, not ${milli}`);
    }
    setFree(g, i, x, g.free[x] - milli);
  }
}

export function giveUnits(g: GpuState, i: number, milli: number, gpus: readonly number[]): void {
  for (const x of gpus) {
    const v = g.free[x] + milli;
    if (v > MILLI) throw new Error(`GPU ${x} of node ${i} would exceed a whole GPU`);
    setFree(g, i, x, v);
  }
}
