// Table d: Alibaba GPU v2023 (the FGD paper's openb trace) — share of GPUs left unallocated when the
// arrived GPU demand reaches a given share of the cluster's GPUs, with per-GPU fractional state
// (a task with gpu_milli < 1000 must fit inside one GPU's remaining fraction; a whole-GPU task needs
// fully free GPUs). Method, as the FGD authors' simulator runs its Fig. 7 experiment
// (hkust-adsl/kubernetes-scheduler-simulator, experiments/run_scripts: `-tune 1.3 --shuffle-pod=true`,
// seeds 42..51): the cluster is openb_node_list_gpu_node.csv (1,213 GPU nodes, 6,212 GPUs); the
// workload is every pod of openb_pod_list_default.csv, shuffled, then pods drawn uniformly from it
// until the GPU demand would pass 130% of the GPUs ("workload tuning"); tasks arrive one after another and
// never leave; a task that fits nowhere is dropped and its demand still counts as arrived. Each row is
// the mean over SEEDS such arrival sequences (our PRNG, not Go's, so the sequences are not theirs).
//
// Two kinds of rows on the same arrivals: packing rules written out below on a plain per-GPU model
// (replay), and the placement engine itself, ClusterState + schedule with a packing policy
// (replayEngine), whose FGD target workload is the trace's typical task shapes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClusterState, policy, schedule, typicalWorkload, type Inventory, type JobRequest, type Packing, type SlotResources, type WorkloadShape } from '../../placement/index.js';
import { prng, TRACES } from './traces.js';
import { fmt } from './table.js';

export interface Node {
  cpu: number;
  mem: number;
  model: string;
  /** Free milli-GPU per GPU. */
  gpu: Int32Array;
  freeCpu: number;
  freeMem: number;
}

export interface Task {
  cpu: number;
  mem: number;
  numGpu: number;
  milli: number;
  spec: string[];
}

const base = join(TRACES, 'gpu', 'alibaba-gpu-v2023');
const rows = (f: string) => readFileSync(join(base, f), 'utf8').split('\n').slice(1).filter((l) => l.trim()).map((l) => l.split(','));

interface NodeRow {
  id: string;
  cpu: number;
  mem: number;
  gpus: number;
  model: string;
}

/** The authors' cluster (GPU nodes only) and the trace's tasks in creation order. */
export function alibabaCluster(nodeList = 'openb_node_list_gpu_node.csv'): { spec: NodeRow[]; nodes: () => Node[]; tasks: Task[]; totalMilli: number } {
  const spec = rows(nodeList).map((r) => ({ id: r[0], cpu: Number(r[1]), mem: Number(r[2]), gpus: Number(r[3]), model: r[4] ?? '' }));
  const tasks = rows('openb_pod_list_default.csv')
    .map((r) => ({ t: Number(r[8]), name: r[0], task: { cpu: Number(r[1]), mem: Number(r[2]), numGpu: Number(r[3]), milli: Number(r[4]), spec: r[5] ? r[5].split('|') : [] } }))
    .sort((a, b) => a.t - b.t || (a.name < b.name ? -1 : 1))
    .map((x) => x.task);
  const totalMilli = spec.reduce((t, n) => t + n.gpus * 1000, 0);
  const nodes = () => spec.map((n) => ({ cpu: n.cpu, mem: n.mem, model: n.model, gpu: new Int32Array(n.gpus).fill(1000), freeCpu: n.cpu, freeMem: n.mem }));
  return { spec, nodes, tasks, totalMilli };
}

/** GPUs the task would take on node n (indices; a fractional task takes one), or undefined. */
export function gpusFor(n: Node, t: Task, pickFrac: 'first' | 'best'): number[] | undefined {
  if (t.cpu > n.freeCpu || t.mem > n.freeMem) return undefined;
  if (t.numGpu === 0) return [];
  if (t.spec.length && !t.spec.includes(n.model)) return undefined;
  if (t.milli < 1000) {
    let g = -1;
    for (let k = 0; k < n.gpu.length; k++) {
      if (n.gpu[k] < t.milli) continue;
      if (g < 0 || (pickFrac === 'best' && n.gpu[k] < n.gpu[g])) g = k;
      if (pickFrac === 'first') break;
    }
    return g < 0 ? undefined : [g];
  }
  const out: number[] = [];
  for (let k = 0; k < n.gpu.length && out.length < t.numGpu; k++) if (n.gpu[k] === 1000) out.push(k);
  return out.length === t.numGpu ? out : undefined;
}

