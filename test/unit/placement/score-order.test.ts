// The default 'score' queue order (Smith's rule for bounded slowdown on requested times, weighted by
// fair share) and the F1 / SAF baselines, on small cases whose order is known.
import { ClusterState, DEFAULT_POLICY, policy, schedule, type JobRequest } from '../../../placement/index.js';
import { ageKey, f1Key, queueOrder, scoreKey, shareWeight } from '../../../placement/policies.js';
import { cpuNode, inventory, job } from '../../placement/fixtures.js';

const off = { quotas: false, fairShare: false, qos: false, preemption: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;
// 16 one-CPU nodes; CPU jobs of `count` CPUs.
const cluster = () => new ClusterState(inventory(Array.from({ length: 16 }, (_, i) => cpuNode(`c${i}`))));
const cpu = (id: string, count: number, walltime: number, over: Partial<JobRequest> = {}) => job({ id, type: 'hpc-mpi', count, walltime, per: { cpus: 1, gpus: 0, memoryMB: 0 }, ...over });
const order = (s: ClusterState, q: JobRequest[], pol = policy({ ...off, order: 'score' }), now = 0) => [...queueOrder(s, pol, q, now)].map((j) => j.id);

describe("'score': requested size × walltime², smallest first", () => {
  test('width counts once, walltime twice: SJF and SAF order these differently', () => {
    const s = cluster();
    // keys (size = CPUs / 16): wide 8/16 × 100² = 5,000; long 1/16 × 400² = 10,000; mid 2/16 × 150² = 2,812.5
    const q = [cpu('wide', 8, 100), cpu('long', 1, 400), cpu('mid', 2, 150)];
    expect(order(s, q)).toEqual(['mid', 'wide', 'long']);
    expect(order(s, q, policy({ ...off, order: 'sjf' }))).toEqual(['wide', 'mid', 'long']);
    // SAF: areas 800, 400, 300.
    expect(order(s, q, policy({ ...off, order: 'saf' }))).toEqual(['mid', 'long', 'wide']);
    const total = { cpus: 16, gpus: 0, mem: s.totalMem };
    expect(scoreKey(q[0], total)).toBeCloseTo(5000);
    expect(scoreKey(q[2], total)).toBeCloseTo(2812.5);
  });

  test('requests below τ = 10 s count as 10 s; equal keys go first come, first served', () => {
    const s = cluster();
    expect(order(s, [cpu('b', 1, 5, { submit: 2 }), cpu('a', 1, 10, { submit: 1 }), cpu('c', 1, 1, { submit: 3 })])).toEqual(['a', 'b', 'c']);
  });

  test('with one tenant, fair share changes nothing', () => {
    const s = cluster();
    schedule(s, [cpu('run', 10, 1000)], 0, policy({ ...off, order: 'fcfs' }));
    const q = [cpu('x', 4, 300), cpu('y', 1, 900), cpu('z', 2, 200)];
    expect(order(s, q, policy({ ...off, order: 'score', fairShare: true }))).toEqual(order(s, q));
  });

  test('fair share: a heavy tenant needs a proportionally smaller key to go before a light one', () => {
    expect([shareWeight(0, 0.5), shareWeight(0.5, 0.5), shareWeight(1, 0.5)]).toEqual([1, 2, 3]);
    const s = cluster();
    const pol = policy({ ...off, order: 'score', fairShare: true, tenants: [{ name: 'heavy' }, { name: 'light' }] });
    schedule(s, [cpu('h-run', 8, 10_000, { tenant: 'heavy' })], 0, pol);
    // heavy holds 8/16 at a share of 1/2: weight 2. Its 100 s job (key 1/16 × 100² = 625 → 1,250)
    // goes after light's 120 s job (900) but before light's 200 s job (2,500).
    const q = [cpu('h', 1, 100, { tenant: 'heavy' }), cpu('l1', 1, 120, { tenant: 'light' }), cpu('l2', 1, 200, { tenant: 'light' })];
    expect(order(s, q, pol)).toEqual(['l1', 'h', 'l2']);
    expect(order(s, q, policy({ ...pol, fairShare: false }))).toEqual(['h', 'l1', 'l2']);
  });

  test('urgent and higher-priority work still goes first', () => {
    const s = cluster();
    expect(order(s, [cpu('small', 1, 10), cpu('vip', 16, 10_000, { priority: 200 })])).toEqual(['vip', 'small']);
  });
});

describe("'score' starvation bound: the key is divided by e per PolicyConfig.starvation of waiting", () => {
  // A full-machine 10 h job (key 1 × 36,000² = 1.296e9) submitted at 0 against a 12-CPU 1,000 s job
  // (key 12/16 × 1,000² = 7.5e5) that has just arrived: the wide job goes first once its lead in wait,
  // its own wait here, passes ln(1.296e9 / 7.5e5) = ln 1,728 times the starvation setting (60 h: ~447 h).
  const T = 60 * 3600;
  const cross = Math.log(1728) * T;
  const wide = () => cpu('wide', 16, 36_000, { submit: 0 });
  const mid = (now: number) => cpu('mid', 12, 1000, { submit: now });

  test('off by default (plain Smith order); a setting divides the key by e per its length of waiting', () => {
    expect(DEFAULT_POLICY.starvation).toBe(0);
    expect(ageKey(Math.E, T, T)).toBeCloseTo(0);
    // Off: the plain key, so the order is exactly Smith's rule's.
    expect(ageKey(10, 1e9, 0)).toBe(10);
  });

  test('a long wide job goes ahead of a newly arrived smaller one after the bound, not before', () => {
    const s = cluster();
    const pol = policy({ ...off, order: 'score', starvation: T });
    for (const now of [0, cross / 2, cross - 3600]) expect(order(s, [wide(), mid(now)], pol, now)).toEqual(['mid', 'wide']);
    for (const now of [cross + 3600, 2 * cross]) expect(order(s, [wide(), mid(now)], pol, now)).toEqual(['wide', 'mid']);
    // Without aging Smith's rule keeps it last however long it waits.
    expect(order(s, [wide(), mid(2 * cross)], policy({ ...off, order: 'score', starvation: 0 }), 2 * cross)).toEqual(['mid', 'wide']);
  });

  test('after the bound, EASY gives the starving job the reservation', () => {
    const reserved = (now: number, starvation = T) => {
      const s = cluster();
      const pol = policy({ ...off, order: 'score', backfill: 'easy', starvation });
      // Half the machine is busy until now + 5,000 s: neither job fits; EASY reserves for the first.
      schedule(s, [cpu('run', 8, 5000, { submit: now })], now, pol);
      return schedule(s, [wide(), mid(now)], now, pol)
        .filter((d) => d.kind === 'reserve')
        .map((d) => d.jobId);
    };
    expect(reserved(cross - 3600)).toEqual(['mid']);
    expect(reserved(cross + 3600)).toEqual(['wide']);
    expect(reserved(cross + 3600, 0)).toEqual(['mid']);
  });

  test('with fair share between tenants, too', () => {
    const s = cluster();
    const pol = policy({ ...off, order: 'score', fairShare: true, starvation: T, tenants: [{ name: 'a' }, { name: 'b' }] });
    const q = (now: number) => [cpu('wide', 16, 36_000, { submit: 0, tenant: 'a' }), cpu('mid', 12, 1000, { submit: now, tenant: 'b' })];
    expect(order(s, q(cross - 3600), pol, cross - 3600)).toEqual(['mid', 'wide']);
    expect(order(s, q(cross + 3600), pol, cross + 3600)).toEqual(['wide', 'mid']);
  });

  test('two waiting jobs never swap as time passes: only arrivals reorder the queue', () => {
    const s = cluster();
    const pol = policy({ ...off, order: 'score', starvation: T });
    const q = [cpu('wide', 16, 36_000, { submit: 0 }), cpu('mid', 12, 1000, { submit: 100_000 }), cpu('small', 1, 100, { submit: 400_000 })];
    const first = order(s, q, pol, 400_000);
    for (const now of [500_000, 2e6, 1e7]) expect(order(s, q, pol, now)).toEqual(first);
  });
});

describe('F1 baseline', () => {
  test('log10(walltime) × cores + 870 × log10(submit), smallest first', () => {
    expect(f1Key(cpu('a', 4, 1000, { submit: 100 }))).toBeCloseTo(3 * 4 + 870 * 2);
    const s = cluster();
    // Same submit: the narrow long job (1 × 4 = 4) before the wide short one (8 × 2 = 16).
    expect(order(s, [cpu('wide', 8, 100, { submit: 10 }), cpu('narrow', 1, 10_000, { submit: 10 })], policy({ ...off, order: 'f1' }))).toEqual(['narrow', 'wide']);
  });
});
