// Gap analysis for table (b): where the full engine's makespan loses against the lower bound.
// `npx tsx bench/placement/mixed-gap.ts trace|backlog [outcomes.json]`: the bound per resource, the
// last jobs to end, GPU/CPU use and waiting demand per 5% of the makespan, and the wide GPU jobs' starts.
import { ClusterState } from '../../placement/index.js';
import { lbCapacity, lbJob, makespanLowerBound, simulate } from './sim.js';
import { fullEngine, mixedInventory, mixedJobs } from './mixed.js';

const arrivals = (process.argv[2] ?? 'trace') as 'trace' | 'backlog';
const { hpc: h0, ai: a0 } = mixedJobs();
const at0 = (js: typeof h0) => js.map((j) => ({ ...j, req: { ...j.req, submit: 0 } }));
const [hpc, ai] = arrivals === 'backlog' ? [at0(h0), at0(a0)] : [h0, a0];
const all = [...hpc, ...ai];
const phys = lbCapacity(new ClusterState(mixedInventory(true)), { oversubscription: false });
const lbC = makespanLowerBound(all.map(lbJob), { cpus: phys.cpus, gpus: 0 });
const lbG = makespanLowerBound(all.map(lbJob), { cpus: 0, gpus: phys.gpus });
const lbAll = makespanLowerBound(all.map(lbJob), phys);
console.log(`phys cap ${JSON.stringify(phys)}; LB cpu-only ${(lbC / 3600).toFixed(2)} h, gpu-only ${(lbG / 3600).toFixed(2)} h, all ${(lbAll / 3600).toFixed(2)} h`);
const full = fullEngine(hpc, ai);
const t0 = Date.now();
const r = simulate(full.inv, full.jobs, full.pol);
if (process.argv[3]) { (await import("node:fs")).writeFileSync(process.argv[3], JSON.stringify(r.outcomes)); }
console.log(`sim ${((Date.now() - t0) / 1000).toFixed(0)} s; makespan ${(r.makespan / 3600).toFixed(2)} h = ${(r.makespan / lbAll).toFixed(3)}× phys, ${(r.makespan / r.lowerBound).toFixed(3)}× own (${(r.lowerBound / 3600).toFixed(2)} h); util cpu ${r.utilCpu.toFixed(3)} gpu ${r.utilGpu.toFixed(3)}; preemptions ${r.outcomes.reduce((t, o) => t + o.preemptions, 0)}`);
const last = [...r.outcomes].sort((a, b) => b.end - a.end).slice(0, 8);
for (const o of last) {
  const j = all.find((x) => x.req.id === o.id)!;
  console.log(`  late ${o.id} submit ${(o.submit / 3600).toFixed(2)} start ${(o.firstStart / 3600).toFixed(2)} end ${(o.end / 3600).toFixed(2)} run ${(o.run / 3600).toFixed(2)} h req ${(j.req.walltime / 3600).toFixed(2)} h count ${j.req.count} per ${JSON.stringify(j.req.per)} pre ${o.preemptions}`);
}
// Usage timeline from outcomes (approximate when preempted: counts [firstStart, end)).
const ev: { t: number; c: number; g: number }[] = [];
for (const o of r.outcomes) {
  const j = all.find((x) => x.req.id === o.id)!;
  const c = j.req.per.cpus * j.req.count;
  const g = j.req.per.gpus * j.req.count;
  ev.push({ t: o.end - o.run, c, g }, { t: o.end, c: -c, g: -g });
}
ev.sort((a, b) => a.t - b.t);
// Buckets of 5% of the makespan: mean CPU / GPU use, and waiting demand.
const B = 20;
const span = r.makespan;
let c = 0;
let g = 0;
const uc = new Array(B).fill(0);
const ug = new Array(B).fill(0);
let prev = 0;
for (const e of ev) {
  const a = prev;
  const b = e.t;
  for (let x = Math.floor((a / span) * B); x < B && x * (span / B) < b; x++) {
    const lo = Math.max(a, x * (span / B));
    const hi = Math.min(b, (x + 1) * (span / B));
    if (hi > lo) {
      uc[x] += c * (hi - lo);
      ug[x] += g * (hi - lo);
    }
  }
  prev = e.t;
  c += e.c;
  g += e.g;
}
const waiting = (t: number) => {
  let wc = 0;
  let wg = 0;
  for (const o of r.outcomes) {
    if (o.submit <= t && o.end - o.run > t) {
      const j = all.find((x) => x.req.id === o.id)!;
      wc += j.req.per.cpus * j.req.count;
      wg += j.req.per.gpus * j.req.count;
    }
  }
  return { wc, wg };
};
for (let x = 0; x < B; x++) {
  const w = waiting((x + 0.5) * (span / B));
  console.log(`  [${((x * span) / B / 3600).toFixed(1)} h) cpu ${(uc[x] / (span / B) / phys.cpus).toFixed(3)} gpu ${(ug[x] / (span / B) / phys.gpus).toFixed(3)} waiting cpu ${w.wc} gpu ${w.wg}`);
}
// Large GPU jobs: when they started, and idle GPUs just before.
const big = r.outcomes.map((o) => ({ o, j: all.find((x) => x.req.id === o.id)! })).filter(({ j }) => j.req.per.gpus * j.req.count > 8).sort((a, b) => a.o.firstStart - b.o.firstStart);
console.log(`GPU jobs > 8 GPUs: ${big.length}`);
const gpuAt = (t: number) => r.outcomes.reduce((s2, o) => { const j = all.find((x) => x.req.id === o.id)!; return s2 + (o.end - o.run <= t && o.end > t ? j.req.per.gpus * j.req.count : 0); }, 0);
for (const { o, j } of big) console.log(`  ${o.id} gpus ${j.req.per.gpus * j.req.count} submit ${(o.submit / 3600).toFixed(1)} start ${(o.firstStart / 3600).toFixed(1)} run ${(o.run / 3600).toFixed(2)} req ${(j.req.walltime / 3600).toFixed(2)} used GPUs 1h before start ${gpuAt(o.firstStart - 3600)} 10min before ${gpuAt(o.firstStart - 600)}`);
const sizes = new Map<number, { n: number; w: number }>();
for (const j of ai) { const g2 = j.req.count; const x = sizes.get(g2) ?? { n: 0, w: 0 }; x.n++; x.w += g2 * j.run; sizes.set(g2, x); }
console.log('ai sizes (gpus: jobs, GPU-h):', [...sizes].sort((a, b) => a[0] - b[0]).map(([g2, x]) => `${g2}: ${x.n}, ${(x.w / 3600).toFixed(0)}`).join('; '));
