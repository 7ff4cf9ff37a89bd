// Table b: HPC2N MPI jobs and Philly GPU jobs on one shared cluster against a static split of the same
// nodes (an HPC cluster and an AI cluster). Two arrival models: the traces' own submit times (both
// streams over the same span), and a backlog (every job queued at t=0, the reference design's "campaign"
// case), where makespan measures how fast the same work drains rather than when the last job arrives.
import { policy, type Inventory, type JobRequest } from '../../placement/index.js';
import { hpc2nSamples } from './hpc2n.js';
import { simulate, type SimJob, type SimResult } from './sim.js';
import { loadPhilly } from './traces.js';
import { ALL_OFF as off, fmt, hours } from './table.js';

export const GPU_NODES = 16;
const CPU_NODES = 240;

/** HPC2N's 240 cores plus 16 Philly-like GPU nodes (8 GPUs, 32 cores); shared, MPI ranks may use GPU nodes' cores. */
export function mixedInventory(shared: boolean): Inventory {
  const cpu = Array.from({ length: CPU_NODES }, (_, i) => ({ id: `cpu${i}`, cpus: 1, gpus: 0, memoryMB: 1024, ibIsland: `hpc-leaf${Math.floor(i / 48)}`, rackTempC: 20 + (i % 5) }));
  const gpu = Array.from({ length: GPU_NODES }, (_, i) => ({ id: `gpu${i}`, cpus: 32, gpus: 8, gpuModel: 'P100', memoryMB: 256_000, nvlinkDomain: `nvl${i}`, ibIsland: `ai-leaf${Math.floor(i / 8)}`, rackTempC: 22 + (i % 3) }));
  if (shared) return { sites: [{ name: 'site', clusters: [{ name: 'shared', partitions: [{ name: 'cpu', nodes: cpu }, { name: 'gpu', nodes: gpu }] }] }] };
  return { sites: [{ name: 'site', clusters: [{ name: 'hpc', partitions: [{ name: 'cpu', nodes: cpu, jobTypes: ['hpc-mpi'] }] }, { name: 'ai', partitions: [{ name: 'gpu', nodes: gpu, jobTypes: ['ai-training'] }] }] }] };
}

/** HPC2N sample 3 and the Philly jobs submitted over the same span, 30 days into the Philly trace. */
export function mixedJobs(): { hpc: SimJob[]; ai: SimJob[]; span: number } {
  const { samples } = hpc2nSamples();
  const hpc: SimJob[] = samples[2].map((j) => ({ req: { ...j.req, tenant: 'hpc', qos: 'silver' as const, maxPerNode: undefined }, run: j.run }));
  const span = hpc.reduce((m, j) => Math.max(m, j.req.submit), 0);
  const philly = loadPhilly();
  const pStart = philly.findIndex((p) => p.submit >= philly[0].submit + 30 * 86400);
  const pT0 = philly[pStart].submit;
  const ai = philly
    .slice(pStart)
    .filter((p) => p.submit - pT0 <= span && p.gpus <= GPU_NODES * 8)
    .map((p, k): SimJob => ({ req: { id: `ai-${k}`, type: 'ai-training', tenant: 'ai', qos: 'silver', priority: 100, submit: p.submit - pT0, count: p.gpus, per: { cpus: 2, gpus: 1, memoryMB: 16_000 }, walltime: Math.max(60, Math.ceil(p.duration * 1.5)), needsNvlink: p.gpus >= 8, checkpointable: true }, run: Math.max(1, p.duration) }));
  return { hpc, ai, span };
}

export interface MixedRow {
  name: string;
  r: SimResult;
}

export function runMixed(arrivals: 'trace' | 'backlog'): { rows: MixedRow[]; hpc: number; ai: number; span: number; longest: number } {
  const { hpc, ai, span } = mixedJobs();
  const at0 = (js: SimJob[]) => js.map((j) => ({ ...j, req: { ...j.req, submit: 0 } as JobRequest }));
  const all = arrivals === 'backlog' ? at0([...hpc, ...ai]) : [...hpc, ...ai];
  const fcfsEasy = policy({ ...off, order: 'fcfs', backfill: 'easy' });
  // Tandem: weighted DRF between the two communities, EASY backfill, topology-aware packing.
  const tandem = policy({ ...off, order: 'fairshare', fairShare: true, backfill: 'easy', topology: true, thermal: true, tenants: [{ name: 'hpc', weight: 1 }, { name: 'ai', weight: 1 }] });
  const sjfEasy = policy({ ...off, order: 'sjf', backfill: 'easy', topology: true });
  const rows: MixedRow[] = [
    { name: 'static split, FCFS + EASY per cluster', r: simulate(mixedInventory(false), all, fcfsEasy) },
    { name: 'shared, FCFS + EASY', r: simulate(mixedInventory(true), all, fcfsEasy) },
    { name: 'shared, SJF + EASY + topology', r: simulate(mixedInventory(true), all, sjfEasy) },
    { name: 'shared, Tandem (DRF hpc/ai + EASY + topology)', r: simulate(mixedInventory(true), all, tandem) },
  ];
  return { rows, hpc: hpc.length, ai: ai.length, span, longest: all.reduce((m, j) => Math.max(m, j.run), 0) };
}


export function printMixed(): void {
  for (const arrivals of ['trace', 'backlog'] as const) {
    const m = runMixed(arrivals);
    const split = m.rows[0].r;
    console.log(`\n(b${arrivals === 'trace' ? '1' : '2'}) Mixed, ${arrivals === 'trace' ? `trace arrival times (both streams over the same ${hours(m.span)} h)` : 'backlog (every job queued at t=0)'}: HPC2N sample 3 (${m.hpc} MPI jobs) + ${m.ai} Philly jobs, ${CPU_NODES} cores + ${GPU_NODES}×8 GPUs`);
    console.log('| setup | makespan (h) | vs split | CPU util | GPU util | avg JCT (h) | avg bsld | LB (h) | makespan/LB |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const { name, r } of m.rows) console.log(`| ${name} | ${hours(r.makespan)} | ${fmt(r.makespan / split.makespan)}× | ${fmt(r.utilCpu, 3)} | ${fmt(r.utilGpu, 3)} | ${hours(r.avgJct)} | ${fmt(r.avgBsld, 1)} | ${hours(r.lowerBound)} | ${fmt(r.makespan / r.lowerBound)} |`);
    console.log(`Longest single job: ${hours(m.longest)} h${arrivals === 'trace' ? `; the last job arrives at ${hours(m.span)} h` : ''}. The lower bound is ${fmt(split.lowerBound / split.makespan)}× the split's makespan: no schedule of these jobs on these nodes can reach 0.55× the split.`);
  }
}
