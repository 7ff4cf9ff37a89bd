// npm run bench:placement-grid — table (a) on traces nothing was tuned on: 20 Lublin–Feitelson windows
// (bench/placement/lublin.ts) over machine sizes 64–2,048, offered loads 0.5–1.0, exact and user
// estimates, one user or many, seeds other than table (a)'s 11. Per window: avg bsld / max wait of the
// engine's baselines, Tandem's default and the default with its opt-in starvation bound, and whether
// each beats the best of the engine's SJF + EASY and FCFS + EASY; then the counts.
import { lublinJobs, type LublinOptions } from './lublin.js';
import { clusterOf, runSwfRows, swfInventory, swfSamples, SWF_ROWS, type SwfRow } from './swf.js';
import { fmt, hours, tandemDefault } from './table.js';

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

// The engine's rows; SWF_ROWS marks FCFS + EASY and SJF + EASY as the goal's baselines.
const BASELINES = ['FCFS + EASY (engine)', 'SJF + EASY (engine)', 'SAF + EASY (engine)', 'F1 + EASY (engine)'];
const ROWS: SwfRow[] = [
  ...SWF_ROWS.filter((r) => BASELINES.includes(r.name)),
  { name: 'Tandem default', pol: tandemDefault('easy'), candidate: true },
  { name: 'default + starvation 60 h', pol: tandemDefault('easy', { starvation: 60 * 3600 }) },
];

const t0 = Date.now();
console.log('(a, fresh) Lublin–Feitelson windows nothing was tuned on: 5 samples × 1,024 jobs each (gym np_random seed 1) from 12,000 generated jobs; avg bsld (τ = 10 s) / max wait (h). ✓ = below the best of the engine\'s SJF + EASY and FCFS + EASY.');
console.log(`| machine | load | estimates | users | seed | ${ROWS.map((r) => r.name).join(' | ')} |`);
console.log(`|---|---:|---|---:|---:|${ROWS.map(() => '---:').join('|')}|`);
const met = new Map<string, number>(ROWS.map((r) => [r.name, 0]));
for (const g of GRID) {
  const c = clusterOf(g.procs, g.procs);
  const jobs = lublinJobs({ ...g, jobs: 12_000 });
  const res = runSwfRows(swfSamples(jobs, c, { samples: 5 }), swfInventory(c), ROWS);
  const best = Math.min(...res.filter((r) => r.row.baseline).map((r) => r.bsld));
  const cells = res.map((r) => {
    const ok = r.bsld < best;
    if (ok) met.set(r.name, met.get(r.name)! + 1);
    return `${fmt(r.bsld)} / ${hours(r.maxWait)}${r.row.baseline ? '' : ok ? ' ✓' : ' ✗'}`;
  });
  console.log(`| ${g.procs} | ${g.load} | ${g.estimates} | ${g.users ?? 1} | ${g.seed} | ${cells.join(' | ')} |`);
}
console.log(`Goal (bsld below the engine's SJF + EASY and FCFS + EASY on every window): ${ROWS.filter((r) => !r.baseline).map((r) => `${r.name} ${met.get(r.name)}/${GRID.length}`).join(', ')} → Tandem default ${met.get('Tandem default') === GRID.length ? 'met' : 'MISSED'}.`);
console.log(`\nbench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
