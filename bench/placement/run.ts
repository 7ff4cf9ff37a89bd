// npm run bench:placement — trace-driven tables: (a) HPC2N against RLScheduler's Table V, (b) HPC2N +
// Philly on one shared cluster against a static split, (c) the Pollux workloads against Tiresias, (d)
// Alibaba GPU v2023 against best-fit packing. Every figure is computed here from the traces.
import { printHpc2n } from './hpc2n.js';
import { printMixed } from './mixed.js';
import { loadPolluxResults } from './traces.js';
import { replay, replayEngine } from './alibaba.js';
import { POLLUX_LOADS, POLLUX_ROWS, WORKLOADS, polluxDurations, polluxJobs, runPollux } from './pollux.js';
import { fmt } from './table.js';

const t0 = Date.now();

// ---------- (a) HPC2N, (b) mixed ----------
printHpc2n();
printMixed();

// ---------- (c) Pollux workloads ----------
const durations = polluxDurations();
const loads = ['1.0', '0.5', '1.5', '2.0'];
const resC = loads.map((load) => ({ load, rows: runPollux(POLLUX_ROWS, load, durations), ref: (sched: string) => (loadPolluxResults(sched, load).mean ?? NaN) / 3600 }));
console.log(`\n(c) Pollux workloads (non-elastic: tuned GPUs and batch sizes fixed), 8 workloads per load, 16 nodes × 4 GPUs; avg JCT (h), mean of the 8 workloads' averages`);
console.log(`Duration model: per (application, GPUs, batch size) the smallest JCT the authors' Tiresias achieved over their 32 runs (${durations.size} configurations, ${[...durations.values()].reduce((t, d) => t + d.instances, 0)} instances); walltime estimates = those durations.`);
console.log('Averages are over completed jobs; rejected = jobs a row rejected, summed over the workloads and loads. Lower-bound row: mean over the workloads of the mean run time of their jobs (no job\'s JCT is below its run time).');
console.log('| scheduler | ' + loads.map((l) => `${l}× load`).join(' | ') + ' | rejected |');
console.log('|---|' + loads.map(() => '---:|').join('') + '---:|');
const refRow = (label: string, sched: string) => console.log(`| ${label} (authors' raw results) | ` + resC.map((r) => fmt(r.ref(sched), 3)).join(' | ') + ' | — |');
refRow('Tiresias', 'tiresias');
for (let k = 0; k < POLLUX_ROWS.length; k++) {
  const cells = resC.map((r) => {
    const x = r.rows[k].jct / 3600;
    return k < 2 ? `${fmt(x, 3)} (${fmt(((x - r.ref('tiresias')) / r.ref('tiresias')) * 100, 1)}%)` : fmt(x, 3);
  });
  console.log(`| ${POLLUX_ROWS[k].name} | ${cells.join(' | ')} | ${resC.reduce((t, r) => t + r.rows[k].rejected, 0)} |`);
}
refRow('Pollux, elastic', 'pollux');
refRow('Optimus+Oracle, elastic', 'optimus');
const meanRun = (load: string) => {
  const per = WORKLOADS.map((n) => polluxJobs(n, POLLUX_LOADS[load], durations)).map((js) => js.reduce((t, j) => t + j.run, 0) / js.length);
  return per.reduce((t, x) => t + x, 0) / per.length / 3600;
};
console.log('| JCT lower bound: mean run time | ' + loads.map((l) => fmt(meanRun(l), 3)).join(' | ') + ' | — |');
console.log(`LAS preemptions at 1.0× (${WORKLOADS.length} workloads): ` + resC[0].rows[0].preemptions + ' event-driven, ' + resC[0].rows[1].preemptions + ' round-based; GPU utilisation over the busy period (GPU-seconds used / (GPUs × time at least one job runs)), mean of the workloads, at 1.0×, rows in order: ' + resC[0].rows.map((r) => fmt(r.utilGpu, 3)).join(' / '));


// ---------- (d) Alibaba GPU v2023 ----------
const cps = [0.8, 0.9, 1.0, 1.1, 1.2, 1.3];
const handLabel = { 'best-fit': ' (CPU + GPU left, each over the node\'s own)', 'first-fit': '', 'worst-fit': ' (K8s LeastAllocated-like spread)' } as const;
const resD = [
  ...(['best-fit', 'first-fit', 'worst-fit'] as const).map((r) => ({ name: `${r}, hand-written${handLabel[r]}`, x: replay(r, cps) })),
  { name: 'engine best-fit (packing \'best-fit\': CPU + GPU left over the largest node\'s, the FGD paper\'s baseline)', x: replayEngine('best-fit', cps) },
  { name: 'engine FGD (packing \'fgd\', target workload: the trace\'s typical shapes, 95%)', x: replayEngine('fgd', cps) },
];
console.log(`\n(d) Alibaba GPU v2023 (openb, ${resD[0].x.nodes} nodes, ${resD[0].x.totalGpus} GPUs), per-GPU fractional state; tasks arrive in trace order (repeated), never leave`);
console.log('share of GPUs unallocated (share of GPU tasks that found no room) when the arrived GPU demand reaches:');
console.log('| packing | ' + cps.map((c) => `${Math.round(c * 100)}%`).join(' | ') + ' |');
console.log('|---|' + cps.map(() => '---:|').join(''));
for (const { name, x } of resD) console.log(`| ${name} | ` + x.points.map((p) => `${fmt(p.unallocated * 100, 1)}% (${fmt(p.failed * 100, 1)}%)`).join(' | ') + ' |');
const [bfD, fgdD] = resD.slice(-2).map((r) => r.x.points);
console.log('Engine FGD against engine best-fit, change in unallocated GPUs: ' + cps.map((c, k) => `${Math.round(c * 100)}%: ${fmt(((fgdD[k].unallocated - bfD[k].unallocated) / bfD[k].unallocated) * 100, 1)}%`).join(', ') + ' (the FGD paper reports up to -49%).');

console.log(`\nbench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
