// Table (a) for any SWF trace: the cluster HPCSim builds from the header (MaxNodes nodes of
// MaxProcs / MaxNodes processors; a job gets ceil(procs / per-node) whole nodes), 10 samples of 1,024
// consecutive jobs drawn as RLScheduler's compare-pick-jobs.py draws them (gym np_random seed 1,
// start = randint(1024, jobs − 1024 − 1)), the engine's baselines and Tandem's default, each with
// avg bounded slowdown (τ = 10 s) and the longest wait, and the goal verdict.
import { basename } from 'node:path';
import { policy, type Inventory, type JobRequest, type PolicyConfig, type PortfolioCandidate } from '../../placement/index.js';
import { DYNP_ORDERS } from '../../placement/dynp.js';
import { GymNpRandom } from './numpy-rng.js';
import { simulate, type SimJob, type SimResult } from './sim.js';
import { ALL_OFF as off, fmt, hours, tandemDefault } from './table.js';
import type { SwfJob } from './traces.js';
import type { Trace } from '../../cli/trace.js';
import { MAX_SIM_NODES } from '../../cli/simulate.js';
import { isHpcsimPolicy } from './hpc2n.js';

export interface Cluster {
  nodes: number;
  perNode: number;
}

export function clusterOf(maxNodes: number, maxProcs: number): Cluster {
  const nodes = maxNodes || maxProcs;
  return { nodes, perNode: Math.max(1, Math.floor((maxProcs || nodes) / nodes)) };
}

export function swfInventory(c: Cluster): Inventory {
  const nodes = Array.from({ length: c.nodes }, (_, i) => ({ id: `n${String(i).padStart(5, '0')}`, cpus: c.perNode, gpus: 0, memoryMB: 1024, ibIsland: 'machine' }));
  return { sites: [{ name: 'swf', clusters: [{ name: 'machine', partitions: [{ name: 'batch', nodes }] }] }] };
}

/** One SWF job as the engine's request: ceil(procs / per-node) whole nodes (one slot of per-node CPUs each). */
export function swfJob(j: SwfJob, t0: number, c: Cluster): SimJob {
  const req: JobRequest = {
    id: `j${j.id}`,
    type: 'hpc-mpi',
    tenant: `u${j.user}`,
    qos: 'gold',
    priority: 100,
    submit: j.submit - t0,
    count: Math.ceil(j.procs / c.perNode),
    per: { cpus: c.perNode, gpus: 0, memoryMB: 0 },
    maxPerNode: 1,
    walltime: Math.max(1, j.reqTime),
    needsIb: true,
  };
  return { req, run: j.run };
}

export function swfSamples(jobs: SwfJob[], c: Cluster, opts: { seed?: number; samples?: number; size?: number; slice?: number } = {}): SimJob[][] {
  const size = Math.min(opts.size ?? 1024, jobs.length);
  const n = opts.samples ?? 10;
  const rnd = new GymNpRandom(opts.seed ?? 1);
  const end = Math.min(jobs.length, opts.slice || jobs.length);
  const fits = (j: SwfJob) => Math.ceil(j.procs / c.perNode) <= c.nodes;
  const out: SimJob[][] = [];
  for (let k = 0; k < n; k++) {
    // A trace too short for the draw gives its whole self once.
    const start = end - size - 1 > size ? rnd.randint(size, end - size - 1) : 0;
    const seq = jobs.slice(start, start + size).filter(fits);
    out.push(seq.map((j) => swfJob(j, seq[0].submit, c)));
    if (start === 0) break;
  }
  return out;
}

export interface SwfRow {
  name: string;
  pol: PolicyConfig;
  hpcsimLoop?: boolean;
  /** The row the goal is checked for. */
  candidate?: boolean;
  /** An engine baseline the candidate must match or beat (FCFS, SJF, SAF and F1, each with the engine's EASY). */
  baseline?: boolean;
}

