// Jobs examined and decisions emitted per second of one scheduling pass over 5,000 queued jobs at 1k
// and 10k nodes (8-GPU, 64-core nodes, one NVLink domain per node, 32-node IB islands, half-loaded).
// Job shapes are real: alternating Philly GPU jobs and HPC2N MPI jobs (8-GPU jobs need one NVLink
// domain: the engine holds needsNvlink jobs to one domain, which larger jobs on these 8-GPU nodes
// cannot have). Then the placeJob activity as pipelines call it (bench/placement/activity-speed.ts).
// Run: npm run bench:placement-speed (PLACEMENT_SPEED_ONLY=activity: that table alone)
import { ClusterState, policy, schedule, type Inventory, type JobRequest, type PolicyConfig } from '../../placement/index.js';
import { loadPhilly, loadSwf } from './traces.js';
import { measureBatch, measureLive } from './live-speed.js';
import { measureActivity } from './activity-speed.js';

function inventory(nodes: number): Inventory {
  const list = Array.from({ length: nodes }, (_, i) => ({
    id: `n${i}`,
    cpus: 64,
    gpus: 8,
    gpuModel: 'H100',
    memoryMB: 512_000,
    nvlinkDomain: `nvl${i}`,
    ibIsland: `leaf${Math.floor(i / 32)}`,
    rackTempC: 20 + ((i * 7) % 13),
    price: { cpuHour: 0.01, gpuHour: 2 },
  }));
  return { sites: [{ name: 'site', clusters: [{ name: 'c', partitions: [{ name: 'p', nodes: list, oversubscription: { cpu: 1.2, gpu: 1.05 } }] }] }] };
}

function shapes(n: number): JobRequest[] {
  const philly = loadPhilly().slice(0, n);
  const hpc = loadSwf().jobs.slice(0, n);
  const out: JobRequest[] = [];
  for (let k = 0; k < n; k++) {
    const qos = (['gold', 'silver', 'bronze'] as const)[k % 3];
    const tenant = `t${k % 7}`;
    if (k % 2 === 0) {
      const p = philly[k];
      out.push({ id: `g${k}`, type: 'ai-training', tenant, qos, priority: 100, submit: k, count: p.gpus, per: { cpus: 4, gpus: 1, memoryMB: 32_000 }, walltime: p.duration, needsNvlink: p.gpus === 8, checkpointable: true });
    } else {
      const h = hpc[k];
      out.push({ id: `h${k}`, type: 'hpc-mpi', tenant, qos, priority: 100, submit: k, count: h.procs, per: { cpus: 1, gpus: 0, memoryMB: 2000 }, walltime: h.reqTime, needsIb: true });
    }
  }
  return out;
}

function measure(nodes: number, queue: JobRequest[], pol: PolicyConfig, cpuBound: boolean) {
  const inv = inventory(nodes);
  // Half-load the cluster with the same kind of work, so fits are neither trivial nor impossible.
  const fill = (s: ClusterState) => {
    // Cycle through the shapes (fresh ids) until half the GPUs or half the CPUs are busy (the first
    // version stopped when the 5,000 shapes ran out, which left a 10k-node cluster mostly idle). The
    // CPU-bound scenario fills until half the GPUs are busy, which leaves the CPUs ~95% busy: most
    // MPI jobs then wait, which exercises the blocked-job paths (limits, reservations, backfill).
    // The same topology-packed starting state for every policy row.
    const fillPol = policy({ order: 'fcfs', quotas: false, qos: false, fairShare: false, backfill: 'none', preemption: false, topology: true });
    let k = 0;
    while (s.freeGpu > s.totalGpu / 2 && (cpuBound || s.freeCpu > s.totalCpu / 2) && k < 50 * queue.length) {
      const j = queue[k % queue.length];
      schedule(s, [{ ...j, id: `fill-${k++}-${j.id}` }], 0, fillPol);
    }
    return { gpuBusy: 1 - s.freeGpu / s.totalGpu, cpuBusy: 1 - s.freeCpu / s.totalCpu };
  };
  const runs: { ms: number; decisions: number; starts: number }[] = [];
  let load = { gpuBusy: 0, cpuBusy: 0 };
  for (let r = 0; r < 3; r++) {
    const s = new ClusterState(inv);
    load = fill(s);
    const t0 = performance.now();
    const ds = schedule(s, queue, 10, pol);
    const ms = performance.now() - t0;
    runs.push({ ms, decisions: ds.length, starts: ds.filter((d) => d.kind === 'start').length });
  }
  runs.sort((a, b) => a.ms - b.ms);
  const med = runs[1];
  // Every queued job is examined (the rows all backfill, so the pass never stops at a blocked head),
  // but under EASY a blocked job after the first reservation gets no decision: decisions ≤ jobs.
  return { nodes, load, ms: med.ms, decisions: med.decisions, starts: med.starts, examined: queue.length, perSec: (queue.length / med.ms) * 1000, decPerSec: (med.decisions / med.ms) * 1000 };
}

