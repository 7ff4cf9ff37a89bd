// npm run bench:placement-grid — table (a) on traces nothing was tuned on: 20 Lublin–Feitelson windows
// (bench/placement/lublin.ts) over machine sizes 64–2,048, offered loads 0.5–1.0, exact and user
// estimates, one user or many, seeds other than table (a)'s 11. Per window: avg bsld / max wait of the
// engine's baselines, Tandem's default and the default with its opt-in starvation bound, and each one's
// PASS/FAIL against issue #30's goal (bsld ≤ the best of FCFS, SJF, SAF and F1 + EASY; max wait ≤ SJF
// + EASY's); then the counts.
import { GRID, lublinJobs } from './lublin.js';
import { clusterOf, runSwfRows, swfInventory, swfSamples, SWF_ROWS, verdictOf, type SwfRow } from './swf.js';
import { fmt, hours, tandemDefault } from './table.js';



// The engine's rows; SWF_ROWS marks the four as the goal's baselines.
const BASELINES = ['FCFS + EASY (engine)', 'SJF + EASY (engine)', 'SAF + EASY (engine)', 'F1 + EASY (engine)'];
const ROWS: SwfRow[] = [
  ...SWF_ROWS.filter((r) => BASELINES.includes(r.name)),
  { name: 'Tandem default', pol: tandemDefault('easy'), candidate: true },
  { name: 'default + starvation 60 h', pol: tandemDefault('easy', { starvation: 60 * 3600 }) },
];

const t0 = Date.now();
const ours = ROWS.filter((r) => !r.baseline);
console.log("(a, fresh) Lublin–Feitelson windows nothing was tuned on: 5 samples × 1,024 jobs each (gym np_random seed 1) from 12,000 generated jobs; avg bsld (τ = 10 s) / max wait (h). PASS/FAIL per row: bsld at or below the best of the engine's FCFS, SJF, SAF and F1 + EASY / max wait no longer than SJF + EASY's.");
console.log(`| machine | load | estimates | users | seed | ${ROWS.map((r) => r.name).join(' | ')} | ${ours.map((r) => `${r.name}: bsld / max wait`).join(' | ')} |`);
console.log(`|---|---:|---|---:|---:|${ROWS.map(() => '---:').join('|')}|${ours.map(() => '---').join('|')}|`);
const met = new Map<string, { bsld: number; wait: number; both: number }>(ours.map((r) => [r.name, { bsld: 0, wait: 0, both: 0 }]));
for (const g of GRID) {
  const c = clusterOf(g.procs, g.procs);
  const jobs = lublinJobs({ ...g, jobs: 12_000 });
  const res = runSwfRows(swfSamples(jobs, c, { samples: 5 }), swfInventory(c), ROWS);
  const cells = res.map((r) => `${fmt(r.bsld)} / ${hours(r.maxWait)}`);
  const verdicts = res.flatMap((r) => {
    const v = verdictOf(r, res);
    if (!v) return [];
    const m = met.get(r.name)!;
    m.bsld += Number(v.bsld);
    m.wait += Number(v.wait);
    m.both += Number(v.bsld && v.wait);
    return [`${v.bsld ? 'PASS' : 'FAIL'} / ${v.wait ? 'PASS' : 'FAIL'}`];
  });
  console.log(`| ${g.procs} | ${g.load} | ${g.estimates} | ${g.users ?? 1} | ${g.seed} | ${cells.join(' | ')} | ${verdicts.join(' | ')} |`);
}
const d = met.get('Tandem default')!;
console.log(`Goal (on every window: bsld at or below the best baseline, max wait no longer than SJF + EASY's): ${ours.map((r) => `${r.name} bsld ${met.get(r.name)!.bsld}/${GRID.length}, max wait ${met.get(r.name)!.wait}/${GRID.length}, both ${met.get(r.name)!.both}/${GRID.length}`).join('; ')} → Tandem default ${d.both === GRID.length ? 'met' : 'MISSED'}.`);
console.log(`\nbench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