export const SWF_ROWS: SwfRow[] = [
  { name: 'FCFS', pol: policy({ ...off, order: 'fcfs', backfill: 'none' }) },
  { name: 'SJF', pol: policy({ ...off, order: 'sjf', backfill: 'none' }) },
  { name: 'FCFS + EASY (RLScheduler HPCSim variant)', pol: policy({ ...off, order: 'fcfs', backfill: 'easy', backfillExtraNodes: false }) },
  { name: 'SJF + EASY (RLScheduler variant)', pol: policy({ ...off, order: 'sjf', backfill: 'easy', backfillExtraNodes: false }) },
  { name: 'FCFS + EASY (engine)', pol: policy({ ...off, order: 'fcfs', backfill: 'easy' }), baseline: true },
  { name: 'SJF + EASY (engine)', pol: policy({ ...off, order: 'sjf', backfill: 'easy' }), baseline: true },
  { name: 'SAF + EASY (engine)', pol: policy({ ...off, order: 'saf', backfill: 'easy' }), baseline: true },
  { name: 'F1 + EASY (engine)', pol: policy({ ...off, order: 'f1', backfill: 'easy' }), baseline: true },
  { name: 'Tandem before (per-user DRF + EASY)', pol: policy({ ...off, order: 'fairshare', fairShare: true, backfill: 'easy' }) },
  { name: 'Tandem default with the opt-in starvation bound (starvation 60 h)', pol: tandemDefault('easy', { starvation: 60 * 3600 }) },
  { name: "Tandem default (Smith's rule size × walltime² × fair share + EASY)", pol: tandemDefault('easy'), candidate: true },
  { name: 'Tandem opt-in planning dynP (PolicyConfig.dynp: score, SJF, SAF, F1, FCFS) + EASY', pol: tandemDefault('easy', { dynp: DYNP_ORDERS }) },
  { name: 'Tandem default, conservative backfill', pol: tandemDefault('conservative') },
];

/**
 * Best published figure with backfilling (RLScheduler SC'20 Table V, as its repository's README
 * reprints it), by trace file name: Lublin-1 is its lublin_256.swf, Lublin-2 its lublin_256_new2.
 */
export const PUBLISHED: { match: RegExp; name: string; bsld: number }[] = [
  { match: /hpc2n/i, name: 'F1 + EASY (RLScheduler Table V)', bsld: 71.95 },
  { match: /sdsc-sp2/i, name: 'RL + EASY (RLScheduler Table V)', bsld: 397.82 },
  { match: /lublin_256_new2/i, name: 'SJF + EASY (RLScheduler Table V, Lublin-2)', bsld: 91.99 },
  { match: /lublin_256(\.swf)?(\.gz)?$/i, name: 'RL + EASY (RLScheduler Table V, Lublin-1)', bsld: 58.64 },
];

export interface SwfResult {
  name: string;
  bsld: number;
  maxWait: number;
  p99Wait: number;
  util: number;
  rejected: number;
  perSample: number[];
  /** A portfolio row: how often it chose each candidate over the samples ('score 40, saf 3'). */
  chosen?: string;
  row: SwfRow;
}

export const candidateName = (c: PortfolioCandidate) => c.order + (c.predict ? '+pred' : '');

function chosenOf(rs: SimResult[]): string | undefined {
  if (!rs[0]?.portfolio) return undefined;
  const n = new Map<string, number>();
  for (const r of rs) for (const p of r.portfolio ?? []) n.set(candidateName(p.candidate), (n.get(candidateName(p.candidate)) ?? 0) + p.chosen);
  return [...n].filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ');
}