/** 'best-fit-int': the authors' BestFit plugin, whose score is an integer (see authorsBestFit). */
export type PackRule = 'first-fit' | 'best-fit' | 'best-fit-int' | 'worst-fit';

/** Share of free resources the node keeps after the task (CPU + GPU, each relative to the node). */
function leftAfter(n: Node, t: Task): number {
  const gpuCap = n.gpu.length * 1000;
  let gpuFree = 0;
  for (let k = 0; k < n.gpu.length; k++) gpuFree += n.gpu[k];
  const take = t.numGpu === 0 ? 0 : t.milli < 1000 ? t.milli : 1000 * t.numGpu;
  return (n.freeCpu - t.cpu) / n.cpu + (gpuCap ? (gpuFree - take) / gpuCap : 0);
}

/**
 * The authors' BestFit score (best_fit_score.go): 100 · (1 − ½ CPU left / 128 cores − ½ GPU left / 8 GPUs)
 * truncated to the scheduler's integer node score (higher is better; their min-max normalisation
 * after it keeps the order and makes no new ties). Nodes within one point tie, and ties go to the
 * first node, as in their scheduler. The engine's best-fit keeps the exact value: the stronger baseline.
 */
function authorsBestFit(n: Node, t: Task): number {
  let gpuFree = 0;
  for (let k = 0; k < n.gpu.length; k++) gpuFree += n.gpu[k];
  const take = t.numGpu === 0 ? 0 : t.milli < 1000 ? t.milli : 1000 * t.numGpu;
  return Math.trunc((1 - (0.5 * (n.freeCpu - t.cpu)) / 128_000 - (0.5 * (gpuFree - take)) / 8_000) * 100);
}

const demandOf = (t: Task) => (t.numGpu === 0 ? 0 : t.milli < 1000 ? t.milli : 1000 * t.numGpu);

export interface Replay {
  totalGpus: number;
  nodes: number;
  /** Unallocated share of the GPUs and share of GPU tasks dropped, at each checkpoint. */
  points: { at: number; unallocated: number; failed: number }[];
}

/**
 * The authors' arrival sequence for one seed, in their order (Simulate in pkg/simulator/core.go):
 * every trace task, shuffled; then tasks drawn uniformly from the trace, appended until the next
 * draw would take the GPU demand past `ratio` of the GPUs.
 */
export function tunedArrivals(tasks: Task[], totalMilli: number, seed: number, ratio = 1.3): Task[] {
  const rand = prng(seed);
  const out = [...tasks];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  let demand = out.reduce((t, x) => t + demandOf(x), 0);
  for (;;) {
    const t = tasks[Math.floor(rand() * tasks.length)];
    if (demand + demandOf(t) > ratio * totalMilli) break;
    demand += demandOf(t);
    out.push(t);
  }
  return out;
}

/**
 * Feeds the arrivals to `place` (true: placed). As the authors' analysis does (merge_alloc_discrete.py),
 * a checkpoint's value is the mean over the arrivals after which the arrived GPU demand, in whole
 * percent of the cluster's GPUs (rounded), equals the checkpoint.
 */
function arrivals(seq: Task[], totalMilli: number, checkpoints: number[], place: (t: Task, k: number) => boolean): Replay['points'] {
  let arrived = 0;
  let allocated = 0;
  let failedGpuTasks = 0;
  let gpuTasks = 0;
  const bins = new Map(checkpoints.map((c) => [Math.round(c * 100), { unallocated: 0, failed: 0, n: 0 }]));
  seq.forEach((t, k) => {
    const demand = demandOf(t);
    arrived += demand;
    if (demand) gpuTasks++;
    if (place(t, k)) allocated += demand;
    else if (demand) failedGpuTasks++;
    const bin = bins.get(Math.round((arrived / totalMilli) * 100));
    if (bin) {
      bin.unallocated += 1 - allocated / totalMilli;
      bin.failed += failedGpuTasks / Math.max(1, gpuTasks);
      bin.n++;
    }
  });
  return checkpoints.map((c) => {
    const bin = bins.get(Math.round(c * 100))!;
    if (!bin.n) throw new Error(`the arrivals never reach ${Math.round(c * 100)}% of the GPUs`);
    return { at: c, unallocated: bin.unallocated / bin.n, failed: bin.failed / bin.n };
  });
}

/** Seeds of the arrival sequences a row averages over (the authors' run scripts use 42..51). */
export const SEEDS = [42, 43, 44, 45, 46, 47, 48, 49, 50, 51];

