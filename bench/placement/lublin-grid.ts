// npm run bench:placement-grid — table (a) on traces nothing was tuned on: 20 Lublin–Feitelson windows
// (bench/placement/lublin.ts) over machine sizes 64–2,048, offered loads 0.5–1.0, exact and user
// estimates, one user or many, seeds other than table (a)'s 11. Per window: avg bsld / max wait of the
// engine's baselines, Tandem's default and the default with its opt-in starvation bound, and whether
// each beats the best of the engine's SJF + EASY and FCFS + EASY; then the counts.
import { GRID, lublinJobs } from './lublin.js';
import { clusterOf, runSwfRows, swfInventory, swfSamples, SWF_ROWS, type SwfRow } from './swf.js';
import { fmt, hours, tandemDefault } from './table.js';



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
