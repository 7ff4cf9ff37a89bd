// `tandem simulate <trace>`: what-if analysis before an operator changes policy. Replays an SWF or CSV
// job trace against an inventory (a file, the SWF header's machine, or --nodes × --cpus-per-node)
// under the chosen policies in the trace-driven simulator (placement/simulate.ts: the same engine the
// workers decide with), prints the comparison table and writes an SVG plot: utilisation over time
// and the wait-time distribution of each policy.
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { dirname, extname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../contract/input-error.js';
import { MAX_TEXT_BYTES } from '../contract/limits.js';
import { parseInventory } from './inventory-file.js';
import { FileTooLarge, readInput, readProblem } from '../config/input-file.js';
import { DYNP_ORDERS, policy, type CarbonSeries, type Inventory, type JobRequest, type PolicyConfig } from '../placement/index.js';
import { simulate, type SimJob, type SimResult } from '../placement/simulate.js';
import { parseCsv, parseSwf, type Trace, type TraceJob } from './trace.js';
import { alignSeries, parseCarbonCsv } from './carbon.js';

const OFF = { quotas: false, qos: false, preemption: false, topology: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;

/** The policies a user can name, each as the engine runs it. */
export const SIM_POLICIES: Record<string, { label: string; pol: PolicyConfig }> = {
  fcfs: { label: 'FCFS, no backfill', pol: policy({ ...OFF, fairShare: false, order: 'fcfs', backfill: 'none' }) },
  sjf: { label: 'SJF (requested time), no backfill', pol: policy({ ...OFF, fairShare: false, order: 'sjf', backfill: 'none' }) },
  'fcfs-easy': { label: 'FCFS + EASY backfill', pol: policy({ ...OFF, fairShare: false, order: 'fcfs', backfill: 'easy' }) },
  'sjf-easy': { label: 'SJF + EASY backfill', pol: policy({ ...OFF, fairShare: false, order: 'sjf', backfill: 'easy' }) },
  'drf-easy': { label: 'per-user DRF + EASY', pol: policy({ ...OFF, fairShare: true, order: 'fairshare', backfill: 'easy' }) },
  default: { label: "Tandem's default (fair share × score + EASY)", pol: policy({ ...OFF, fairShare: true, order: 'score', backfill: 'easy' }) },
  'default-conservative': { label: "Tandem's default, conservative backfill", pol: policy({ ...OFF, fairShare: true, order: 'score', backfill: 'conservative' }) },
  // The opt-in starvation bound (PolicyConfig.starvation): what a site gives up in bsld for a shorter max wait.
  'default-aged': { label: "Tandem's default with the starvation bound (60 h)", pol: policy({ ...OFF, fairShare: true, order: 'score', backfill: 'easy', starvation: 60 * 3600 }) },
  // The opt-in planning self-tuning order (PolicyConfig.dynp): better than the default on lightly loaded logs.
  dynp: { label: 'planning dynP (score, SJF, SAF, F1, FCFS) + EASY', pol: policy({ ...OFF, fairShare: true, order: 'score', backfill: 'easy', dynp: DYNP_ORDERS }) },
};

export interface SimulateOptions {
  format?: 'swf' | 'csv';
  inventory?: string;
  nodes?: number;
  cpusPerNode?: number;
  policies: string[];
  from: number;
  jobs: number;
  plot?: string;
  /** A carbon-intensity CSV: energy and kg CO2 per policy, and the `*-carbon` policies. */
  carbon?: string;
  /** With --carbon: the longest a carbon-aware policy holds a job (s), and the walltime multiple. */
  carbonMaxDelay?: number;
  carbonSlack?: number;
  /** Power of a node the inventory gives none for (W); DEFAULT_POWER otherwise. */
  idleW?: number;
  busyW?: number;
}

/** The most a trace may hold once decompressed (500 MiB, below the longest string V8 makes, 2^29 - 24 characters): beyond it, an error rather than memory without bound. */
export const MAX_TRACE_BYTES = 500 * 2 ** 20;

/** gzip's magic bytes. */
const isGzip = (b: Buffer): boolean => b[0] === 0x1f && b[1] === 0x8b;

/**
 * A trace file's text: gzip (by its magic bytes) decompressed up to `limit` bytes, then an error naming
 * the file. The file itself is read up to `limit` too (readInput), so a pipe (`<(zcat a.swf.gz)`) works
 * and a device that never ends (`/dev/zero`) is an error, not memory without bound.
 */
export function traceText(file: string, limit = MAX_TRACE_BYTES): string {
  // Said as the file is: a plain file or endless device (/dev/zero) is too big as read, a gzip once decompressed.
  const tooBig = (gzip: boolean) =>
    new InputError('job trace', [{ path: 'file', message: gzip ? `holds more than ${Math.round(limit / 2 ** 20)} MiB of trace once decompressed: replay a part of it (zcat FILE | head -n N > part.swf)` : `holds more than ${Math.round(limit / 2 ** 20)} MiB of trace: replay a part of it (head -n N FILE > part.swf)` }], { source: file });
  let raw: Buffer;
  try {
    raw = readInput(file, limit);
  } catch (e) {
    // Past the limit before any decompression: a gzip that large is larger still once decompressed.
    if (e instanceof FileTooLarge) throw tooBig(isGzip(e.head));
    throw new InputError('job trace', [{ path: 'file', message: `cannot be read: ${readProblem(e)}` }], { source: file });
  }
  if (!isGzip(raw)) return raw.toString('utf8');
  try {
    return gunzipSync(raw, { maxOutputLength: limit }).toString('utf8');
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) throw tooBig(true);
    throw new InputError('job trace', [{ path: 'file', message: `is not a readable gzip file: ${(e as Error).message}` }], { source: file });
  }
}

/** The text of an inventory or carbon file, at most MAX_TEXT_BYTES; errors name the file and why. */
function inputText(file: string, what: string): string {
  try {
    return readInput(file, MAX_TEXT_BYTES).toString('utf8');
  } catch (e) {
    throw new InputError(what, [{ path: 'file', message: `cannot be read: ${readProblem(e)}` }], { source: file });
  }
}

export function readTrace(file: string, format?: 'swf' | 'csv', opts: { skipMalformed?: boolean; limit?: number } = {}): Trace {
  const text = traceText(file, opts.limit);
  const ext = extname(file.replace(/\.gz$/, '')).toLowerCase();
  return (format ?? (ext === '.csv' ? 'csv' : 'swf')) === 'csv' ? parseCsv(text, file) : parseSwf(text, { skipMalformed: opts.skipMalformed, source: file });
}

/**
 * The most nodes a replay builds from --nodes or a header. Every node is an object and slots in the
 * engine's state, so the size bounds memory: a one-job replay peaked at 221 MB with 200,000 nodes
 * and 362 MB with 500,000 (this machine), and a header of 10^9 ran the process out of heap before
 * this limit. The largest machines have about 160,000 nodes (Fugaku: 158,976).
 */
export const MAX_SIM_NODES = 500_000;

/** The machine to replay on: a JSON/YAML inventory file, --nodes × --cpus-per-node, or the SWF header's. */
export function machine(trace: Trace, o: SimulateOptions): { inv: Inventory; perNode: number; nodes: number } {
  if (o.inventory) {
    const inv = parseInventory(inputText(o.inventory, 'inventory'), o.inventory, MAX_SIM_NODES);
    const nodes = inv.sites.flatMap((s) => s.clusters.flatMap((c) => c.partitions.flatMap((p) => p.nodes)));
    return { inv, perNode: Math.min(...nodes.map((n) => n.cpus)), nodes: nodes.length };
  }
  const nodes = o.nodes ?? (trace.maxNodes || trace.maxProcs);
  if (nodes > MAX_SIM_NODES) throw new InputError('simulate options', [{ path: o.nodes !== undefined ? '--nodes' : trace.maxNodes ? 'MaxNodes' : 'MaxProcs', message: `a machine of ${nodes.toLocaleString('en-US')} nodes is more than the ${MAX_SIM_NODES.toLocaleString('en-US')} a replay builds: give --nodes N --cpus-per-node K with fewer, larger nodes (jobs take whole nodes, so the same processors in fewer nodes replay the same widths rounded up)` }]);
  if (!nodes) throw new InputError('simulate options', [{ path: '--nodes', message: 'the trace names no machine size (no MaxNodes/MaxProcs header): give --nodes and --cpus-per-node, or --inventory' }]);
  const perNode = o.cpusPerNode ?? Math.max(1, Math.floor((trace.maxProcs || nodes) / nodes));
  const list = Array.from({ length: nodes }, (_, i) => ({ id: `n${i}`, cpus: perNode, gpus: 0, memoryMB: 1024, ibIsland: 'machine' }));
  return { inv: { sites: [{ name: 'trace', clusters: [{ name: 'machine', partitions: [{ name: 'batch', nodes: list }] }] }] }, perNode, nodes };
}

/** HPCSim's reading of a job: ceil(procs / per-node) whole nodes; tenant = the trace's user. */
function simJob(j: TraceJob, t0: number, perNode: number): SimJob {
  const req: JobRequest = { id: `j${j.id}`, type: 'hpc-mpi', tenant: `u${j.user}`, qos: 'gold', priority: 100, submit: j.submit - t0, count: Math.ceil(j.procs / perNode), per: { cpus: perNode, gpus: 0, memoryMB: 0 }, maxPerNode: 1, walltime: Math.max(1, j.reqTime) };
  return { req, run: j.run };
}

export interface PolicyOutcome {
  name: string;
  label: string;
  res: SimResult;
  waits: number[];
  /** Busy CPUs over time: [t, cpus] steps. */
  busy: [number, number][];
}

/** A policy name with `-carbon` appended: the same policy holding jobs for cleaner hours (needs --carbon). */
function policyFor(name: string, o: SimulateOptions, series: CarbonSeries | undefined): { label: string; pol: PolicyConfig } | undefined {
  const plain = SIM_POLICIES[name];
  if (plain || !name.endsWith('-carbon') || !series) return plain;
  const inner = SIM_POLICIES[name.slice(0, -'-carbon'.length)];
  if (!inner) return undefined;
  const maxDelay = o.carbonMaxDelay ?? 12 * 3600;
  const slack = o.carbonSlack ?? 0.25;
  return { label: `${inner.label}, carbon-aware (≤ ${(maxDelay / 3600).toFixed(1)} h, slack ${slack})`, pol: { ...inner.pol, carbonAware: { series, maxDelay, slack, jobs: 'all' } } };
}

export function runSimulation(trace: Trace, o: SimulateOptions, carbonText?: string): { outcomes: PolicyOutcome[]; jobs: SimJob[]; capacity: number; skipped: number } {
  const series = o.carbon !== undefined ? alignSeries(parseCarbonCsv(carbonText ?? inputText(o.carbon, 'carbon series'), o.carbon)) : undefined;
  for (const p of o.policies) if (!policyFor(p, o, series)) throw new InputError('simulate options', [{ path: '--policies', message: p.endsWith('-carbon') && !series ? `"${p}" needs --carbon FILE (a carbon-intensity series)` : `unknown policy "${p}" (one of ${Object.keys(SIM_POLICIES).join(', ')}; with --carbon, any of them + "-carbon")` }]);
  if (!trace.jobs.length) {
    // Not --from's fault: say what the file held instead (an empty file, only comments, only jobs that never ran),
    // before the machine, whose size an empty file without a header would be asked for.
    const left = [trace.unsized && `${trace.unsized} without a processor count`, trace.malformed && `${trace.malformed} malformed (--skip-malformed)`].filter(Boolean);
    throw new InputError('job trace', [{ path: 'file', message: `the trace holds no job to replay${left.length ? ` (records left out: ${left.join(', ')})` : ': no record with a run time above 0'}` }]);
  }
  const { inv: bare, perNode, nodes } = machine(trace, o);
  const inv = withPower(bare, o);
  const window = trace.jobs.slice(o.from, o.from + o.jobs);
  if (!window.length) throw new InputError('simulate options', [{ path: '--from', message: `the trace has ${trace.jobs.length} job(s); none from ${o.from}` }]);
  const fits = window.filter((j) => Math.ceil(j.procs / perNode) <= nodes);
  // Time 0 is the earliest arrival, not the first job number's: a log whose numbers are not in
  // submit order would otherwise start before 0 (and the plot's hourly bins with it).
  if (!fits.length) throw new InputError('simulate options', [{ path: '--nodes', message: `all ${window.length} job(s) from #${o.from} ask for more than the machine's ${nodes} node(s) × ${perNode} processor(s): give a larger machine (--nodes, --cpus-per-node or --inventory)` }]);
  const t0 = fits.reduce((m, j) => Math.min(m, j.submit), Infinity);
  const jobs = fits.map((j) => simJob(j, t0, perNode));
  const capacity = nodes * perNode;
  const byId = new Map(jobs.map((j) => [j.req.id, j]));
  const outcomes = o.policies.map((name) => {
    const chosen = policyFor(name, o, series)!;
    const res = simulate(inv, jobs, chosen.pol, { energy: { carbon: series } });
    const waits = res.outcomes.map((x) => x.firstStart - x.submit).sort((a, b) => a - b);
    const ev: [number, number][] = [];
    for (const x of res.outcomes) {
      const c = byId.get(x.id)!.req.count * perNode;
      ev.push([x.firstStart, c], [x.end, -c]);
    }
    ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let cur = 0;
    const busy: [number, number][] = ev.map(([t, d]) => [t, (cur += d)]);
    return { name, label: chosen.label, res, waits, busy };
  });
  return { outcomes, jobs, capacity, skipped: window.length - fits.length };
}

/** --idle-w / --busy-w fill in the nodes the inventory gives no power for. */
function withPower(inv: Inventory, o: SimulateOptions): Inventory {
  if (o.idleW === undefined && o.busyW === undefined) return inv;
  const node = (n: Inventory['sites'][number]['clusters'][number]['partitions'][number]['nodes'][number]) => ({ ...n, idlePowerW: n.idlePowerW ?? o.idleW, powerW: n.powerW ?? o.busyW });
  return { sites: inv.sites.map((s) => ({ ...s, clusters: s.clusters.map((c) => ({ ...c, partitions: c.partitions.map((p) => ({ ...p, nodes: p.nodes.map(node) })) })) })) };
}

const h = (s: number) => (s / 3600).toFixed(1);

export function formatTable(outcomes: PolicyOutcome[]): string {
  const carbon = outcomes.some((o) => o.res.energy && o.res.energy.kgCO2 > 0);
  const rows = [['POLICY', 'JOBS', 'AVG BSLD', 'AVG WAIT (h)', 'P99 WAIT (h)', 'MAX WAIT (h)', 'UTIL', 'MAKESPAN (h)', 'kWh', ...(carbon ? ['kg CO2', 'vs FIRST (kg CO2)'] : []), 'vs FIRST (bsld)']];
  const base = outcomes[0]?.res.avgBsld;
  const baseKg = outcomes[0]?.res.energy?.kgCO2;
  for (const o of outcomes) {
    const w = o.waits;
    const mean = w.reduce((t, x) => t + x, 0) / Math.max(1, w.length);
    const e = o.res.energy;
    const kg = carbon ? [e ? e.kgCO2.toFixed(1) : '-', e && baseKg ? `×${(e.kgCO2 / baseKg).toFixed(3)}` : '-'] : [];
    rows.push([o.label, String(o.res.outcomes.length), o.res.avgBsld.toFixed(2), h(mean), h(w[Math.floor(0.99 * (w.length - 1))] ?? 0), h(w[w.length - 1] ?? 0), o.res.utilCpu.toFixed(3), h(o.res.makespan), e ? e.kWh.toFixed(1) : '-', ...kg, base ? `×${(o.res.avgBsld / base).toFixed(2)}` : '-']);
  }
  const width = rows[0].map((_, k) => Math.max(...rows.map((r) => r[k].length)));
  return rows.map((r) => r.map((c, k) => (k === 0 ? c.padEnd(width[k]) : c.padStart(width[k]))).join('  ')).join('\n');
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2'];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Two panels: utilisation over time (hourly means) and the cumulative distribution of waits. */
export function plotSvg(outcomes: PolicyOutcome[], capacity: number, title: string): string {
  const W = 900;
  const H = 300;
  const pad = 50;
  const end = Math.max(1, ...outcomes.map((o) => o.busy[o.busy.length - 1]?.[0] ?? 0));
  const bins = Math.min(400, Math.max(10, Math.ceil(end / 3600)));
  const dt = end / bins;
  const util = (o: PolicyOutcome) => {
    const out = new Array<number>(bins).fill(0);
    for (let k = 0; k + 1 < o.busy.length; k++) {
      const [t0, c] = o.busy[k];
      const t1 = o.busy[k + 1][0];
      for (let b = Math.floor(t0 / dt); b < bins && b * dt < t1; b++) out[b] += (c * (Math.min(t1, (b + 1) * dt) - Math.max(t0, b * dt))) / (dt * capacity);
    }
    return out;
  };
  const x1 = (t: number) => pad + ((W - 2 * pad) * t) / end;
  const y1 = (u: number) => pad + (H - 2 * pad) * (1 - Math.min(1, u));
  const maxWait = Math.max(1, ...outcomes.map((o) => o.waits[o.waits.length - 1] ?? 0));
  const x2 = (w: number) => pad + ((W - 2 * pad) * Math.log10(1 + w)) / Math.log10(1 + maxWait);
  // The wait plot is the tail (CCDF): the share of jobs waiting longer than x, on log axes, down to one job in the longest run.
  const most = Math.max(1, ...outcomes.map((o) => o.waits.length));
  const decades = Math.max(1, Math.ceil(Math.log10(most)));
  const y2 = (f: number) => H + pad + ((H - 2 * pad) * -Math.log10(Math.max(f, 10 ** -decades))) / decades;
  const legendX = W + 10;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W + 300}" height="${2 * H + 40}" font-family="sans-serif" font-size="12">`);
  parts.push(`<text x="${pad}" y="20" font-size="14">${esc(title)}</text>`);
  parts.push(`<text x="${pad}" y="${pad - 8}">CPU utilisation over time (hourly means; x: hours since the first arrival)</text>`);
  parts.push(`<text x="${pad}" y="${H + pad - 8}">Wait-time tail (share of jobs waiting longer than x; both axes log, x in hours)</text>`);
  for (const [y0] of [[0], [H]]) parts.push(`<rect x="${pad}" y="${y0 + pad}" width="${W - 2 * pad}" height="${H - 2 * pad}" fill="none" stroke="#999"/>`);
  for (const f of [0, 0.5, 1]) parts.push(`<text x="${pad - 30}" y="${y1(f) + 4}">${f * 100}%</text>`);
  for (let d = 0; d <= decades; d++) parts.push(`<text x="${pad - 45}" y="${y2(10 ** -d) + 4}">${d <= 2 ? 100 / 10 ** d : `1e-${d - 2}`}%</text>`);
  for (const t of [0, end / 2, end]) parts.push(`<text x="${x1(t) - 10}" y="${H - pad + 16}">${h(t)}</text>`);
  for (const w of [0, 3600, 24 * 3600, 7 * 24 * 3600, maxWait].filter((w, k, all) => w <= maxWait && (w === maxWait || x2(maxWait) - x2(w) > 40 || k === 0) && all.indexOf(w) === k)) parts.push(`<text x="${x2(w) - 10}" y="${2 * H - pad + 16}">${h(w)}</text>`);
  outcomes.forEach((o, k) => {
    const c = COLORS[k % COLORS.length];
    const u = util(o);
    parts.push(`<polyline fill="none" stroke="${c}" stroke-width="1.2" points="${u.map((v, b) => `${x1((b + 0.5) * dt).toFixed(1)},${y1(v).toFixed(1)}`).join(' ')}"/>`);
    const n = o.waits.length;
    const pts: string[] = [];
    // A step at every wait of the tail (the longest 200), every step-th one before it.
    const step = Math.max(1, Math.floor(n / 400));
    for (let q = 0; q < n; q++) {
      if (q % step && q < n - 200) continue;
      const x = x2(o.waits[q]).toFixed(1);
      pts.push(`${x},${y2((n - q) / n).toFixed(1)}`);
      if (q < n - 1) pts.push(`${x},${y2((n - q - 1) / n).toFixed(1)}`);
    }
    parts.push(`<polyline fill="none" stroke="${c}" stroke-width="1.5" points="${pts.join(' ')}"/>`);
    // The legend stands beside the plots, where it covers no curve.
    parts.push(`<rect x="${legendX}" y="${pad + 6 + 16 * k}" width="12" height="3" fill="${c}"/><text x="${legendX + 18}" y="${pad + 12 + 16 * k}" fill="${c}">${esc(`${o.label}: bsld ${o.res.avgBsld.toFixed(1)}, max wait ${h(o.waits[n - 1] ?? 0)} h`)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

// Digits only: Number() also takes "0x10", "1e3" and "" (as 0), which no one means for a count.
const int = (name: string, min = 0) => (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min) throw new InputError('simulate options', [{ path: name, message: `expected a whole number${min ? ` of at least ${min}` : ''}, got ${JSON.stringify(v)}` }]);
  return n;
};

const num = (name: string) => (v: string) => {
  const n = Number(v);
  if (!/^(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v.trim()) || !Number.isFinite(n)) throw new InputError('simulate options', [{ path: name, message: `expected a number ≥ 0, got ${JSON.stringify(v)}` }]);
  return n;
};

/**
 * Where the plot goes, checked before the replay (minutes on a large trace) rather than at the end:
 * a directory, or a file in a folder that does not exist, is named now.
 */
export function plotProblem(file: string): string | undefined {
  if (existsSync(file) && statSync(file).isDirectory()) return `${file} is a directory: give the plot's file name (e.g. ${join(file, 'what-if.svg')})`;
  const dir = dirname(resolve(file));
  if (!existsSync(dir)) return `${dirname(file)}: no such directory`;
  if (!statSync(dir).isDirectory()) return `${dirname(file)} is not a directory`;
  return undefined;
}

function writePlot(file: string, svg: string): void {
  try {
    writeFileSync(file, svg);
  } catch (e) {
    throw new InputError('simulate options', [{ path: '--plot', message: `cannot write ${file}: ${readProblem(e)}` }]);
  }
}

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate <trace>')
    .description('replay an SWF/CSV job trace under chosen policies: comparison table and an SVG plot (what-if before a policy change)')
    .option('--format <swf|csv>', 'trace format (default: by extension; .gz is read either way)')
    .option('--inventory <file>', 'the machine as a JSON/YAML inventory (sites → clusters → partitions → nodes)')
    .option('--nodes <n>', "number of nodes (default: the SWF header's MaxNodes)", int('--nodes', 1))
    .option('--cpus-per-node <n>', "processors per node (default: the header's MaxProcs / MaxNodes)", int('--cpus-per-node', 1))
    .option('--policies <list>', `comma-separated, first is the baseline: ${Object.keys(SIM_POLICIES).join(', ')}`, 'fcfs-easy,sjf-easy,default')
    .option('--from <k>', 'first job (index in the trace)', int('--from'), 0)
    .option('--jobs <n>', 'how many consecutive jobs to replay', int('--jobs', 1), 5000)
    .option('--plot <file.svg>', 'where to write the plot', 'simulate.svg')
    .option('--carbon <file.csv>', 'carbon intensity (timestamp,gCO2_per_kWh; ISO or epoch seconds), aligned to the first arrival and repeated: kg CO2 per policy, and "<policy>-carbon" policies')
    .option('--carbon-max-delay <hours>', 'longest a -carbon policy holds a job (default 12)', num('--carbon-max-delay'))
    .option('--carbon-slack <x>', "a -carbon policy holds a job at most x × its requested walltime too (default 0.25)", num('--carbon-slack'))
    .option('--idle-w <watts>', 'idle power of nodes without idlePowerW (default: placement/energy.ts DEFAULT_POWER)', num('--idle-w'))
    .option('--busy-w <watts>', 'full-load power of nodes without powerW', num('--busy-w'))
    .option('--skip-malformed', 'leave out malformed SWF records (short, a field that is not a number, a fractional count, a negative other than -1, a time beyond 10^11 s, a repeated job number), counted and reported, instead of stopping at the first')
    .option('--json', 'machine-readable output')
    .action((file: string, o: Omit<SimulateOptions, 'policies'> & { policies: string; json?: boolean; skipMalformed?: boolean }) => {
      if (o.format && o.format !== 'swf' && o.format !== 'csv') throw new InputError('simulate options', [{ path: '--format', message: `expected swf or csv, got ${JSON.stringify(o.format)}` }]);
      const { carbonMaxDelay, skipMalformed, ...rest } = o;
      const opts: SimulateOptions = { ...rest, policies: o.policies.split(',').map((p) => p.trim()).filter(Boolean), ...(carbonMaxDelay !== undefined && { carbonMaxDelay: carbonMaxDelay * 3600 }) };
      const plotWrong = opts.plot ? plotProblem(opts.plot) : undefined;
      if (plotWrong) throw new InputError('simulate options', [{ path: '--plot', message: plotWrong }]);
      const trace = readTrace(file, opts.format, { skipMalformed });
      const { outcomes, capacity, skipped, jobs } = runSimulation(trace, opts);
      if (opts.plot) writePlot(opts.plot, plotSvg(outcomes, capacity, `${file}: ${jobs.length} jobs on ${capacity} processors`));
      if (o.json) {
        console.log(JSON.stringify(outcomes.map((x) => ({ policy: x.name, jobs: x.res.outcomes.length, avgBsld: x.res.avgBsld, maxWait: x.waits[x.waits.length - 1] ?? 0, util: x.res.utilCpu, makespan: x.res.makespan, ...(x.res.energy && { kWh: x.res.energy.kWh, kgCO2: x.res.energy.kgCO2 }) })), null, 2));
        return;
      }
      console.log(`${file}: ${jobs.length} job(s) from #${opts.from} on ${capacity} processors${skipped ? ` (${skipped} larger than the machine left out)` : ''}`);
      if (trace.malformed) console.log(`note: ${trace.malformed} malformed record(s) left out (--skip-malformed), the first on line ${trace.firstMalformed}`);
      if (trace.unsized) console.log(`note: ${trace.unsized} record(s) of the trace name no processor count (cancelled before they started) and are left out`);
      if (trace.noRequest) console.log(`note: ${trace.noRequest} job(s) of the trace have no requested time; their run time stands in for it, so policies see exact estimates for them`);
      console.log(formatTable(outcomes));
      if (opts.plot) console.log(`plot: ${opts.plot} (utilisation over time, wait-time distribution)`);
    });
}
