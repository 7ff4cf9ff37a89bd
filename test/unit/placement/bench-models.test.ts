// The simulator options and the per-GPU packing model the bench tables (a), (c) and (d) rely on.
import { policy } from '../../../placement/index.js';
import { ClusterState } from '../../../placement/index.js';
import { lbCapacity, makespanLowerBound, simulate, type SimJob } from '../../../bench/placement/sim.js';
import { fullEngine } from '../../../bench/placement/mixed.js';
import { gpusFor, type Node, type Task } from '../../../bench/placement/alibaba.js';
import { cpuNode, gpuNode, inventory } from '../../placement/fixtures.js';
import { HPC2N_ROWS, TABLE_V, runHpc2n } from '../../../bench/placement/hpc2n.js';

const off = { quotas: false, fairShare: false, qos: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;
const gpuJob = (id: string, submit: number, count: number, run: number, walltime = run): SimJob => ({
  req: { id, type: 'ai-training', tenant: 'u', qos: 'gold', priority: 100, submit, count, per: { cpus: 0, gpus: 1, memoryMB: 0 }, walltime, checkpointable: true },
  run,
});

describe('simulator options used by the Pollux table', () => {
  test('round-based scheduling starts jobs only on round boundaries', () => {
    const inv = inventory([gpuNode('g1')]);
    const pol = policy({ ...off, order: 'fcfs', backfill: 'none', preemption: false });
    const r = simulate(inv, [gpuJob('a', 0, 8, 100), gpuJob('b', 10, 8, 50)], pol, { tick: 60, rounds: true });
    const byId = Object.fromEntries(r.outcomes.map((o) => [o.id, o]));
    expect(byId.a.firstStart).toBe(0);
    // a ends at 100; b may start only at the next round, 120 (event-driven it would start at 100).
    expect(byId.b.firstStart).toBe(120);
    expect(byId.b.end).toBe(170);
    const eventDriven = simulate(inv, [gpuJob('a', 0, 8, 100), gpuJob('b', 10, 8, 50)], pol, { tick: 60 });
    expect(eventDriven.outcomes.find((o) => o.id === 'b')!.firstStart).toBe(100);
  });

  test('LAS preempts a job that passed the threshold; its restart costs the restart penalty', () => {
    const inv = inventory([gpuNode('g1')]);
    const pol = policy({ ...off, order: 'las', lasThresholds: [8 * 500], preemption: true, backfill: 'easy', reservationDepth: 0 });
    // long uses 8 GPUs; after 500 s it has 4,000 GPU-s and drops to queue 1, so short (queue 0) preempts it.
    const r = simulate(inv, [gpuJob('long', 0, 8, 2000), gpuJob('short', 600, 8, 100)], pol, { tick: 60, restartPenalty: 30 });
    const byId = Object.fromEntries(r.outcomes.map((o) => [o.id, o]));
    expect(byId.long.preemptions).toBe(1);
    expect(byId.short.firstStart).toBe(600);
    expect(byId.short.end).toBe(700);
    // 600 s done before the preemption, 1,400 s left + 30 s restart, from 700.
    expect(byId.long.end).toBe(700 + 1400 + 30);
  });
});

describe('per-GPU fractional model of the Alibaba table', () => {
  const node = (gpus: number[]): Node => ({ cpu: 64000, mem: 262144, model: 'T4', gpu: Int32Array.from(gpus), freeCpu: 64000, freeMem: 262144 });
  const task = (over: Partial<Task>): Task => ({ cpu: 1000, mem: 1024, numGpu: 1, milli: 1000, spec: [], ...over });

  test('a shared-GPU task must fit inside one GPU, not in the node total', () => {
    // 400 + 400 milli free in total, but no single GPU has 600.
    expect(gpusFor(node([400, 400]), task({ milli: 600 }), 'best')).toBeUndefined();
    expect(gpusFor(node([400, 700, 650]), task({ milli: 600 }), 'best')).toEqual([2]); // tightest GPU that fits
    expect(gpusFor(node([400, 700, 650]), task({ milli: 600 }), 'first')).toEqual([1]);
  });

  test('whole-GPU tasks need fully free GPUs; model constraints and CPU are honoured', () => {
    expect(gpusFor(node([1000, 999, 1000]), task({ numGpu: 2 }), 'best')).toEqual([0, 2]);
    expect(gpusFor(node([1000, 999, 1000]), task({ numGpu: 3 }), 'best')).toBeUndefined();
    expect(gpusFor(node([1000]), task({ spec: ['V100M16'] }), 'best')).toBeUndefined();
    expect(gpusFor(node([1000]), task({ cpu: 64001 }), 'best')).toBeUndefined();
    expect(gpusFor(node([]), task({ numGpu: 0, milli: 0 }), 'best')).toEqual([]);
  });
});

describe('the HPC2N table (a) against RLScheduler Table V', () => {
  const cpuJob = (id: string, submit: number, count: number, run: number): SimJob => ({ req: { id, type: 'hpc-mpi', tenant: 'u', qos: 'gold', priority: 100, submit, count, per: { cpus: 1, gpus: 0, memoryMB: 0 }, walltime: run }, run });
  const start = (r: ReturnType<typeof simulate>, id: string) => r.outcomes.find((o) => o.id === id)!.firstStart;

  test("HPCSim's loop: a picked job waits for room and shorter arrivals do not overtake it; the engine's SJF re-sorts", () => {
    const inv = inventory([cpuNode('c1'), cpuNode('c2')]);
    const jobs = [cpuJob('b', 0, 1, 100), cpuJob('a', 1, 2, 10), cpuJob('c', 2, 1, 5)];
    const sjf = policy({ ...off, preemption: false, topology: false, order: 'sjf', backfill: 'none' });
    const hpcsim = simulate(inv, jobs, sjf, { hpcsimLoop: true });
    expect([start(hpcsim, 'a'), start(hpcsim, 'c')]).toEqual([100, 110]);
    const engine = simulate(inv, jobs, sjf);
    expect([start(engine, 'c'), start(engine, 'a')]).toEqual([2, 100]);
  });

  test('FCFS and FCFS + EASY on the real trace land within ±10% of Table V (297.18, 127.38)', () => {
    const rows = runHpc2n(HPC2N_ROWS.filter((r) => r.name in TABLE_V && r.name.startsWith('FCFS')));
    expect(rows.map((r) => r.name)).toEqual(['FCFS', 'FCFS + EASY (RLScheduler HPCSim variant)']);
    for (const r of rows) expect(Math.abs(r.bsld / TABLE_V[r.name] - 1)).toBeLessThan(0.1);
  }, 60_000);
});

describe('makespan / JCT lower bounds and busy-period utilisation', () => {
  const fcfs = policy({ ...off, order: 'fcfs', backfill: 'none', preemption: false });
  const one = inventory([gpuNode('g1')]); // 8 GPUs

  test('two jobs with a gap: utilisation over the busy period, not the span; the bound sees the late arrival', () => {
    // a runs [0, 100), b arrives at 300 and runs [300, 400): busy 200 s of a 400 s span.
    const r = simulate(one, [gpuJob('a', 0, 8, 100), gpuJob('b', 300, 8, 100)], fcfs);
    expect(r.makespan).toBe(400);
    expect(r.busy).toBe(200);
    expect(r.utilGpu).toBeCloseTo(1600 / (8 * 200)); // 1.0; over the span it would be 0.5
    // Old bound: max(1,600 GPU-s / 8 GPUs, longest 100) = 200; b cannot end before 300 + 100.
    expect(r.lowerBound).toBe(400);
    expect(r.jctLowerBound).toBe(100);
    expect(r.avgJct).toBe(100);
  });

  test('overlapping runs count once in the busy time', () => {
    // 4 + 4 GPUs: a [0, 100), b [50, 150); c (8 GPUs) [400, 500). Busy: [0, 150) ∪ [400, 500) = 250 s.
    const r = simulate(one, [gpuJob('a', 0, 4, 100), gpuJob('b', 50, 4, 100), gpuJob('c', 400, 8, 100)], fcfs);
    expect(r.makespan).toBe(500);
    expect(r.busy).toBe(250);
    expect(r.utilGpu).toBeCloseTo(1600 / (8 * 250)); // 0.8; 0.4 over the span
    expect(r.lowerBound).toBe(500); // c: 400 + 100 (old: max(200, 100) = 200)
    expect(r.jctLowerBound).toBe(100);
  });

  test('work that arrives late bounds the makespan from its arrival on', () => {
    // a (8 GPUs, 10 s) at 0; b and c (8 GPUs, 50 s each) at 100: they run back to back, [100, 200).
    const jobs = [gpuJob('a', 0, 8, 10), gpuJob('b', 100, 8, 50), gpuJob('c', 100, 8, 50)];
    const r = simulate(one, jobs, fcfs);
    expect(r.makespan).toBe(200);
    // Old: max(880 / 8 = 110, 50) = 110; per job: 100 + 50 = 150; work from t = 100 on: 100 + 800 / 8 = 200.
    expect(r.lowerBound).toBe(200);
    expect(makespanLowerBound([{ submit: 0, run: 10, cpus: 0, gpus: 8 }, { submit: 100, run: 50, cpus: 0, gpus: 8 }], { cpus: 64, gpus: 8 })).toBe(150);
    expect(makespanLowerBound([{ submit: 5, run: 10, cpus: 32, gpus: 0 }, { submit: 5, run: 10, cpus: 32, gpus: 0 }], { cpus: 32, gpus: 8 })).toBe(20);
    expect(makespanLowerBound([], { cpus: 1, gpus: 1 })).toBe(0);
  });

  test('the bound counts oversubscribed capacity only where the policy oversubscribes', () => {
    const s = new ClusterState(inventory([gpuNode('g1')], { oversubscription: { cpu: 1.5, gpu: 1.25 } }));
    expect(lbCapacity(s, { oversubscription: false })).toEqual({ cpus: 64, gpus: 8 });
    expect(lbCapacity(s, { oversubscription: true })).toEqual({ cpus: 96, gpus: 10 });
  });

  test('rejected jobs are counted, by reason, and left out of the averages and bounds', () => {
    const r = simulate(one, [gpuJob('a', 0, 8, 100), gpuJob('big', 0, 16, 1000)], policy({ ...off, order: 'fcfs', backfill: 'easy', preemption: false }));
    expect(r.rejected).toEqual(['big']);
    expect(r.rejectReasons).toEqual({ 'too-large': 1 });
    expect(r.outcomes.map((o) => o.id)).toEqual(['a']);
    expect([r.avgJct, r.jctLowerBound, r.lowerBound]).toEqual([100, 100, 100]);
  });
});

describe("table (b)'s full-engine row", () => {
  test('tenant weights come from the static split, quotas keep cores for every GPU', () => {
    const hpc: SimJob = { req: { id: 'hpc-1', type: 'hpc-mpi', tenant: 'hpc', qos: 'silver', priority: 100, submit: 0, count: 4, per: { cpus: 1, gpus: 0, memoryMB: 0 }, walltime: 10 }, run: 10 };
    const ai: SimJob = { req: { id: 'ai-1', type: 'ai-training', tenant: 'ai', qos: 'silver', priority: 100, submit: 0, count: 8, per: { cpus: 2, gpus: 1, memoryMB: 0 }, walltime: 10, checkpointable: true }, run: 10 };
    const f = fullEngine([hpc], [ai]);
    // Shared: 240 + 16 × 32 = 752 cores, 128 GPUs. Split: hpc 240 cores (240/752), ai 512 cores + 128 GPUs (GPU share 1).
    expect(f.tenants.map((t) => t.name)).toEqual(['hpc', 'ai']);
    expect(f.tenants[0].weight).toBeCloseTo(240 / 752);
    expect(f.tenants[1].weight).toBe(1);
    // ai: 2 CPUs per GPU × 128 GPUs = 256 cores; hpc: the other 496, no GPU.
    expect(f.tenants[0].quota).toEqual({ cpus: 496, gpus: 0 });
    expect(f.tenants[1].quota).toEqual({ cpus: 256, gpus: 128 });
    expect(f.jobs.map((j) => j.req.qos)).toEqual(['gold', 'silver']);
    const pol = f.pol;
    expect([pol.quotas, pol.fairShare, pol.qos, pol.preemption, pol.oversubscription, pol.topology, pol.backfill, pol.order]).toEqual([true, true, true, true, true, true, 'easy', 'score']);
    expect(f.inv.sites[0].clusters[0].partitions.every((p) => p.oversubscription !== undefined)).toBe(true);
  });
});
