// A seedable generator of synthetic rigid-job workloads after Lublin & Feitelson, "The workload on
// parallel supercomputers: modeling the characteristics of rigid jobs" (JPDC 63(11), 2003), with the
// batch-job parameters of their reference implementation (m_lublin99.c, as we recall them: checked
// against the paper's form, not against the file):
//  - size: serial with probability SERIAL_PROB; otherwise log2(size) from a two-stage uniform
//    (ULOW..UMED with probability UPROB, else UMED..UHI, UHI = log2(machine), UMED = UHI − 2.5),
//    rounded to a power of two with probability POW2_PROB;
//  - runtime: ln(runtime) hyper-gamma, Γ(A1, B1) with probability p = PA · size + PB (clamped to
//    [0, 1]), else Γ(A2, B2): larger jobs run longer;
//  - arrivals: bursty gamma inter-arrivals (shape 0.5, CV √2) modulated by a daily cycle (rate
//    weights of a Γ(ANUM, BNUM) shape over the hours from 8 AM, nights at a quarter of the peak), then
//    scaled so that the offered load (processor-seconds / (machine × span)) is `load`. This is the
//    part we could not reproduce from memory with confidence: the model's own arrival parameters
//    (AARR, BARR) gave implausible gaps here, so the load is set explicitly, as studies using the
//    model do with its ARAR knob.
// The model has no user estimates. Requested times here are either exact (= run time) or follow the
// shape Tsafrir, Etsion & Feitelson report (JSSPP 2005): users pick round values, most estimates are
// a few times the run time, a share of jobs hits the limit. Every job has the same user (single-user
// traces, where fair share has nothing to divide) unless `users` spreads them Zipf-wise.
import { mulberry32 } from '../../programs/rng.js';
import type { SwfJob } from './traces.js';

export const LUBLIN_BATCH = {
  SERIAL_PROB: 0.2927,
  POW2_PROB: 0.7686,
  ULOW: 1.2,
  UPROB: 0.875,
  A1: 6.57,
  B1: 0.823,
  A2: 639.1,
  B2: 0.0156,
  PA: -0.003,
  PB: 0.6986,
  ANUM: 6.1824,
  BNUM: 0.4311,
} as const;

/** Marsaglia–Tsang gamma(shape k, scale θ) from a uniform source. */
function gamma(rnd: () => number, k: number, theta: number): number {
  if (k < 1) return gamma(rnd, k + 1, theta) * Math.pow(rnd() || 1e-12, 1 / k);
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      // Box–Muller normal.
      const u1 = rnd() || 1e-12;
      const u2 = rnd();
      x = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = rnd() || 1e-12;
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v * theta;
  }
}

/** Estimates users pick: round values (s), the last being the queue limit. */
const ROUND = [300, 600, 900, 1800, 3600, 2 * 3600, 4 * 3600, 6 * 3600, 8 * 3600, 12 * 3600, 18 * 3600, 24 * 3600, 36 * 3600];

export interface LublinOptions {
  seed: number;
  jobs: number;
  /** Machine size (processors). */
  procs: number;
  /** Offered load: processor-seconds of work / (procs × arrival span); 0.85 when absent. */
  load?: number;
  /** 'exact': requested time = run time; 'user': round, inflated estimates (see the header). */
  estimates?: 'exact' | 'user';
  /** Users to spread jobs over (Zipf: user k submits ∝ 1/k); 1 when absent: a single-user trace. */
  users?: number;
  /** Longest run / estimate allowed (s); runs are cut there as a queue limit would. */
  limit?: number;
}

const zipfTotal = (n: number) => Array.from({ length: n }, (_, k) => 1 / (k + 1)).reduce((a, b) => a + b, 0);