export function runSwfRows(samples: SimJob[][], inv: Inventory, rows: SwfRow[] = SWF_ROWS): SwfResult[] {
  return rows.map((row) => {
    const rs = samples.map((jobs) => simulate(inv, jobs, row.pol, { hpcsimLoop: row.hpcsimLoop ?? isHpcsimPolicy(row.pol) }));
    const mean = (f: (r: (typeof rs)[number]) => number) => rs.reduce((t, r) => t + f(r), 0) / rs.length;
    const waits = rs.flatMap((r) => r.outcomes.map((o) => o.firstStart - o.submit)).sort((a, b) => a - b);
    return {
      name: row.name,
      bsld: mean((r) => r.avgBsld),
      maxWait: waits.length ? waits[waits.length - 1] : 0,
      p99Wait: waits.length ? waits[Math.floor(0.99 * (waits.length - 1))] : 0,
      util: mean((r) => r.utilCpu),
      rejected: rs.reduce((t, r) => t + r.rejected.length, 0),
      perSample: rs.map((r) => r.avgBsld),
      chosen: chosenOf(rs),
      row,
    };
  });
}

/** The row whose max wait bounds the goal's. */
export const WAIT_BOUND_ROW = 'SJF + EASY (engine)';

/**
 * Deliver 3's verdict for one row: bsld at or below the best of the baselines (the engine's FCFS, SJF,
 * SAF and F1, each with EASY), and max wait no longer than SJF + EASY's. Baselines get none.
 */
export function verdictOf(r: SwfResult, res: SwfResult[]): { bsld: boolean; wait: boolean } | undefined {
  if (r.row.baseline) return undefined;
  const best = Math.min(...res.filter((x) => x.row.baseline).map((x) => x.bsld));
  const sjf = res.find((x) => x.name === WAIT_BOUND_ROW);
  return { bsld: r.bsld <= best + 1e-9, wait: !sjf || r.maxWait <= sjf.maxWait };
}

const pf = (ok: boolean | undefined) => (ok === undefined ? '—' : ok ? 'PASS' : 'FAIL');

/** Every table (a) printed in this process: trace, the candidate's verdict (bench:placement's summary). */
export const VERDICTS: { trace: string; bsld: number; best: string; bestBsld: number; maxWait: number; sjfWait: number; ok: { bsld: boolean; wait: boolean } | 'idle'; wins: number; samples: number }[] = [];

/**
 * In how many samples the row's bsld is at or below `base`'s in the same sample. The mean over a
 * trace's samples turns on a few percent, and one scheduling change moves a sample's bsld by more
 * than that (docs/placement.md), so the paired count says whether a verdict is a margin or a rule.
 */
export function samplesAtOrBelow(r: SwfResult, base: SwfResult): number {
  return r.perSample.filter((x, k) => x <= base.perSample[k] + 1e-9).length;
}

