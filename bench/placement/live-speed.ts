// The live path's speed: decisions per second of LiveCluster.place (one job at a time, on a state
// kept between decisions and moved by start/finish events), beside the from-scratch decide() (the
// state rebuilt from the inventory and every running job per call, what the activity did before)
// and the batch pass (one schedule() over a queue), at 1k, 10k and 50k nodes with 3× as many
// running jobs. Shapes are the batch bench's: alternating Philly GPU jobs and HPC2N MPI jobs.
import { ClusterState, LiveCluster, decide, policy, schedule, type Inventory, type JobRequest, type PolicyConfig, type RunningJob } from '../../placement/index.js';

export function inventory(nodes: number): Inventory {
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

const FILL = policy({ order: 'fcfs', quotas: false, qos: false, fairShare: false, backfill: 'none', preemption: false, topology: true, thermal: false, cost: false });

/**
 * 3 × nodes running jobs, packed by topology from the small shapes (at most 4 GPUs or 32 ranks: three
 * jobs a node on average must fit), with estimated ends spread over the next 10 hours.
 */
export function runningSet(inv: Inventory, shapes: JobRequest[], count: number, busy = false): RunningJob[] {
  const s = new ClusterState(inv);
  // Busy: one-node jobs of 20 cores and 2 GPUs, three a node: 94% of the CPUs and 75% of the GPUs
  // taken, so most arrivals wait (reservations) or preempt.
  const small = busy ? shapes.map((j) => ({ ...j, count: 1, maxPerNode: 1, per: { cpus: 20, gpus: 2, memoryMB: 64_000 }, needsNvlink: false, needsIb: false })) : shapes.filter((j) => j.per.gpus * j.count <= 4 && j.per.cpus * j.count <= 32);
  const out: RunningJob[] = [];
  for (let k = 0; out.length < count && k < 20 * count; k++) {
    const j = small[k % small.length];
    const job: JobRequest = { ...j, id: `run-${k}`, submit: 0, walltime: 600 + ((k * 7919) % 36_000), priority: 10 + (k % 5) * 10, preemptible: true };
    const start = -((k * 104_729) % 3600);
    const [d] = schedule(s, [job], 0, FILL);
    if (d?.kind === 'start') out.push({ job, start, nodes: d.placement.nodes.map((n) => ({ node: n.node, slots: n.slots })) });
  }
  return out;
}

export interface LiveRow {
  nodes: number;
  running: number;
  gpuBusy: number;
  cpuBusy: number;
  live: { perSec: number; usPer: number; starts: number; reserves: number; n: number };
  rebuild: { perSec: number; n: number };
  buildMs: number;
}

/**
 * The live loop: each step a new job arrives and is placed; a start is booked and the running job
 * that has run longest finishes, so the load stays where it was. `decisions` steps are timed.
 */
export function measureLive(nodes: number, shapes: JobRequest[], pol: PolicyConfig, decisions: number, rebuildCalls: number, busy = false, warmup = 1000): LiveRow {
  const inv = inventory(nodes);
  const running = runningSet(inv, shapes, 3 * nodes, busy);
  const t0 = performance.now();
  const live = new LiveCluster(inv, running);
  const buildMs = performance.now() - t0;
  const s = live.state;
  const gpuBusy = 1 - s.freeGpu / s.totalGpu;
  const cpuBusy = 1 - s.freeCpu / s.totalCpu;
  // From scratch: the same question, with the state rebuilt each call (few calls: each is slow).
  const t1 = performance.now();
  for (let k = 0; k < rebuildCalls; k++) decide(inv, running, { ...shapes[k % shapes.length], id: `q-${k}`, submit: 0 }, 0, pol);
  const rebuildMs = performance.now() - t1;
  const order = running.map((r) => r.job.id);
  let oldest = 0;
  let starts = 0;
  let reserves = 0;
  let t2 = performance.now();
  // The first `warmup` steps are not timed: the JIT compiles, and each new job shape builds its fit
  // index once (a live scheduler runs for weeks; a cold start is what buildMs is for).
  for (let k = 0; k < decisions + warmup; k++) {
    if (k === warmup) {
      t2 = performance.now();
      starts = reserves = 0;
    }
    const now = k;
    const job = { ...shapes[k % shapes.length], id: `live-${k}`, submit: now };
    const d = live.place(job, now, pol);
    if (d.kind === 'start' || d.kind === 'preempt') {
      starts++;
      order.push(job.id);
      while (oldest < order.length && !live.finish(order[oldest++]));
    } else if (d.kind === 'reserve') reserves++;
  }
  const liveMs = performance.now() - t2;
  return {
    nodes,
    running: running.length,
    gpuBusy,
    cpuBusy,
    live: { perSec: (decisions / liveMs) * 1000, usPer: (liveMs * 1000) / decisions, starts, reserves, n: decisions },
    rebuild: { perSec: (rebuildCalls / rebuildMs) * 1000, n: rebuildCalls },
    buildMs,
  };
}

/** One batch pass over `queue` on the same kind of state (what the batch rows measure), in decisions/s. */
export function measureBatch(nodes: number, shapes: JobRequest[], pol: PolicyConfig, queue: number): { perSec: number; decisions: number; ms: number } {
  const inv = inventory(nodes);
  const running = runningSet(inv, shapes, 3 * nodes);
  const live = new LiveCluster(inv, running);
  const jobs = Array.from({ length: queue }, (_, k) => ({ ...shapes[k % shapes.length], id: `b-${k}`, submit: 0 }));
  const t0 = performance.now();
  const ds = schedule(live.state, jobs, 0, pol);
  const ms = performance.now() - t0;
  return { perSec: (ds.length / ms) * 1000, decisions: ds.length, ms };
}