/** Runs one arrival sequence per seed through `run` and averages the checkpoints. */
function overSeeds(checkpoints: number[], seeds: number[], run: (seq: Task[], tasks: Task[], totalMilli: number) => Replay): Replay {
  const { tasks, totalMilli } = alibabaCluster();
  const runs = seeds.map((seed) => run(tunedArrivals(tasks, totalMilli, seed), tasks, totalMilli));
  const mean = (f: (p: Replay['points'][number]) => number, k: number) => runs.reduce((t, r) => t + f(r.points[k]), 0) / runs.length;
  return { ...runs[0], points: checkpoints.map((at, k) => ({ at, unallocated: mean((p) => p.unallocated, k), failed: mean((p) => p.failed, k) })) };
}

export function replay(rule: PackRule, checkpoints: number[], seeds = SEEDS): Replay {
  return overSeeds(checkpoints, seeds, (seq, _tasks, totalMilli) => replayOne(rule, seq, totalMilli, checkpoints));
}

function replayOne(rule: PackRule, seq: Task[], totalMilli: number, checkpoints: number[]): Replay {
  const nodes = alibabaCluster().nodes();
  const points = arrivals(seq, totalMilli, checkpoints, (t) => {
    let best = -1;
    let bestGpus: number[] | undefined;
    let bestScore = Infinity;
    for (let i = 0; i < nodes.length; i++) {
      const g = gpusFor(nodes[i], t, rule === 'first-fit' ? 'first' : 'best');
      if (!g) continue;
      if (rule === 'first-fit') {
        best = i;
        bestGpus = g;
        break;
      }
      const score = rule === 'best-fit' ? leftAfter(nodes[i], t) : rule === 'best-fit-int' ? -authorsBestFit(nodes[i], t) : -leftAfter(nodes[i], t);
      if (score < bestScore) {
        best = i;
        bestGpus = g;
        bestScore = score;
      }
    }
    if (best < 0) return false;
    const n = nodes[best];
    n.freeCpu -= t.cpu;
    n.freeMem -= t.mem;
    for (const g of bestGpus!) n.gpu[g] -= t.milli < 1000 ? t.milli : 1000;
    return true;
  });
  return { totalGpus: totalMilli / 1000, nodes: nodes.length, points };
}

const shared = (t: Task) => t.numGpu > 0 && t.milli < 1000;

/** A task as one engine slot: a share of one GPU (gpuMilli), whole GPUs, or CPU only. */
function slotOf(t: Task): SlotResources {
  return { cpus: t.cpu / 1000, memoryMB: t.mem, gpus: t.numGpu === 0 ? 0 : shared(t) ? t.milli / 1000 : t.numGpu, ...(shared(t) && { gpuMilli: t.milli }) };
}

// Every fractional task of the trace asks for one GPU; a task naming several GPU models (none in the
// default pod list) would need a model list the engine does not have, so only a single model counts.
const modelOf = (t: Task) => (t.spec.length === 1 ? t.spec[0] : undefined);

/** FGD's target workload for the trace: its typical task shapes (CPU and GPU; memory left out, as FGD does). */
export function alibabaWorkload(tasks: Task[]): WorkloadShape[] {
  return typicalWorkload(
    tasks.map((t) => {
      const { cpus, gpus, gpuMilli } = slotOf(t);
      return { cpus, gpus, gpuMilli, gpuModel: modelOf(t) };
    }),
    0.95,
  );
}

/** The same arrivals through the placement engine: ClusterState + schedule, one task per pass. */
export function replayEngine(packing: Packing, checkpoints: number[], seeds = SEEDS): Replay {
  return overSeeds(checkpoints, seeds, (seq, tasks, totalMilli) => replayEngineOne(packing, seq, tasks, totalMilli, checkpoints));
}

