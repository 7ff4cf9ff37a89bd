// The default 'score' queue order (Smith's rule for bounded slowdown on requested times, weighted by
// fair share) and the F1 / SAF baselines, on small cases whose order is known.
import { ClusterState, policy, schedule, type JobRequest } from '../../../placement/index.js';
import { f1Key, queueOrder, scoreKey, shareWeight } from '../../../placement/policies.js';
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

describe('F1 baseline', () => {
  test('log10(walltime) × cores + 870 × log10(submit), smallest first', () => {
    expect(f1Key(cpu('a', 4, 1000, { submit: 100 }))).toBeCloseTo(3 * 4 + 870 * 2);
    const s = cluster();
    // Same submit: the narrow long job (1 × 4 = 4) before the wide short one (8 × 2 = 16).
    expect(order(s, [cpu('wide', 8, 100, { submit: 10 }), cpu('narrow', 1, 10_000, { submit: 10 })], policy({ ...off, order: 'f1' }))).toEqual(['narrow', 'wide']);
  });
});
