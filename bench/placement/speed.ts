// Decisions per second of one scheduling pass over 5,000 queued jobs at 1k and 10k nodes (8-GPU,
// 64-core nodes, one NVLink domain per node, 32-node IB islands, half-loaded). Job shapes are real:
// alternating Philly GPU jobs and HPC2N MPI jobs. Run: npm run bench:placement-speed
import { ClusterState, policy, schedule, type Inventory, type JobRequest, type PolicyConfig } from '../../placement/index.js';
import { loadPhilly, loadSwf } from './traces.js';

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
      out.push({ id: `g${k}`, type: 'ai-training', tenant, qos, priority: 100, submit: k, count: p.gpus, per: { cpus: 4, gpus: 1, memoryMB: 32_000 }, walltime: p.duration, needsNvlink: p.gpus >= 8, checkpointable: true });
    } else {
      const h = hpc[k];
      out.push({ id: `h${k}`, type: 'hpc-mpi', tenant, qos, priority: 100, submit: k, count: h.procs, per: { cpus: 1, gpus: 0, memoryMB: 2000 }, walltime: h.reqTime, needsIb: true });
    }
  }
  return out;
}

function measure(nodes: number, queue: JobRequest[], pol: PolicyConfig) {
  const inv = inventory(nodes);
  // Half-load the cluster with the same kind of work, so fits are neither trivial nor impossible.
  const fill = (s: ClusterState) => {
    let k = 0;
    while (s.freeGpu > s.totalGpu / 2 && k < queue.length) {
      const j = queue[k++];
      schedule(s, [{ ...j, id: `fill-${j.id}` }], 0, { ...pol, backfill: 'none', preemption: false });
    }
  };
  const runs: { ms: number; decisions: number; starts: number }[] = [];
  for (let r = 0; r < 3; r++) {
    const s = new ClusterState(inv);
    fill(s);
    const t0 = performance.now();
    const ds = schedule(s, queue, 10, pol);
    const ms = performance.now() - t0;
    runs.push({ ms, decisions: ds.length, starts: ds.filter((d) => d.kind === 'start').length });
  }
  runs.sort((a, b) => a.ms - b.ms);
  const med = runs[1];
  return { nodes, ms: med.ms, decisions: med.decisions, starts: med.starts, examined: queue.length, perSec: (queue.length / med.ms) * 1000, decPerSec: (med.decisions / med.ms) * 1000 };
}

const queue = shapes(5000);
const configs: [string, PolicyConfig][] = [
  ['full policy (DRF, QoS, EASY, topology, thermal, cost)', policy({ tenants: Array.from({ length: 7 }, (_, k) => ({ name: `t${k}`, weight: 1 })), preemption: false })],
  ['full policy + preemption', policy({ tenants: Array.from({ length: 7 }, (_, k) => ({ name: `t${k}`, weight: 1 })) })],
  ['FCFS + EASY, first-fit', policy({ order: 'fcfs', topology: false, quotas: false, qos: false, fairShare: false, preemption: false })],
];
console.log('\nPlacement speed: one pass over 5,000 queued jobs (median of 3), this machine');
console.log('| policy | nodes | pass (ms) | jobs decided/s | decisions emitted | starts | µs per job |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
const res: Record<string, number[]> = {};
for (const [name, pol] of configs) {
  for (const nodes of [1000, 10_000]) {
    const m = measure(nodes, queue, pol);
    (res[name] ??= []).push(m.perSec);
    console.log(`| ${name} | ${nodes} | ${m.ms.toFixed(0)} | ${Math.round(m.perSec).toLocaleString('en')} | ${m.decisions} | ${m.starts} | ${((m.ms * 1000) / m.examined).toFixed(1)} |`);
  }
}
console.log('\nGrowth 1k → 10k nodes (10× nodes): cost per job ×' + Object.entries(res).map(([n, [a, b]]) => `${(a / b).toFixed(2)} (${n.split(' (')[0]})`).join(', ×'));
console.log('Goal: ≥ 10,000 decisions/s at 10k nodes.');
