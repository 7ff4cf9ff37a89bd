// The simulator options and the per-GPU packing model the bench tables (a), (c) and (d) rely on.
import { policy } from '../../placement/index.js';
import { simulate, type SimJob } from '../../bench/placement/sim.js';
import { gpusFor, type Node, type Task } from '../../bench/placement/alibaba.js';
import { cpuNode, gpuNode, inventory } from './fixtures.js';
import { HPC2N_ROWS, TABLE_V, runHpc2n } from '../../bench/placement/hpc2n.js';

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
