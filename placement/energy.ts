// Energy and carbon: a per-node power model, a carbon-intensity time series (plain data: the caller
// parses the file, cli/carbon.ts), the meter the simulator integrates them with, and the carbon-aware
// hold the engine applies when `PolicyConfig.carbonAware` is set. Pure: no clock, no I/O.
import type { CarbonAware, CarbonSeries, Inventory, JobRequest, NodeSpec, Placement } from './types.js';
import { lastAtOrBefore } from './sorted.js';

/**
 * Power of a node the inventory gives none for. Approximate public figures, not measurements of any
 * site: a two-socket CPU server draws roughly 60–120 W at active idle and 300–400 W at full load in
 * published SPECpower_ssj2008 results; an NVIDIA A100 SXM GPU's TDP is 400 W (A100 datasheet) and an
 * idle one reads about 50–60 W in nvidia-smi. A GPU node is the CPU server plus its GPUs.
 */
export const DEFAULT_POWER = { cpuNode: { idleW: 100, busyW: 350 }, perGpu: { idleW: 50, busyW: 400 } } as const;

/** Idle and full-load watts of one node: its own figures when given, else DEFAULT_POWER. */
export function nodePower(n: NodeSpec): { idleW: number; busyW: number } {
  const idleW = n.idlePowerW ?? DEFAULT_POWER.cpuNode.idleW + n.gpus * DEFAULT_POWER.perGpu.idleW;
  const busyW = n.powerW ?? DEFAULT_POWER.cpuNode.busyW + n.gpus * DEFAULT_POWER.perGpu.busyW;
  return { idleW, busyW: Math.max(idleW, busyW) };
}

/** Last k with s.t[k] <= t (0 before the first point). */
function index(s: CarbonSeries, t: number): number {
  return lastAtOrBefore(s.t, t);
}

/** Where t falls inside one period of a periodic series (the series' own time axis). */
function fold(s: CarbonSeries, t: number): { base: number; k: number } {
  if (!s.period) return { base: 0, k: 0 };
  const k = Math.floor((t - s.t[0]) / s.period);
  return { base: k * s.period, k };
}

/**
 * Intensity (gCO2/kWh) at t. Piecewise constant: g[k] holds on [t[k], t[k+1]); before the first point
 * the first value, after the last the last value — or, with `period`, the series repeats every
 * `period` seconds from t[0] (a sample day or week standing for a longer trace).
 */
export function intensityAt(s: CarbonSeries, t: number): number {
  const { base } = fold(s, t);
  return s.g[index(s, t - base)];
}

/** ∫ intensity dt over [t[0], t] inside one period (or the whole axis without one); t ≥ t[0]. */
function cumulative(s: CarbonSeries, t: number): number {
  const k = index(s, t);
  return prefix(s)[k] + s.g[k] * (t - s.t[k]);
}

// Prefix areas per series object (the engine asks for them for every held job in every pass).
const prefixes = new WeakMap<CarbonSeries, number[]>();
function prefix(s: CarbonSeries): number[] {
  let p = prefixes.get(s);
  if (!p) {
    p = [0];
    for (let i = 1; i < s.t.length; i++) p.push(p[i - 1] + s.g[i - 1] * (s.t[i] - s.t[i - 1]));
    prefixes.set(s, p);
  }
  return p;
}

/** ∫ intensity dt over [a, b] in gCO2/kWh × s. */
export function intensityIntegral(s: CarbonSeries, a: number, b: number): number {
  if (b <= a) return 0;
  const F = (t: number): number => {
    if (t < s.t[0]) return -s.g[0] * (s.t[0] - t);
    if (!s.period) return cumulative(s, t);
    const { base, k } = fold(s, t);
    return k * cumulative(s, s.t[0] + s.period) + cumulative(s, t - base);
  };
  return F(b) - F(a);
}

/** The series' change points in (a, b]. */
function changePoints(s: CarbonSeries, a: number, b: number): number[] {
  const out: number[] = [];
  const { base } = fold(s, a);
  for (let off = base; ; off += s.period ?? Infinity) {
    for (const t of s.t) {
      const x = t + off;
      if (x > b) return out;
      if (x > a) out.push(x);
    }
    if (!s.period) return out;
  }
}

export interface CarbonHold {
  /** When the job's expected intensity is lowest inside its allowed delay (the engine reconsiders then). */
  until: number;
  /** Mean intensity over the job's requested walltime if started now, and from `until`. */
  nowG: number;
  thenG: number;
}

/** Is the job one the option may hold? Deadline-bound jobs never are. */
export function flexible(c: CarbonAware, job: JobRequest): boolean {
  if (job.deadline !== undefined) return false;
  return c.jobs === 'all' || job.delayTolerant === true;
}