/** Prints the rows and the verdict; returns whether the goal holds. */
export function printSwfTable(title: string, file: string, res: SwfResult[], note = ''): boolean {
  console.log(`\n(a) ${title}`);
  if (note) console.log(note);
  console.log(`PASS/FAIL: bsld at or below the best of the engine's FCFS, SJF, SAF and F1 + EASY rows; max wait no longer than ${WAIT_BOUND_ROW}'s.`);
  console.log('| scheduler | avg bsld | max wait (h) | p99 wait (h) | CPU util (busy period) | rejected | bsld ≤ best baseline | max wait ≤ SJF + EASY |');
  console.log('|---|---:|---:|---:|---:|---:|---|---|');
  for (const r of res) {
    const v = verdictOf(r, res);
    console.log(`| ${r.name} | ${fmt(r.bsld)} | ${hours(r.maxWait)} | ${hours(r.p99Wait)} | ${fmt(r.util, 3)} | ${r.rejected} | ${pf(v?.bsld)} | ${pf(v?.wait)} |`);
  }
  const cand = res.find((r) => r.row.candidate)!;
  const bases = res.filter((r) => r.row.baseline);
  const best = bases.reduce((a, b) => (b.bsld < a.bsld ? b : a));
  const pub = PUBLISHED.find((p) => p.match.test(basename(file)));
  // A window where no job waits under any row cannot rank policies: every order gives bsld 1.
  const idle = res.every((r) => r.maxWait === 0);
  const okBase = cand.bsld <= best.bsld + 1e-9;
  const okPub = !pub || cand.bsld < pub.bsld;
  const sjfRow = res.find((r) => r.name === WAIT_BOUND_ROW);
  const v = verdictOf(cand, res)!;
  VERDICTS.push({ trace: file === 'lublin' ? (/^.*?\)(?=, \d+ processors)/.exec(title)?.[0] ?? title) : basename(file), bsld: cand.bsld, best: best.name, bestBsld: best.bsld, maxWait: cand.maxWait, sjfWait: sjfRow?.maxWait ?? 0, ok: idle ? 'idle' : v, wins: samplesAtOrBelow(cand, best), samples: cand.perSample.length });
  if (idle) {
    console.log(`Goal: not tested on this trace: no job waited under any row (the windows never queue), so every order gives bsld ${fmt(cand.bsld)}. Raise the load (a smaller machine) to compare policies.`);
    return true;
  }
  const sjf = res.find((r) => r.name === 'SJF + EASY (engine)');
  const fcfs = res.find((r) => r.name === 'FCFS + EASY (engine)');
  const f1 = res.find((r) => r.name === 'F1 + EASY (engine)');
  console.log(
    `Goal: ${cand.name} bsld ${fmt(cand.bsld)} ≤ best engine baseline (${best.name}) ${fmt(best.bsld)}: ${okBase ? 'met' : 'MISSED'}` +
      (pub ? `; < ${pub.name} ${pub.bsld}: ${okPub ? 'met' : 'MISSED'}` : '; no published F1/RL figure with backfilling for this trace') +
      (sjf ? `; max wait ${hours(cand.maxWait)} h vs SJF + EASY (engine) ${hours(sjf.maxWait)} h` : '') +
      (fcfs ? `, FCFS + EASY (engine) ${hours(fcfs.maxWait)} h` : '') +
      (f1 ? `; beside: F1 + EASY (engine) ${fmt(f1.bsld)}, max wait ${hours(f1.maxWait)} h` : '') +
      ` → bsld ${pf(v.bsld)}, max wait ${pf(v.wait)}`,
  );
  return okBase && okPub && v.wait;
}

/** The per-trace verdict of every table (a) printed so far (Deliver 3 of issue #30). */
export function printVerdicts(): void {
  if (!VERDICTS.length) return;
  console.log(`\n(a, verdict) Tandem's default per trace: bsld at or below the best of the engine's FCFS, SJF, SAF and F1 + EASY rows; max wait no longer than ${WAIT_BOUND_ROW}'s.`);
  console.log('Samples ≤ best: the samples whose bsld is at or below the best baseline row\'s in the same sample (paired).');
  console.log('| trace | default bsld | best baseline (bsld) | bsld | samples ≤ best | default max wait (h) | SJF + EASY max wait (h) | max wait |');
  console.log('|---|---:|---|---|---:|---:|---:|---|');
  for (const x of VERDICTS)
    console.log(`| ${x.trace} | ${fmt(x.bsld)} | ${x.best} (${fmt(x.bestBsld)}) | ${x.ok === 'idle' ? 'not tested (no job waits)' : pf(x.ok.bsld)} | ${x.wins}/${x.samples} | ${hours(x.maxWait)} | ${hours(x.sjfWait)} | ${x.ok === 'idle' ? '—' : pf(x.ok.wait)} |`);
  const tested = VERDICTS.filter((x) => x.ok !== 'idle') as { ok: { bsld: boolean; wait: boolean } }[];
  console.log(`Default: bsld PASS on ${tested.filter((x) => x.ok.bsld).length}/${tested.length} traces, max wait PASS on ${tested.filter((x) => x.ok.wait).length}/${tested.length}.`);
}

/**
 * `npm run bench:placement -- --swf FILE [--nodes N --per-node K]`: table (a) for one trace (gz or
 * plain). The machine is the header's unless --nodes is given; a trace with neither is refused.
 */