const queue = shapes(5000);
const fmtRate = (x: number) => Math.round(x).toLocaleString('en');
const configs: [string, PolicyConfig][] = [
  ['full policy (DRF, QoS, EASY, topology, thermal, cost)', policy({ tenants: Array.from({ length: 7 }, (_, k) => ({ name: `t${k}`, weight: 1 })), preemption: false })],
  ['full policy + preemption', policy({ tenants: Array.from({ length: 7 }, (_, k) => ({ name: `t${k}`, weight: 1 })) })],
  ['FCFS + EASY, first-fit', policy({ order: 'fcfs', topology: false, quotas: false, qos: false, fairShare: false, preemption: false })],
];
/** The goal the table is checked against: decisions emitted per second of a pass at this many nodes. */
// PLACEMENT_SPEED_ONLY=activity: only the activity-path table (a quick run).
if (process.env.PLACEMENT_SPEED_ONLY !== 'activity') {
const GOAL = { decPerSec: 10_000, nodes: 10_000 };
console.log('\nPlacement speed: one pass over 5,000 queued jobs (median of 3), this machine');
console.log('jobs examined/s = queued jobs / pass time (every job is looked at); decisions/s = decisions emitted (start, preempt, reserve, reject) / pass time: under EASY a blocked job after the first reservation gets none.');
console.log('| policy | nodes | GPUs / CPUs busy before | pass (ms) | jobs examined/s | decisions emitted | decisions/s | starts | µs per job |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
const res: Record<string, number[]> = {};
const atGoal: { row: string; decPerSec: number }[] = [];
for (const cpuBound of [false, true]) {
  for (const [name, pol] of configs) {
    for (const nodes of [1000, 10_000]) {
      const m = measure(nodes, queue, pol, cpuBound);
      const row = `${name}${cpuBound ? ', CPU-bound' : ''}`;
      if (!cpuBound) (res[name] ??= []).push(m.perSec);
      if (nodes === GOAL.nodes) atGoal.push({ row, decPerSec: m.decPerSec });
      console.log(`| ${row} | ${nodes} | ${(m.load.gpuBusy * 100).toFixed(0)}% / ${(m.load.cpuBusy * 100).toFixed(0)}% | ${m.ms.toFixed(0)} | ${Math.round(m.perSec).toLocaleString('en')} | ${m.decisions} | ${Math.round(m.decPerSec).toLocaleString('en')} | ${m.starts} | ${((m.ms * 1000) / m.examined).toFixed(1)} |`);
    }
  }
}
console.log('\nGrowth 1k → 10k nodes (10× nodes), half-loaded rows: cost per job ×' + Object.entries(res).map(([n, [a, b]]) => `${(a / b).toFixed(2)} (${n.split(' (')[0]})`).join(', ×'));
const missed = atGoal.filter((g) => g.decPerSec < GOAL.decPerSec);

console.log(`Goal ≥ ${fmtRate(GOAL.decPerSec)} decisions/s at ${fmtRate(GOAL.nodes)} nodes, per row: ` + atGoal.map((g) => `${g.row}: ${fmtRate(g.decPerSec)} (${g.decPerSec >= GOAL.decPerSec ? 'met' : 'MISSED'})`).join('; '));
console.log(missed.length ? `goal MISSED (${missed.length} of ${atGoal.length} rows at ${fmtRate(GOAL.nodes)} nodes below ${fmtRate(GOAL.decPerSec)} decisions/s)` : `goal met (all ${atGoal.length} rows at ${fmtRate(GOAL.nodes)} nodes, slowest ${fmtRate(Math.min(...atGoal.map((g) => g.decPerSec)))} decisions/s)`);

// ---------- the live path: one job at a time on a kept state ----------
const LIVE_GOAL = { decPerSec: 5000, nodes: 10_000 };
const livePol = configs[1][1];
console.log(`\nLive path (LiveCluster.place: decide one job on the kept state, book it if it starts, finish the longest-running job), policy: ${configs[1][0]}; 3 × nodes running jobs (estimated ends over 10 h), this machine`);
console.log('from scratch = decide() building the state from the inventory and every running job per call (what the placement activity did before); batch = one schedule() pass over 5,000 queued jobs on the same state. Live figures after 1,000 untimed warm-up decisions; "cold build" = building the kept state once.');
console.log('| scenario | nodes | running jobs | GPUs / CPUs busy | live decisions/s | µs per decision | starts / reserves | from scratch decisions/s | live ÷ from scratch | batch pass decisions/s | live ÷ batch | cold build (ms) |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
const liveAtGoal: { row: string; perSec: number }[] = [];
for (const busy of [false, true]) {
  for (const nodes of [1000, 10_000, 50_000]) {
    const m = measureLive(nodes, queue, livePol, nodes >= 50_000 ? 2000 : 5000, nodes >= 50_000 ? 1 : nodes >= 10_000 ? 2 : 5, busy);
    const b = measureBatch(nodes, queue, livePol, 5000);
    const row = busy ? 'busy (94% CPUs, 75% GPUs)' : 'shapes as queued';
    if (nodes === LIVE_GOAL.nodes) liveAtGoal.push({ row, perSec: m.live.perSec });
    console.log(`| ${row} | ${nodes.toLocaleString('en')} | ${m.running.toLocaleString('en')} | ${(m.gpuBusy * 100).toFixed(0)}% / ${(m.cpuBusy * 100).toFixed(0)}% | ${fmtRate(m.live.perSec)} | ${m.live.usPer.toFixed(0)} | ${m.live.starts} / ${m.live.reserves} | ${m.rebuild.perSec.toFixed(m.rebuild.perSec < 10 ? 2 : 0)} | ×${fmtRate(m.live.perSec / m.rebuild.perSec)} | ${fmtRate(b.perSec)} | ${(m.live.perSec / b.perSec).toFixed(2)} | ${m.buildMs.toFixed(0)} |`);
  }
}
console.log(`Goal ≥ ${fmtRate(LIVE_GOAL.decPerSec)} live decisions/s at ${fmtRate(LIVE_GOAL.nodes)} nodes: ` + liveAtGoal.map((g) => `${g.row}: ${fmtRate(g.perSec)} (${g.perSec >= LIVE_GOAL.decPerSec ? 'met' : 'MISSED'})`).join('; '));
}

// ---------- the activity path: placeJob as pipelines call it ----------
const ACT_GOAL = { perSec: 5000, nodes: 10_000 };
const actSizes = (process.env.PLACEMENT_ACTIVITY_SIZES ?? '1000,10000,50000,100000').split(',').map(Number);
const actBudgetMs = Number(process.env.PLACEMENT_ACTIVITY_MS ?? 2000);
console.log(`\nActivity path (placeJob from createPlacementActivities, inventory source in process, no network; jobs start and finish at the site as the submit/watch activities see them), policy: ${configs[1][0]}; 3 × nodes running jobs (a tenth Tandem's, preemptible); each row ${actBudgetMs / 1000} s of calls after one untimed first call. Tenant policy: the tenant may use partition p0 (half the nodes).`);
console.log('| nodes | running jobs | tenant policy | first call (ms) | activity decisions/s | µs per call | starts / reserves | source gathers | engine-only decisions/s | activity ÷ engine | heap MB per 10k nodes |');
console.log('|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
const actAtGoal: { row: string; perSec: number }[] = [];
const actFailed: string[] = [];
const actPol = { tenants: Array.from({ length: 7 }, (_, k) => ({ name: `t${k}`, weight: 1 })) };
for (const nodes of actSizes) {
  for (const tenantPolicy of [false, true]) {
    const m = await measureActivity(nodes, queue, actPol, policy(actPol), tenantPolicy, actBudgetMs, 50_000);
    if (m.error) actFailed.push(`${nodes.toLocaleString('en')} nodes${tenantPolicy ? ' with tenant policy' : ''}: ${m.error}`);
    if (nodes === ACT_GOAL.nodes) actAtGoal.push({ row: tenantPolicy ? 'with tenant policy' : 'no tenant policy', perSec: m.error ? 0 : m.perSec });
    const rate = (x: number) => (x < 10 ? x.toFixed(1) : fmtRate(x));
    console.log(`| ${nodes.toLocaleString('en')} | ${m.running.toLocaleString('en')} | ${tenantPolicy ? 'p0 only' : 'none'} | ${m.error ? 'FAILED' : m.firstCallMs.toFixed(0)} | ${m.error ? `FAILED: ${m.error}` : rate(m.perSec)} | ${m.error ? '' : m.usPer.toFixed(0)} | ${m.starts} / ${m.reserves} | ${m.gathers} | ${fmtRate(m.engine.perSec)} | ${m.error ? '' : (m.perSec / m.engine.perSec).toFixed(2)} | ${m.heapMBPer10k.toFixed(0)} |`);
  }
}
if (actAtGoal.length) console.log(`Goal ≥ ${fmtRate(ACT_GOAL.perSec)} activity decisions/s at ${fmtRate(ACT_GOAL.nodes)} nodes: ` + actAtGoal.map((g) => `${g.row}: ${fmtRate(g.perSec)} (${g.perSec >= ACT_GOAL.perSec ? 'met' : 'MISSED'})`).join('; '));
console.log(actFailed.length ? `sizes that FAILED: ${actFailed.join('; ')}` : 'no size failed');
