// Energy and carbon (placement/energy.ts): the carbon-intensity file parser, the simulator's kWh and
// kg CO2 on traces small enough to check by hand, and the carbon-aware hold (never past maxDelay, a
// no-op on a flat series, EASY backfill around held jobs).
import { ClusterState, DEFAULT_POWER, carbonHold, intensityAt, intensityIntegral, nodePower, policy, schedule, type CarbonSeries, type JobRequest, type PolicyConfig } from '../../../placement/index.js';
import { simulate, type SimJob } from '../../../placement/simulate.js';
import { alignSeries, parseCarbonCsv } from '../../../cli/carbon.js';
import { runSimulation } from '../../../cli/simulate.js';
import { InputError } from '../../../contract/input-error.js';
import { mulberry32 } from '../../../programs/rng.js';
import { cpuNode, inventory, job } from '../../placement/fixtures.js';

const off = { quotas: false, fairShare: false, qos: false, preemption: false, topology: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;
const fcfs = policy({ ...off, order: 'fcfs', backfill: 'easy' });
const cpu = (id: string, cpus: number, walltime: number, over: Partial<JobRequest> = {}): JobRequest => job({ id, type: 'hpc-mpi', count: 1, per: { cpus, gpus: 0, memoryMB: 0 }, walltime, ...over });

describe('carbon-intensity CSV', () => {
  test('header, comments, ISO times with a zone and epoch seconds; piecewise constant, repeating when aligned', () => {
    const s = parseCarbonCsv('# synthetic\ntimestamp,gCO2_per_kWh\n2024-03-04T00:00:00Z,100\n2024-03-04T01:00:00+00:00,300\n1709517600,200\n');
    expect(s).toEqual({ t: [1709510400, 1709514000, 1709517600], g: [100, 300, 200] });
    const a = alignSeries(s);
    expect(a).toEqual({ t: [0, 3600, 7200], g: [100, 300, 200], period: 3 * 3600 });
    expect([intensityAt(a, 0), intensityAt(a, 3599), intensityAt(a, 3600), intensityAt(a, 7200), intensityAt(a, 10_800), intensityAt(a, 14_400)]).toEqual([100, 100, 300, 200, 100, 300]);
    // One period: 3600 × (100 + 300 + 200); half an hour into the next.
    expect(intensityIntegral(a, 0, 3 * 3600)).toBe(3600 * 600);
    expect(intensityIntegral(a, 1800, 3 * 3600 + 1800)).toBe(3600 * 600);
  });

  test.each([
    ['2024-03-04T00:00:00Z,100\n2024-03-04T01:00:00Z,abc', 2, 'gCO2_per_kWh: expected a number ≥ 0, got "abc"'],
    ['timestamp,g\n2024-03-04T00:00:00Z,100\n2024-03-04T01:00:00,90', 3, 'neither epoch seconds nor an ISO time with a zone'],
    ['0,100\n3600,50\n3600,40', 3, 'is not after the previous line'],
    ['0,100\n3600,-5', 2, 'expected a number ≥ 0, got "-5"'],
    ['0,100,7', 1, 'expected "timestamp,gCO2_per_kWh", got 3 field(s)'],
    ['2024-13-40T00:00:00Z,100', 1, 'is not a valid ISO time'],
  ])('a bad line is an InputError naming it: %j', (text, line, message) => {
    const e = (() => {
      try {
        parseCarbonCsv(text, 'grid.csv');
      } catch (x) {
        return x as InputError;
      }
      throw new Error('no error');
    })();
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toContain(`grid.csv:${line}:`);
    expect(e.message).toContain(message);
  });

  test('a file without data lines is an error', () => {
    expect(() => parseCarbonCsv('timestamp,gCO2_per_kWh\n# nothing\n', 'empty.csv')).toThrow(/empty\.csv: no data lines/);
  });
});

describe('energy accounting', () => {
  test('default node power: a CPU server, plus each GPU', () => {
    expect(nodePower(cpuNode('c'))).toEqual({ idleW: DEFAULT_POWER.cpuNode.idleW, busyW: DEFAULT_POWER.cpuNode.busyW });
    expect(nodePower({ id: 'g', cpus: 64, gpus: 8, memoryMB: 1 })).toEqual({ idleW: 100 + 8 * 50, busyW: 350 + 8 * 400 });
    expect(nodePower({ id: 'x', cpus: 4, gpus: 0, memoryMB: 1, idlePowerW: 80, powerW: 200 })).toEqual({ idleW: 80, busyW: 200 });
  });

  test('two jobs on two 4-CPU nodes (100 W idle, 300 W busy), intensity 100 then 300 g/kWh: exact kWh and kg CO2', () => {
    const node = (id: string) => cpuNode(id, { cpus: 4, idlePowerW: 100, powerW: 300 });
    const inv = inventory([node('n0'), node('n1')]);
    // a: a whole node for 1 h (+200 W); b: half a node for 30 min (+100 W).
    const jobs: SimJob[] = [
      { req: cpu('a', 4, 3600), run: 3600 },
      { req: cpu('b', 2, 1800), run: 1800 },
    ];
    const carbon: CarbonSeries = { t: [0, 1800], g: [100, 300] };
    const r = simulate(inv, jobs, fcfs, { energy: { carbon } });
    expect(r.makespan).toBe(3600);
    // Idle 200 W × 1 h = 0.2 kWh; a 200 W × 1 h = 0.2 kWh; b 100 W × 0.5 h = 0.05 kWh.
    expect(r.energy!.kWh).toBeCloseTo(0.45, 12);
    expect(r.energy!.jobKWh).toBeCloseTo(0.25, 12);
    // Idle and a: 0.1 kWh at 100 g + 0.1 kWh at 300 g = 40 g each; b: 0.05 kWh at 100 g = 5 g.
    expect(r.energy!.kgCO2).toBeCloseTo(0.085, 12);
    expect(r.energy!.jobKgCO2).toBeCloseTo(0.045, 12);
    expect(r.energy!.idleW).toBe(200);
    // Without the option nothing else moves: the same outcomes as a run without energy accounting.
    expect(r.outcomes).toEqual(simulate(inv, jobs, fcfs).outcomes);
    expect(simulate(inv, jobs, fcfs).energy).toBeUndefined();
  });

  test('down nodes draw nothing', () => {
    const r = simulate(inventory([cpuNode('n0', { idlePowerW: 10, powerW: 20 }), cpuNode('n1', { idlePowerW: 10, powerW: 20, down: true })]), [{ req: cpu('a', 1, 3600), run: 3600 }], fcfs, { energy: {} });
    expect(r.energy!.kWh).toBeCloseTo(0.02, 12);
    expect(r.energy!.kgCO2).toBe(0);
  });
});

// Falls 20 g every 15 min for 10 h, from 1000: a later start is always cleaner.
const falling: CarbonSeries = { t: Array.from({ length: 41 }, (_, k) => k * 900), g: Array.from({ length: 41 }, (_, k) => 1000 - 20 * k) };
const aware = (series: CarbonSeries, maxDelay: number, extra: Partial<NonNullable<PolicyConfig['carbonAware']>> = {}): PolicyConfig => ({ ...fcfs, carbonAware: { series, maxDelay, minGain: 0.01, jobs: 'all', ...extra } });

describe('the carbon-aware option', () => {
  test('on a roomy cluster every flexible job is held to exactly its maxDelay on a falling series, never longer', () => {
    const inv = inventory(Array.from({ length: 64 }, (_, i) => cpuNode(`c${i}`)));
    const rnd = mulberry32(7);
    // Walltime = the series' step, so every later start within a step is strictly cleaner (with a
    // shorter one, starts inside one step tie and the earliest is taken: held less than maxDelay).
    const jobs: SimJob[] = Array.from({ length: 40 }, (_, k) => ({ req: cpu(`j${k}`, 1, 900, { submit: Math.floor(rnd() * 7200) }), run: 300 + Math.floor(rnd() * 600) }));
    // minGain 0: any gain holds (with 1%, a job re-examined within the last ~5 min of its window starts).
    const r = simulate(inv, jobs, aware(falling, 3600, { minGain: 0 }));
    expect(r.outcomes).toHaveLength(40);
    for (const o of r.outcomes) expect(o.firstStart - o.submit).toBe(3600);
    const plain = simulate(inv, jobs, fcfs);
    for (const o of plain.outcomes) expect(o.firstStart).toBe(o.submit);
    expect(r.energy).toBeUndefined();
  });

  test('carbonHold never holds past submit + maxDelay (nor slack × walltime), on random series and times', () => {
    const rnd = mulberry32(11);
    for (let k = 0; k < 500; k++) {
      const n = 1 + Math.floor(rnd() * 30);
      const series: CarbonSeries = { t: Array.from({ length: n }, (_, i) => i * 1800), g: Array.from({ length: n }, () => Math.floor(rnd() * 800)), ...(rnd() < 0.5 && { period: n * 1800 }) };
      const maxDelay = Math.floor(rnd() * 20_000);
      const slack = rnd() < 0.5 ? rnd() * 2 : undefined;
      const j = cpu('x', 1, 1 + Math.floor(rnd() * 20_000), { submit: Math.floor(rnd() * 50_000) });
      const now = j.submit + Math.floor(rnd() * 25_000);
      const h = carbonHold({ series, maxDelay, slack, jobs: 'all', minGain: rnd() * 0.2 }, j, now);
      if (!h) continue;
      expect(h.until).toBeGreaterThan(now);
      expect(h.until).toBeLessThanOrEqual(j.submit + Math.min(maxDelay, slack !== undefined ? slack * j.walltime : Infinity));
      expect(h.thenG).toBeLessThan(h.nowG);
    }
  });

  test('a flat series changes nothing', () => {
    const inv = inventory(Array.from({ length: 8 }, (_, i) => cpuNode(`c${i}`)));
    const rnd = mulberry32(3);
    const jobs: SimJob[] = Array.from({ length: 60 }, (_, k) => ({ req: cpu(`j${k}`, 1 + Math.floor(rnd() * 8), 100 + Math.floor(rnd() * 5000), { submit: Math.floor(rnd() * 20_000) }), run: 50 + Math.floor(rnd() * 4000) }));
    const flat: CarbonSeries = { t: [0, 3600, 7200], g: [400, 400, 400], period: 10_800 };
    const carbon = { energy: { carbon: flat } };
    expect(simulate(inv, jobs, aware(flat, 12 * 3600), carbon)).toEqual(simulate(inv, jobs, fcfs, carbon));
  });

  test('held jobs take no reservation: others start around them; deadline-bound and (by default) not delay-tolerant jobs are never held', () => {
    const s = new ClusterState(inventory([cpuNode('c0', { cpus: 4 }), cpuNode('c1', { cpus: 4 })]));
    const q = [cpu('flex', 4, 600, { delayTolerant: true }), cpu('rigid', 2, 600), cpu('due', 1, 600, { delayTolerant: true, deadline: 10_000 })];
    const ds = schedule(s, q, 0, { ...fcfs, carbonAware: { series: falling, maxDelay: 3600, minGain: 0.01 } });
    const flex = ds.find((d) => d.jobId === 'flex')!;
    expect(flex).toMatchObject({ kind: 'reserve', reason: 'carbon', at: 3600 });
    expect(flex.explanation).toMatch(/held for a cleaner start in 1 h: .* 920 instead of 1000 gCO2\/kWh now/);
    expect(ds.filter((d) => d.kind === 'start').map((d) => d.jobId).sort()).toEqual(['due', 'rigid']);
    // At its limit it starts (room permitting).
    const s2 = new ClusterState(inventory([cpuNode('c0', { cpus: 4 })]));
    expect(schedule(s2, [q[0]], 3600, { ...fcfs, carbonAware: { series: falling, maxDelay: 3600, minGain: 0.01 } })[0]).toMatchObject({ kind: 'start', jobId: 'flex' });
  });
});

describe('tandem simulate --carbon', () => {
  const swf = (rows: number[][]) => ['; MaxNodes: 4', '; MaxProcs: 4', ...rows.map((r) => [r[0], r[1], 0, r[2], r[3], -1, -1, r[3], r[4], -1, 1, 1, -1, -1, -1, -1, -1, -1].join(' '))].join('\n');
  const trace = { jobs: [], maxProcs: 4, maxNodes: 4 };
  test('kg CO2 per policy and a "-carbon" twin of a policy; "-carbon" without a series is an error', async () => {
    const { parseSwf } = await import('../../../cli/trace.js');
    const t = parseSwf(swf([[1, 0, 1200, 1, 1800], [2, 60, 600, 2, 900], [3, 120, 300, 4, 600]]));
    const series = '0,900\n1800,100\n';
    const { outcomes } = runSimulation(t, { policies: ['default', 'default-carbon'], from: 0, jobs: 10, carbon: 'grid.csv', carbonMaxDelay: 3600, carbonSlack: 4 }, series);
    expect(outcomes.map((o) => o.name)).toEqual(['default', 'default-carbon']);
    const [plain, green] = outcomes.map((o) => o.res.energy!);
    expect(green.jobKgCO2).toBeLessThan(plain.jobKgCO2);
    expect(outcomes[1].label).toMatch(/carbon-aware/);
    expect(() => runSimulation({ ...trace, jobs: t.jobs }, { policies: ['default-carbon'], from: 0, jobs: 10 })).toThrow(/needs --carbon FILE/);
    expect(() => runSimulation(t, { policies: ['default'], from: 0, jobs: 10, carbon: 'bad.csv' }, '0,100\nx,1\n')).toThrow(/bad\.csv:2: timestamp/);
  });
});