/**
 * The carbon-aware rule: a flexible job waits while starting later — at a change point of the series
 * no later than submit + maxDelay — would run it (over its requested walltime) at a mean intensity at
 * least `minGain` lower than starting now, and, with a `threshold`, only while the intensity now is
 * above it. The series is a forecast the caller trusts; the job is held until the best such start
 * (the earliest among equals), never past submit + maxDelay (nor submit + slack × walltime).
 */
export function carbonHold(c: CarbonAware, job: JobRequest, now: number): CarbonHold | undefined {
  if (!flexible(c, job)) return undefined;
  const limit = job.submit + Math.min(c.maxDelay, c.slack !== undefined ? c.slack * job.walltime : Infinity);
  if (now >= limit || !c.series.t.length) return undefined;
  const w = Math.max(1, job.walltime);
  const mean = (t: number) => intensityIntegral(c.series, t, t + w) / w;
  const nowG = mean(now);
  if (c.threshold !== undefined && intensityAt(c.series, now) <= c.threshold) return undefined;
  let best = now;
  let bestG = nowG;
  for (const t of [...changePoints(c.series, now, limit), limit]) {
    const g = mean(t);
    if (g < bestG - 1e-9) {
      best = t;
      bestG = g;
    }
  }
  if (best === now || bestG > nowG * (1 - (c.minGain ?? 0.1))) return undefined;
  return { until: best, nowG, thenG: bestG };
}

export interface EnergyReport {
  /** Energy of the whole machine from the first arrival to the last completion (idle nodes included). */
  kWh: number;
  kgCO2: number;
  /** The part above idle: what the jobs themselves drew. */
  jobKWh: number;
  jobKgCO2: number;
  /** Σ idle watts of the nodes that are up. */
  idleW: number;
}

/**
 * Integrates power over simulated time. A node draws idle + (busy − idle) × load, load being the larger
 * of its CPU and GPU shares in use (linear in utilisation, as Fan, Weber and Barroso's "Power
 * provisioning for a warehouse-sized computer", ISCA'07, model servers); down nodes draw nothing.
 * With a series, grams follow the intensity at each instant (piecewise constant).
 */
export class EnergyMeter {
  private readonly nodes = new Map<string, { idleW: number; span: number; cpus: number; gpus: number }>();
  private readonly jobW = new Map<string, number>();
  readonly idleW: number;
  private dynW = 0;
  private joules = 0;
  private jobJoules = 0;
  private grams = 0;
  private jobGrams = 0;

  constructor(
    inv: Inventory,
    private readonly series?: CarbonSeries,
  ) {
    let idle = 0;
    for (const site of inv.sites)
      for (const c of site.clusters)
        for (const p of c.partitions)
          for (const n of p.nodes) {
            if (n.down) continue;
            const pw = nodePower(n);
            idle += pw.idleW;
            this.nodes.set(n.id, { idleW: pw.idleW, span: pw.busyW - pw.idleW, cpus: n.cpus, gpus: n.gpus });
          }
    this.idleW = idle;
  }

  /** A job starts on `p`: its nodes draw more until stop(). */
  start(jobId: string, p: Placement): void {
    let w = 0;
    for (const a of p.nodes) {
      const n = this.nodes.get(a.node);
      if (!n) continue;
      const load = Math.max(n.cpus > 0 ? a.cpus / n.cpus : 0, n.gpus > 0 ? a.gpus / n.gpus : 0);
      w += n.span * load;
    }
    this.stop(jobId);
    this.jobW.set(jobId, w);
    this.dynW += w;
  }

  stop(jobId: string): void {
    const w = this.jobW.get(jobId);
    if (w === undefined) return;
    this.dynW -= w;
    this.jobW.delete(jobId);
  }

  /** Nothing changed during [a, b). */
  advance(a: number, b: number): void {
    if (b <= a) return;
    const dyn = Math.max(0, this.dynW);
    this.joules += (this.idleW + dyn) * (b - a);
    this.jobJoules += dyn * (b - a);
    if (this.series?.t.length) {
      // W × (gCO2/kWh × s) / 3.6e6 J per kWh = grams.
      const gs = intensityIntegral(this.series, a, b) / 3.6e6;
      this.grams += (this.idleW + dyn) * gs;
      this.jobGrams += dyn * gs;
    }
  }

  report(): EnergyReport {
    return { kWh: this.joules / 3.6e6, kgCO2: this.grams / 1000, jobKWh: this.jobJoules / 3.6e6, jobKgCO2: this.jobGrams / 1000, idleW: this.idleW };
  }
}
