// npm run bench:placement-energy — the carbon-aware option against the same policy without it: Tandem's
// default (size × walltime² × fair share + EASY) on Lublin–Feitelson traces from the repo's generator
// and on HPC2N (Table V's windows) when the trace is on disk, with kWh and kg CO2 from the simulator's
// energy meter under a carbon-intensity series (default: the SYNTHETIC week in bench/data/; `--carbon
// FILE` for a real one), aligned so the series starts at each sample's first arrival and repeats.
// Ratios are against the row without the option, measured in the same run.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { policy, type CarbonAware, type CarbonSeries, type Inventory, type PolicyConfig } from '../../placement/index.js';
import { alignSeries, parseCarbonCsv } from '../../cli/carbon.js';
import { simulate, type SimJob } from './sim.js';
import { ALL_OFF as off, fmt, hours } from './table.js';
import { clusterOf, swfInventory, swfSamples } from './swf.js';
import { lublinJobs } from './lublin.js';
import { BATCH_JOB_SLICE, hpc2nSamples } from './hpc2n.js';
import { TRACES } from './traces.js';

const here = dirname(fileURLToPath(import.meta.url));
const at = process.argv.indexOf('--carbon');
const file = at >= 0 ? process.argv[at + 1] : join(here, '..', 'data', 'carbon-intensity-synthetic-week.csv');
const series: CarbonSeries = alignSeries(parseCarbonCsv(readFileSync(file, 'utf8'), file));
const quick = process.argv.includes('--quick');

// The traces' machines are one-processor nodes: each gets half of DEFAULT_POWER's two-socket CPU
// server (50 W idle, 175 W busy), so 256 processors are 128 servers' worth.
function powered(inv: Inventory): Inventory {
  for (const s of inv.sites) for (const c of s.clusters) for (const p of c.partitions) for (const n of p.nodes) Object.assign(n, { idlePowerW: 50, powerW: 175 });
  return inv;
}

const base = policy({ ...off, order: 'score', fairShare: true, backfill: 'easy' });
const aware = (maxDelay: number, extra: Partial<CarbonAware> = {}): PolicyConfig => ({ ...base, carbonAware: { series, maxDelay, jobs: 'all', ...extra } });
// slack bounds each hold by a multiple of the job's requested walltime as well (bsld grows by delay / run).
const ROWS: { name: string; pol: PolicyConfig }[] = [
  { name: "Tandem default (Smith's rule × fair share + EASY)", pol: base },
  { name: '+ carbon-aware, maxDelay 4 h', pol: aware(4 * 3600) },
  { name: '+ carbon-aware, maxDelay 12 h', pol: aware(12 * 3600) },
  { name: '+ carbon-aware, maxDelay 12 h, slack 1 × walltime', pol: aware(12 * 3600, { slack: 1 }) },
  { name: '+ carbon-aware, maxDelay 12 h, slack 0.25 × walltime', pol: aware(12 * 3600, { slack: 0.25 }) },
];

interface Case {
  name: string;
  inv: Inventory;
  samples: SimJob[][];
}

const cases: Case[] = [];
const procs = 256;
const c = clusterOf(procs, procs);
for (const load of [0.6, 0.85]) {
  const jobs = lublinJobs({ seed: 11, jobs: 12_000, procs, load, estimates: 'user', users: 40 });
  cases.push({ name: `Lublin–Feitelson, 256 procs, load ${load}, 40 users, user estimates, seed 11`, inv: powered(swfInventory(c)), samples: swfSamples(jobs, c, { samples: quick ? 1 : 3 }) });
}
if (existsSync(join(TRACES, 'hpc', 'HPC2N-2002-2.2-cln.swf.gz'))) {
  const { inv, samples } = hpc2nSamples(1, BATCH_JOB_SLICE);
  cases.push({ name: "HPC2N, 240 procs, Table V's windows", inv: powered(inv), samples: samples.slice(0, quick ? 2 : 10) });
} else console.log('(HPC2N trace not found under ../shared/data/traces/hpc: its rows are left out)');

const t0 = Date.now();
console.log(`Carbon series: ${file} (${series.t.length} points, repeating every ${hours(series.period ?? 0)} h, aligned to each sample's first arrival).`);
console.log('Energy is the whole machine from first arrival to last completion (idle nodes included); "jobs" is the part above idle. Means over the samples; max wait over all of them.');
const verdicts: string[] = [];
for (const k of cases) {
  console.log(`\n${k.name}: ${k.samples.length} sample(s) × ${k.samples[0]?.length ?? 0} jobs`);
  console.log('| policy | avg bsld | max wait (h) | makespan (h) | kWh | kg CO2 | jobs kg CO2 | bsld ratio | kWh ratio | kg CO2 ratio | jobs kg CO2 ratio |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  let ref: { bsld: number; kWh: number; kg: number; jobKg: number } | undefined;
  for (const [ri, row] of ROWS.entries()) {
    const rs = k.samples.map((jobs) => simulate(k.inv, jobs, row.pol, { energy: { carbon: series } }));
    const mean = (f: (r: (typeof rs)[number]) => number) => rs.reduce((t, r) => t + f(r), 0) / rs.length;
    const maxWait = Math.max(0, ...rs.flatMap((r) => r.outcomes.map((o) => o.firstStart - o.submit)));
    const m = { bsld: mean((r) => r.avgBsld), kWh: mean((r) => r.energy!.kWh), kg: mean((r) => r.energy!.kgCO2), jobKg: mean((r) => r.energy!.jobKgCO2) };
    ref ??= m;
    const ratio = (a: number, b: number) => `×${fmt(b ? a / b : 0, 3)}`;
    console.log(`| ${row.name} | ${fmt(m.bsld)} | ${hours(maxWait)} | ${hours(mean((r) => r.makespan))} | ${fmt(m.kWh, 0)} | ${fmt(m.kg, 0)} | ${fmt(m.jobKg, 0)} | ${ratio(m.bsld, ref.bsld)} | ${ratio(m.kWh, ref.kWh)} | ${ratio(m.kg, ref.kg)} | ${ratio(m.jobKg, ref.jobKg)} |`);
    if (ri > 0) verdicts.push(`${k.name.split(',')[0]}${k.name.includes('load') ? ` ${k.name.match(/load [\d.]+/)![0]}` : ''}, ${row.name.slice(2)}: jobs' kg CO2 ${fmt((m.jobKg / ref.jobKg - 1) * 100, 1)}%, total kg CO2 ${fmt((m.kg / ref.kg - 1) * 100, 1)}%, at a bsld cost of ${fmt((m.bsld / ref.bsld - 1) * 100, 1)}%`);
  }
}
console.log('\nbsld cost of the option:');
for (const v of verdicts) console.log(`- ${v}`);
console.log(`\nbench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