function replayEngineOne(packing: Packing, seq: Task[], tasks: Task[], totalMilli: number, checkpoints: number[]): Replay {
  const { spec } = alibabaCluster();
  const inv: Inventory = { sites: [{ name: 'alibaba', clusters: [{ name: 'openb', partitions: [{ name: 'all', nodes: spec.map((n) => ({ id: n.id, cpus: n.cpu / 1000, gpus: n.gpus, memoryMB: n.mem, ...(n.model && { gpuModel: n.model }) })) }] }] }] };
  const s = new ClusterState(inv);
  // Nothing but the packing: no quotas, no reservations (a task that fits nowhere is dropped), no preemption.
  const pol = policy({ order: 'fcfs', quotas: false, fairShare: false, qos: false, preemption: false, backfill: 'easy', reservationDepth: 0, oversubscription: false, deadlines: false, cost: false, thermal: false, packing, targetWorkload: packing === 'fgd' ? alibabaWorkload(tasks) : undefined });
  const points = arrivals(seq, totalMilli, checkpoints, (t, k) => {
    const job: JobRequest = { id: `t${k}`, type: 'inference', tenant: 'openb', qos: 'gold', priority: 0, submit: k, count: 1, per: slotOf(t), walltime: 1, gpuModel: modelOf(t) };
    return schedule(s, [job], k, pol)[0]?.kind === 'start';
  });
  return { totalGpus: totalMilli / 1000, nodes: s.n, points };
}

/** Table (d), with its goal verdict computed. */
export function printAlibaba(): void {
  const cps = [0.8, 0.9, 1.0, 1.1, 1.2, 1.3];
  const handLabel = { 'best-fit': ' (CPU + GPU left, each over the node\'s own)', 'best-fit-int': ' (the authors\' BestFit plugin: over 128 cores / 8 GPUs, integer score, ties to the first node)', 'first-fit': '', 'worst-fit': ' (K8s LeastAllocated-like spread)' } as const;
  const resD = [
    ...(['best-fit', 'best-fit-int', 'first-fit', 'worst-fit'] as const).map((r) => ({ name: `${r}, hand-written${handLabel[r]}`, x: replay(r, cps) })),
    { name: 'engine best-fit (packing \'best-fit\': CPU + GPU left over the largest node\'s, the FGD paper\'s baseline)', x: replayEngine('best-fit', cps) },
    { name: 'engine FGD (packing \'fgd\', target workload: the trace\'s typical shapes, 95%)', x: replayEngine('fgd', cps) },
  ];
  console.log(`\n(d) Alibaba GPU v2023 (openb, ${resD[0].x.nodes} nodes, ${resD[0].x.totalGpus} GPUs), per-GPU fractional state; the trace tuned to 130% of the GPUs and shuffled, mean of ${SEEDS.length} seeds; tasks never leave`);
  console.log('share of GPUs unallocated (share of GPU tasks that found no room) when the arrived GPU demand reaches:');
  console.log('| packing | ' + cps.map((c) => `${Math.round(c * 100)}%`).join(' | ') + ' |');
  console.log('|---|' + cps.map(() => '---:|').join(''));
  for (const { name, x } of resD) console.log(`| ${name} | ` + x.points.map((p) => `${fmt(p.unallocated * 100, 1)}% (${fmt(p.failed * 100, 1)}%)`).join(' | ') + ' |');
  const [bfD, fgdD] = resD.slice(-2).map((r) => r.x.points);
  const intD = resD[1].x.points;
  const vs = (base: Replay['points']) => cps.map((c, k) => `${Math.round(c * 100)}%: ${fmt(((fgdD[k].unallocated - base[k].unallocated) / base[k].unallocated) * 100, 1)}%`).join(', ');
  console.log(`Engine FGD against engine best-fit, change in unallocated GPUs: ${vs(bfD)}; against the authors' integer best-fit: ${vs(intD)}.`);
  // Quoted, not measured: the authors' artifact, experiments/analysis/expected_results/analysis_allo_discrete.csv.
  console.log("For reference, the authors' own results for this trace (openb_pod_list_default, 10 seeds): BestFit 7.14, 7.06, 7.00, 6.92% and FGD 4.77, 4.70, 4.65, 4.61% unallocated at 100–130%, i.e. -33%; the paper's 'up to 49%' is its best case over trace variants.");
  const change = (k: number) => (fgdD[k].unallocated - bfD[k].unallocated) / bfD[k].unallocated;
  const high = cps.map((c, k) => ({ c, k })).filter(({ c }) => c >= 1.0);
  const low = cps.map((c, k) => ({ c, k })).filter(({ c }) => c < 1.0);
  const highOk = high.every(({ k }) => change(k) <= -0.45);
  const lowOk = low.every(({ k }) => fgdD[k].unallocated <= bfD[k].unallocated + 1e-12);
  console.log(`Goal (FGD ≥ 45% fewer unallocated GPUs than best-fit at 100–130% demand: ${highOk ? 'met' : 'MISSED'}, worst ${fmt(Math.max(...high.map(({ k }) => change(k))) * 100, 1)}%; no worse than best-fit at 80–90%: ${lowOk ? 'met' : 'MISSED'}).`);
}