export function printSwfFile(file: string, load: (f: string) => Trace, machine: { nodes?: number; perNode?: number } = {}): boolean {
  const { jobs, maxProcs, maxNodes, unsized = 0, noRequest = 0, malformed = 0, firstMalformed } = load(file);
  if (!machine.nodes && !maxNodes && !maxProcs) throw new Error(`${basename(file)} has no MaxNodes/MaxProcs header line: give the machine as --nodes N (and --per-node K processors, 1 when absent)`);
  const c = machine.nodes ? { nodes: machine.nodes, perNode: machine.perNode ?? 1 } : clusterOf(maxNodes, maxProcs);
  // tandem simulate's bound: a header of 10^8 nodes ran the bench out of heap building them.
  if (c.nodes > MAX_SIM_NODES) throw new Error(`${basename(file)}: a machine of ${c.nodes.toLocaleString('en-US')} nodes (${machine.nodes ? '--nodes' : 'the header'}) is more than the ${MAX_SIM_NODES.toLocaleString('en-US')} a replay builds: give --nodes N --per-node K with fewer, larger nodes`);
  // An empty trace, or one no job of which fits, printed a table of zeros and "not tested".
  if (!jobs.length) throw new Error(`${basename(file)} holds no job to replay${unsized + malformed ? ` (left out: ${unsized} without a processor count, ${malformed} malformed)` : ''}`);
  const wide = jobs.filter((j) => Math.ceil(j.procs / c.perNode) > c.nodes).length;
  if (wide === jobs.length) throw new Error(`every job of ${basename(file)} asks for more than the machine's ${c.nodes} node(s) × ${c.perNode} processor(s): give a larger machine (--nodes N --per-node K)`);
  const samples = swfSamples(jobs, c);
  const notes = [
    wide ? `${wide} of ${jobs.length} job(s) ask for more than the machine and are left out of the samples.` : '',
    'Wait = first start − submit, over all samples. Baselines for the goal: the engine\'s SJF + EASY and FCFS + EASY (both EASY variants) — the candidate must beat the best of them.',
    unsized ? `${unsized} record(s) with no processor count (cancelled before they started) left out.` : '',
    malformed ? `${malformed} malformed record(s) left out (the first on line ${firstMalformed}; \`tandem simulate\` names what is wrong with it).` : '',
    noRequest ? `${noRequest} of ${jobs.length} job(s) have no requested time: their run time stands in for it, as in RLScheduler's loader, so for them every order sees exact estimates.` : '',
  ];
  return printSwfTable(
    `${basename(file)} (${c.nodes} nodes × ${c.perNode} processors, ${machine.nodes ? 'as given' : 'from the header'}), ${samples.length} sample(s) × ${samples[0]?.length ?? 0} jobs (gym np_random seed 1); avg bounded slowdown τ = 10 s`,
    file,
    runSwfRows(samples, swfInventory(c)),
    notes.filter(Boolean).join('\n'),
  );
}

/** Synthetic Lublin–Feitelson traces (bench/placement/lublin.ts): single-user with exact and with user estimates, and a 40-user one. */
export function printLublinTables(lublinJobs: (o: { seed: number; jobs: number; procs: number; load?: number; estimates?: 'exact' | 'user'; users?: number }) => SwfJob[]): boolean[] {
  const procs = 256;
  const c = clusterOf(procs, procs);
  const cases = [
    { name: 'single user, exact estimates', estimates: 'exact' as const, users: 1 },
    { name: 'single user, user estimates', estimates: 'user' as const, users: 1 },
    { name: '40 users (Zipf), user estimates', estimates: 'user' as const, users: 40 },
  ];
  return cases.map((k) => {
    const jobs = lublinJobs({ seed: 11, jobs: 12_000, procs, load: 0.85, estimates: k.estimates, users: k.users });
    const samples = swfSamples(jobs, c, { samples: 5 });
    return printSwfTable(`Lublin–Feitelson synthetic (${k.name}), ${procs} processors, offered load 0.85, seed 11, ${samples.length} samples × ${samples[0].length} jobs`, 'lublin', runSwfRows(samples, swfInventory(c), SWF_ROWS.filter((r) => r.name !== 'FCFS' && r.name !== 'SJF' && !r.name.includes('conservative'))));
  });
}