export function lublinJobs(o: LublinOptions): SwfJob[] {
  const P = LUBLIN_BATCH;
  const rnd = mulberry32(o.seed);
  const uhi = Math.log2(o.procs);
  const umed = uhi - 2.5;
  const limit = o.limit ?? ROUND[ROUND.length - 1];
  // Daily cycle: arrival-rate weight of each half-hour from 8 AM, Γ(ANUM, BNUM) shaped over the
  // hours since 8 AM (the model's peak sits late morning, the trough at night), normalised to mean 1.
  const w = Array.from({ length: 48 }, (_, b) => {
    const x = (b + 0.5) / 2; // hours since 8 AM
    return Math.pow(x, P.ANUM - 1) * Math.exp(-x / P.BNUM);
  });
  const top = Math.max(...w);
  for (let b = 0; b < 48; b++) w[b] = Math.max(w[b], 0.25 * top); // nights are quieter, never empty
  const mean = w.reduce((t, x) => t + x, 0) / w.length;
  const weights = w.map((x) => x / mean);
  const out: SwfJob[] = [];
  let t = 0;
  for (let id = 1; out.length < o.jobs; id++) {
    // Inter-arrival (unit mean) stretched where the daily rate is low; scaled to the load below.
    const gap = gamma(rnd, 0.5, 2) * 600;
    const bucket = Math.floor(((t % 86_400) / 1800) % 48);
    t += Math.round(gap / weights[bucket]);
    let size = 1;
    if (rnd() > P.SERIAL_PROB) {
      let l = rnd() <= P.UPROB ? P.ULOW + (umed - P.ULOW) * rnd() : umed + (uhi - umed) * rnd();
      if (rnd() <= P.POW2_PROB) l = Math.round(l);
      size = Math.max(1, Math.min(o.procs, Math.round(Math.pow(2, l))));
    }
    const p = Math.min(1, Math.max(0, P.PA * size + P.PB));
    const lr = rnd() <= p ? gamma(rnd, P.A1, P.B1) : gamma(rnd, P.A2, P.B2);
    const run = Math.max(1, Math.min(limit, Math.round(Math.exp(lr))));
    let req = run;
    if (o.estimates === 'user') {
      // Inflation: 1× to about 10× (log-uniform), a tenth of the jobs asking for the limit.
      const want = rnd() < 0.05 ? limit : run * Math.exp(rnd() * Math.log(10));
      req = ROUND.find((r) => r >= want) ?? limit;
      req = Math.max(req, run);
    }
    let user = 1;
    if ((o.users ?? 1) > 1) {
      const H = zipfTotal(o.users!);
      let u = rnd() * H;
      while (u > 1 / user && user < o.users!) u -= 1 / user++;
    }
    out.push({ id, submit: t, run, procs: size, reqTime: req, user });
  }
  const span = Math.max(1, out[out.length - 1].submit - out[0].submit);
  const work = out.reduce((x, j) => x + j.run * j.procs, 0);
  const scale = work / (o.procs * span) / (o.load ?? 0.85);
  for (const j of out) j.submit = Math.round(j.submit * scale);
  return out;
}

/** The jobs as SWF text (the 18 standard fields; unknown ones −1), with the MaxProcs/MaxNodes header. */
export function toSwf(jobs: SwfJob[], procs: number, note: string): string {
  const head = [`; ${note}`, `; MaxNodes: ${procs}`, `; MaxProcs: ${procs}`];
  const rows = jobs.map((j) => [j.id, j.submit, -1, j.run, j.procs, -1, -1, j.procs, j.reqTime, -1, 1, j.user, -1, -1, 1, -1, -1, -1].join(' '));
  return [...head, ...rows, ''].join('\n');
}

/** bench:placement-grid's windows: machine sizes 64–2,048, loads 0.5–1.0, exact and user estimates, one user or many, seeds other than table (a)'s 11. */
export const GRID: Omit<LublinOptions, 'jobs'>[] = [
  { procs: 64, load: 0.8, estimates: 'exact', seed: 21 },
  { procs: 128, load: 0.7, estimates: 'exact', seed: 1 },
  { procs: 128, load: 0.7, estimates: 'exact', seed: 2 },
  { procs: 128, load: 0.85, estimates: 'exact', seed: 27 },
  { procs: 128, load: 0.95, estimates: 'exact', seed: 1 },
  { procs: 128, load: 0.95, estimates: 'user', seed: 1 },
  { procs: 256, load: 0.5, estimates: 'user', seed: 30 },
  { procs: 256, load: 0.6, estimates: 'exact', seed: 5 },
  { procs: 256, load: 0.7, estimates: 'exact', seed: 29, users: 20 },
  { procs: 256, load: 0.75, estimates: 'user', seed: 25 },
  { procs: 256, load: 0.85, estimates: 'user', seed: 4 },
  { procs: 256, load: 0.9, estimates: 'exact', seed: 24 },
  { procs: 256, load: 1.0, estimates: 'exact', seed: 4 },
  { procs: 512, load: 0.5, estimates: 'exact', seed: 22 },
  { procs: 512, load: 0.8, estimates: 'exact', seed: 3 },
  { procs: 512, load: 0.95, estimates: 'exact', seed: 26 },
  { procs: 1024, load: 0.7, estimates: 'exact', seed: 1 },
  { procs: 1024, load: 0.85, estimates: 'user', seed: 2 },
  { procs: 1024, load: 0.95, estimates: 'user', seed: 28 },
  { procs: 2048, load: 0.9, estimates: 'exact', seed: 23 },
];
