// Every policy on a small hand-built case whose right answer is known.
import { ClusterState, decide, policy, schedule, type Decision, type JobRequest, type QosClass } from '../../../placement/index.js';
import { reserve } from '../../../placement/reserve.js';
import { cpuNode, gpuNode, inventory, job } from '../../placement/fixtures.js';

const off = { quotas: false, fairShare: false, qos: false, preemption: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;
const kinds = (ds: Decision[]) => Object.fromEntries(ds.map((d) => [d.jobId, d.kind]));
const nodesOf = (d: Decision) => ('placement' in d && d.placement ? d.placement.nodes.map((n) => n.node) : []);

describe('quotas and QoS', () => {
  test('a tenant quota is never exceeded; the job over it is held with a reservation, one beyond it rejected', () => {
    const s = new ClusterState(inventory([gpuNode('g1'), gpuNode('g2')]));
    const pol = policy({ ...off, quotas: true, order: 'fcfs', tenants: [{ name: 'a', quota: { gpus: 8 } }] });
    const q = [job({ id: 'q1', count: 4, submit: 1 }), job({ id: 'q2', count: 4, submit: 2 }), job({ id: 'q3', count: 4, submit: 3 }), job({ id: 'q4', count: 9, submit: 4 })];
    const ds = schedule(s, q, 0, pol);
    expect(kinds(ds)).toEqual({ q1: 'start', q2: 'start', q3: 'reserve', q4: 'reject' });
    expect(ds.find((d) => d.jobId === 'q3')).toMatchObject({ reason: 'quota', at: 3600 });
    expect(s.usage('a').gpus).toBe(8);
  });

  test('gold guarantee: a tenant below its guarantee reclaims capacity borrowed by another tenant (equal priority)', () => {
    const s = new ClusterState(inventory([gpuNode('g1'), gpuNode('g2')]));
    const pol = policy({ ...off, qos: true, preemption: true, order: 'fcfs', tenants: [{ name: 'a' }, { name: 'b' }] });
    // Tenant b (gold, burst 120% of its 8-GPU entitlement) borrows 9 GPUs while a is idle.
    const borrowed = Array.from({ length: 10 }, (_, k) => job({ id: `b${k}`, tenant: 'b', qos: 'gold', submit: k }));
    const first = schedule(s, borrowed, 0, pol);
    expect(first.filter((d) => d.kind === 'start')).toHaveLength(9); // the 10th would pass 120%
    expect(first.find((d) => d.jobId === 'b9')).toMatchObject({ kind: 'reserve', reason: 'qos-burst' });
    // a asks for its full entitlement: 7 GPUs are free, so exactly one borrowed job must go.
    const ds = schedule(s, [job({ id: 'a1', tenant: 'a', qos: 'gold', count: 8, submit: 20 })], 100, pol);
    expect(ds).toHaveLength(1);
    expect(ds[0]).toMatchObject({ kind: 'preempt', victims: [expect.stringMatching(/^b/)] });
    expect(ds[0].explanation).toMatch(/gold guarantee of tenant a/);
    expect(s.usage('a').gpus).toBe(8);
    expect(s.usage('b').gpus).toBe(8);
  });

  test('without the guarantee, equal priority never preempts', () => {
    const s = new ClusterState(inventory([gpuNode('g1')]));
    const pol = policy({ ...off, preemption: true, order: 'fcfs' });
    schedule(s, [job({ id: 'x', count: 8 })], 0, pol);
    expect(schedule(s, [job({ id: 'y', count: 1, submit: 1 })], 10, pol)[0].kind).toBe('reserve');
  });
});

describe('backfill', () => {
  // Four single-CPU nodes; r0 holds two of them until t=100 by its estimate.
  function setup(extra = {}) {
    const s = new ClusterState(inventory(['n1', 'n2', 'n3', 'n4'].map((id) => cpuNode(id))));
    const pol = policy({ ...off, order: 'fcfs', backfill: 'easy', topology: false, ...extra });
    schedule(s, [job({ id: 'r0', type: 'hpc-mpi', count: 2, per: { cpus: 1, gpus: 0, memoryMB: 0 }, walltime: 100 })], 0, pol);
    return { s, pol };
  }
  const mpi = (id: string, count: number, walltime: number, submit: number) => job({ id, type: 'hpc-mpi', count, per: { cpus: 1, gpus: 0, memoryMB: 0 }, walltime, submit });

  test('EASY: a short job backfills, a long one that would delay the reserved head waits', () => {
    const { s, pol } = setup();
    const ds = schedule(s, [mpi('head', 4, 100, 1), mpi('long', 1, 500, 2), mpi('short', 2, 50, 3)], 0, pol);
    expect(kinds(ds)).toEqual({ head: 'reserve', short: 'start' });
    expect(ds.find((d) => d.jobId === 'head')).toMatchObject({ at: 100 });
    expect(ds.find((d) => d.jobId === 'short')).toMatchObject({ backfilled: true });
    // The head's reservation, recomputed after backfilling, is not later.
    expect(reserve(s, mpi('head', 4, 100, 1), 0, pol, [])!.at).toBe(100);
  });

  test('EASY extra nodes: a long job may take a node the reserved head does not need; shadow-only may not', () => {
    const q = () => [mpi('head', 3, 100, 1), mpi('long', 1, 500, 2)];
    const easy = setup();
    expect(kinds(schedule(easy.s, q(), 0, easy.pol))).toEqual({ head: 'reserve', long: 'start' });
    expect(reserve(easy.s, mpi('head', 3, 100, 1), 0, easy.pol, [])!.at).toBe(100);
    const shadow = setup({ backfillExtraNodes: false });
    expect(kinds(schedule(shadow.s, q(), 0, shadow.pol))).toEqual({ head: 'reserve' });
  });

  test('no backfill: nothing passes the blocked head', () => {
    const { s, pol } = setup({ backfill: 'none' });
    expect(kinds(schedule(s, [mpi('head', 4, 100, 1), mpi('short', 1, 10, 2)], 0, pol))).toEqual({ head: 'reserve' });
  });

  test('conservative: every blocked job gets a reservation and a backfill must respect all of them', () => {
    const { s, pol } = setup({ backfill: 'conservative' });
    const ds = schedule(s, [mpi('head', 4, 100, 1), mpi('second', 3, 100, 2), mpi('mid', 2, 150, 3)], 0, pol);
    expect(kinds(ds)).toEqual({ head: 'reserve', second: 'reserve', mid: 'reserve' });
    expect(ds.map((d) => (d.kind === 'reserve' ? d.at : -1))).toEqual([100, 200, 300]); // mid cannot overlap head (all 4 nodes) and does not fit beside second
  });
});

describe('preemption', () => {
  const busy = () => {
    const s = new ClusterState(inventory([gpuNode('g1')]));
    const pol = policy({ ...off, preemption: true, order: 'priority' });
    schedule(s, [job({ id: 'A', count: 4, priority: 10 }), job({ id: 'B', count: 2, priority: 10, checkpointable: true }), job({ id: 'C', count: 2, priority: 10, checkpointable: true })], 0, pol);
    return { s, pol };
  };

  test('the fewest victims win: one job rather than two', () => {
    const { s, pol } = busy();
    const ds = schedule(s, [job({ id: 'hi', count: 4, priority: 50 })], 1000, pol);
    expect(ds[0]).toMatchObject({ kind: 'preempt', victims: ['A'] });
  });

  test('among equally many victims, checkpointable first, then the least lost work', () => {
    const { s, pol } = busy();
    expect(schedule(s, [job({ id: 'hi', count: 2, priority: 50 })], 1000, pol)[0]).toMatchObject({ kind: 'preempt', victims: ['B'] });
    const s2 = new ClusterState(inventory([gpuNode('g1')]));
    schedule(s2, [job({ id: 'old', count: 4, priority: 10 })], 0, pol);
    schedule(s2, [job({ id: 'young', count: 4, priority: 10 })], 900, pol);
    expect(schedule(s2, [job({ id: 'hi', count: 4, priority: 50 })], 1000, pol)[0]).toMatchObject({ victims: ['young'] });
  });

  test('lower or equal priority never preempts', () => {
    const { s, pol } = busy();
    expect(schedule(s, [job({ id: 'lo', count: 2, priority: 10 })], 1000, pol)[0].kind).toBe('reserve');
  });
});

describe('topology, thermal, oversubscription, cost, deadlines', () => {
  test('an 8-GPU needsNvlink job stays inside one NVLink domain, topology-aware or first-fit; without the flag first-fit splits it', () => {
    const inv = inventory([gpuNode('g1'), gpuNode('g2')]);
    for (const topology of [true, false]) {
      const s = new ClusterState(inv);
      const pol = policy({ ...off, topology, order: 'fcfs' });
      schedule(s, [job({ id: 'half', count: 4 })], 0, pol);
      const d = schedule(s, [job({ id: 'eight', count: 8, needsNvlink: true, submit: 1 })], 0, pol)[0];
      // needsNvlink is a hard constraint: g1 has only 4 GPUs left, so the whole gang goes to g2.
      expect(d).toMatchObject({ kind: 'start', placement: { nvlinkDomains: 1, nodes: [{ node: 'g2', gpus: 8 }] } });
      expect(d.explanation).toBe('start now on 1 node(s) of zurich/alps/normal, 1 NVLink domain(s), 1 IB island(s); needsNvlink: inside one NVLink domain');
      // The same gang without the flag: first-fit takes g1's 4 GPUs first and spans two domains.
      const s2 = new ClusterState(inv);
      schedule(s2, [job({ id: 'half', count: 4 })], 0, pol);
      const free = schedule(s2, [job({ id: 'eight', count: 8, submit: 1 })], 0, pol)[0];
      expect(free).toMatchObject({ kind: 'start', placement: { nvlinkDomains: topology ? 1 : 2 } });
      expect(free.explanation).not.toMatch(/needsNvlink/);
    }
  });

  test('an MPI job is kept inside one IB island when one can hold it', () => {
    const nodes = [...['a1', 'a2', 'a3', 'a4'].map((id) => cpuNode(id, { ibIsland: 'A' })), ...['b1', 'b2', 'b3', 'b4'].map((id) => cpuNode(id, { ibIsland: 'B' }))];
    const s = new ClusterState(inventory(nodes));
    const pol = policy({ ...off, order: 'fcfs' });
    const mpi = (id: string, count: number) => job({ id, type: 'hpc-mpi', count, per: { cpus: 1, gpus: 0, memoryMB: 0 } });
    schedule(s, [mpi('fill', 2)], 0, pol); // best fit puts it on island A (or B) and leaves the other whole
    const d = schedule(s, [mpi('mpi3', 3)], 0, pol)[0];
    expect(d.kind === 'start' && d.placement.ibIslands).toBe(1);
    // Five ranks cannot fit in one island: it spans two, and says so.
    const s2 = new ClusterState(inventory(nodes));
    const d2 = schedule(s2, [mpi('mpi5', 5)], 0, pol)[0];
    expect(d2.kind === 'start' && d2.placement.ibIslands).toBe(2);
    expect(schedule(new ClusterState(inventory(nodes)), [{ ...mpi('strict', 5), strictIsland: true }], 0, pol)[0].kind).toBe('reject');
  });

  test('thermal tie-break picks the coolest rack; without it the first node', () => {
    const inv = inventory([gpuNode('hot', { rackTempC: 35 }), gpuNode('cool', { rackTempC: 22 })]);
    expect(nodesOf(schedule(new ClusterState(inv), [job({ count: 8 })], 0, policy({ ...off, thermal: true }))[0])).toEqual(['cool']);
    expect(nodesOf(schedule(new ClusterState(inv), [job({ count: 8 })], 0, policy({ ...off, thermal: false }))[0])).toEqual(['hot']);
  });

  test('oversubscription: bronze may use CPUs up to 1.2×, gold never beyond 1:1', () => {
    const inv = inventory([{ id: 'c', cpus: 10, gpus: 0, memoryMB: 1000 }], { oversubscription: { cpu: 1.2, gpu: 1.05 } });
    const pol = policy({ ...off, oversubscription: true, topology: false });
    const cpuJob = (id: string, qos: 'gold' | 'bronze', count: number) => job({ id, qos, count, per: { cpus: 1, gpus: 0, memoryMB: 0 } });
    const s = new ClusterState(inv);
    expect(kinds(schedule(s, [cpuJob('g', 'gold', 10)], 0, pol))).toEqual({ g: 'start' });
    const ds = schedule(s, [cpuJob('b', 'bronze', 2)], 0, pol);
    expect(ds[0]).toMatchObject({ kind: 'start', oversubscribed: true });
    expect(s.usedCpu[0]).toBe(12);
    expect(schedule(s, [cpuJob('b2', 'bronze', 1)], 0, pol)[0].kind).toBe('reserve');
    expect(schedule(new ClusterState(inv), [cpuJob('g2', 'gold', 11)], 0, pol)[0].kind).toBe('reject');
  });

  test('price: base rate, +20% when the placement keeps more than one GPU in one NVLink domain (asked for or not), −30% when delay-tolerant', () => {
    const pol = policy({ ...off, cost: true });
    const first = (j: JobRequest, nodes = [gpuNode('g1')]) => schedule(new ClusterState(inventory(nodes)), [j], 0, pol)[0];
    // 8 GPUs × 2/h × 1 h = 16, all on g1's NVLink domain: 19.2, with or without needsNvlink.
    expect(first(job({ count: 8 }))).toMatchObject({ kind: 'start', price: 19.2, placement: { nvlinkDomains: 1 } });
    expect(first(job({ count: 8, needsNvlink: true }))).toMatchObject({ kind: 'start', price: 19.2 });
    // One GPU uses no NVLink, whatever the flag says: the base 2.
    expect(first(job({ count: 1, needsNvlink: true }))).toMatchObject({ kind: 'start', price: 2 });
    // Two GPUs on two nodes (two domains) talk over the network: the base 4.
    expect(first(job({ count: 2, maxPerNode: 1 }), [gpuNode('g1'), gpuNode('g2')])).toMatchObject({ kind: 'start', price: 4, placement: { nvlinkDomains: 2 } });
    // Two GPUs of a node that declares no NVLink domain (PCIe only): the base 4.
    expect(first(job({ count: 2 }), [gpuNode('p', { nvlinkDomain: undefined })])).toMatchObject({ kind: 'start', price: 4, placement: { nvlinkDomains: 0 } });
    // Delay-tolerant on the NVLink placement: 16 × 1.2 × 0.7.
    expect(first(job({ count: 8, delayTolerant: true }))).toMatchObject({ price: 13.44 });
    // Without the cost policy: the base rate, no modifiers.
    expect(schedule(new ClusterState(inventory([gpuNode('g1')])), [job({ count: 8, delayTolerant: true })], 0, policy({ ...off, cost: false }))[0]).toMatchObject({ price: 16 });
  });

  test('deadlines: an infeasible deadline is rejected with the reason; an urgent job goes first', () => {
    const pol = policy({ ...off, deadlines: true, order: 'fcfs' });
    const s = new ClusterState(inventory([gpuNode('g1')]));
    schedule(s, [job({ id: 'busy', count: 8, walltime: 1000 })], 0, pol);
    const d = schedule(s, [job({ id: 'late', count: 8, walltime: 100, deadline: 500 })], 0, pol)[0];
    expect(d).toMatchObject({ kind: 'reject', reason: 'deadline' });
    const s2 = new ClusterState(inventory([gpuNode('g1')]));
    const ds = schedule(s2, [job({ id: 'early', count: 8, submit: 0 }), job({ id: 'urgent', count: 8, submit: 5, walltime: 100, deadline: 150 })], 0, pol);
    expect(kinds(ds)).toMatchObject({ urgent: 'start' });
  });

  test('decide(): one job against an inventory with running work, explained', () => {
    const inv = inventory([gpuNode('g1'), gpuNode('g2')]);
    const d = decide(inv, [{ job: job({ id: 'r', count: 8 }), nodes: [{ node: 'g1', slots: 8 }], start: 0 }], job({ id: 'new', count: 8, needsNvlink: true }), 10, policy());
    expect(d).toMatchObject({ kind: 'start', placement: { nodes: [{ node: 'g2', gpus: 8 }], nvlinkDomains: 1 } });
    expect(d.explanation).toMatch(/start now on 1 node\(s\) of zurich\/alps\/normal, 1 NVLink domain/);
  });
});

describe('weighted DRF queue order', () => {
  // 16 GPUs, 128 CPUs. Tenant a (weight 3) runs 6 GPUs: dominant share 6/16 = 0.375 (GPU), 0.125 per
  // unit of weight. Tenant b (weight 1) runs 24 CPUs and 1 GPU: dominant share 24/128 = 0.1875 (CPU),
  // 0.1875 per unit of weight. Nine GPUs are free and each tenant asks for nine.
  function run(weights: [number, number]) {
    const s = new ClusterState(inventory([gpuNode('g1'), gpuNode('g2')]));
    const pol = policy({ ...off, order: 'fairshare', fairShare: true, tenants: [{ name: 'a', weight: weights[0] }, { name: 'b', weight: weights[1] }] });
    schedule(s, [job({ id: 'a-run', tenant: 'a', count: 6 }), job({ id: 'b-run', tenant: 'b', per: { cpus: 24, gpus: 1, memoryMB: 0 } })], 0, pol);
    return schedule(s, [job({ id: 'B', tenant: 'b', count: 9, submit: 1 }), job({ id: 'A', tenant: 'a', count: 9, submit: 2 })], 0, pol);
  }

  test('the tenant with the lower weighted dominant share goes first, though it submitted later', () => {
    const ds = run([3, 1]);
    expect(ds.map((d) => d.jobId)).toEqual(['A', 'B']);
    expect(kinds(ds)).toEqual({ A: 'start', B: 'reserve' });
  });

  test('with equal weights the same usage puts the other tenant first (b: 0.1875 < a: 0.375)', () => {
    const ds = run([1, 1]);
    expect(ds.map((d) => d.jobId)).toEqual(['B', 'A']);
    expect(kinds(ds)).toEqual({ B: 'start', A: 'reserve' });
  });
});

describe('silver and bronze QoS: burst limits and guarantees', () => {
  // Two tenants of equal weight on 16 GPUs: each is entitled to 8. Tenant c is not listed, so it has
  // no entitlement: no burst limit, and its work is never reclaimed by a guarantee.
  const tenants = [{ name: 'a' }, { name: 'b' }];
  const qosPol = policy({ ...off, qos: true, preemption: true, order: 'fcfs', tenants });
  const cluster = () => new ClusterState(inventory([gpuNode('g1'), gpuNode('g2')]));

  test.each([
    ['silver', 8, '100%'],
    ['bronze', 6, '80%'],
  ] as const)('%s burst: at most %i of the 8 entitled GPUs; the next job is held by the burst limit', (qos, n, pct) => {
    const s = cluster();
    const ds = schedule(s, Array.from({ length: 10 }, (_, k) => job({ id: `b${k}`, tenant: 'b', qos, submit: k })), 0, qosPol);
    expect(ds.filter((d) => d.kind === 'start')).toHaveLength(n);
    expect(ds.find((d) => d.jobId === `b${n}`)).toMatchObject({ kind: 'reserve', reason: 'qos-burst' });
    expect(ds.find((d) => d.jobId === `b${n}`)!.explanation).toContain(`${qos} burst limit (${pct} of tenant b's entitlement)`);
    expect(s.usage('b').gpus).toBe(n);
  });

  /** b runs `bCount` one-GPU jobs of class `bQos`, c fills `cCount` GPUs; then tenant a asks. */
  function busy(bQos: QosClass, bCount: number, cCount: number) {
    const s = cluster();
    schedule(s, [...Array.from({ length: bCount }, (_, k) => job({ id: `b${k}`, tenant: 'b', qos: bQos, submit: k })), job({ id: 'c', tenant: 'c', qos: 'gold', count: cCount, submit: 50 })], 0, qosPol);
    expect(s.usage('b').gpus + s.usage('c').gpus).toBe(bCount + cCount);
    return s;
  }
  const ask = (s: ClusterState, qos: QosClass, count: number) => schedule(s, [job({ id: 'a1', tenant: 'a', qos, count, submit: 100 })], 100, qosPol)[0];

  test('silver guarantee is 80% of the entitlement: 6 GPUs (75%) reclaim borrowed capacity, 7 (87.5%) do not', () => {
    // b (gold) borrows 9 GPUs, c holds 2: 5 are free.
    const six = ask(busy('gold', 9, 2), 'silver', 6);
    expect(six).toMatchObject({ kind: 'preempt', victims: [expect.stringMatching(/^b/)] });
    expect(six.explanation).toMatch(/silver guarantee of tenant a reclaims capacity borrowed by b/);
    expect(ask(busy('gold', 9, 2), 'silver', 7)).toMatchObject({ kind: 'reserve', reason: 'resources' });
  });

  test('bronze guarantee is 50%: 4 GPUs reclaim borrowed capacity, 5 do not', () => {
    // b (gold) borrows 9 GPUs, c holds 4: 3 are free.
    const four = ask(busy('gold', 9, 4), 'bronze', 4);
    expect(four).toMatchObject({ kind: 'preempt', victims: [expect.stringMatching(/^b/)] });
    expect(four.explanation).toMatch(/bronze guarantee of tenant a/);
    expect(ask(busy('gold', 9, 4), 'bronze', 5)).toMatchObject({ kind: 'reserve', reason: 'resources' });
  });

  test('a silver borrower above 80% of its entitlement may be reclaimed, one at or below it not; bronze likewise at 50%', () => {
    // One GPU free each time; a gold job of a asks for two.
    expect(ask(busy('silver', 7, 8), 'gold', 2)).toMatchObject({ kind: 'preempt', victims: [expect.stringMatching(/^b/)] });
    expect(ask(busy('silver', 6, 9), 'gold', 2)).toMatchObject({ kind: 'reserve' });
    expect(ask(busy('bronze', 5, 10), 'gold', 2)).toMatchObject({ kind: 'preempt', victims: [expect.stringMatching(/^b/)] });
    expect(ask(busy('bronze', 4, 11), 'gold', 2)).toMatchObject({ kind: 'reserve' });
  });
});

describe('backfill reservations bind every start', () => {
  const one = { cpus: 1, gpus: 0, memoryMB: 0 };
  const mpi = (id: string, count: number, walltime: number, submit: number, priority = 100) => job({ id, type: 'hpc-mpi', count, per: one, walltime, submit, priority });

  test('conservative: a backfill that would delay the second reserved job (not the head) waits; EASY lets it start', () => {
    // Four single-CPU nodes; r0 holds two until t=100, r1 one until t=50.
    const setup = (backfill: 'easy' | 'conservative') => {
      const s = new ClusterState(inventory(['n1', 'n2', 'n3', 'n4'].map((id) => cpuNode(id))));
      const pol = policy({ ...off, order: 'fcfs', backfill, topology: false });
      schedule(s, [mpi('r0', 2, 100, 0), mpi('r1', 1, 50, 1)], 0, pol);
      return { s, pol };
    };
    const q = () => [mpi('head', 4, 100, 2), mpi('second', 2, 50, 3), mpi('x', 1, 80, 4)];
    const c = setup('conservative');
    const ds = schedule(c.s, q(), 0, c.pol);
    // head: all four nodes at t=100. second: n3+n4 from t=50 to 100, before head. x (t=0..80) would
    // finish before head begins, but on n4 it would overlap second: it is reserved after both.
    expect(ds.map((d) => [d.jobId, d.kind, d.kind === 'reserve' ? d.at : -1])).toEqual([
      ['head', 'reserve', 100],
      ['second', 'reserve', 50],
      ['x', 'reserve', 200],
    ]);
    expect(nodesOf(ds[1])).toEqual(['n3', 'n4']);
    // Neither reserved job is delayed: replanned in order, each still starts by its reserved time.
    const head = reserve(c.s, q()[0], 0, c.pol, [])!;
    expect(head.at).toBeLessThanOrEqual(100);
    expect(reserve(c.s, q()[1], 0, c.pol, [head])!.at).toBeLessThanOrEqual(50);
    // EASY protects only the head, so x starts (and second, were it planned now, would wait for it).
    const e = setup('easy');
    expect(kinds(schedule(e.s, q(), 0, e.pol))).toEqual({ head: 'reserve', x: 'start' });
    expect(reserve(e.s, q()[1], 0, e.pol, [reserve(e.s, q()[0], 0, e.pol, [])!])!.at).toBe(200);
  });

  describe('a job that starts by preemption passes the same backfill test', () => {
    // Four single-CPU nodes: hi (priority 100) on n1 until t=100, lo (priority 0) on n2 until t=1000.
    // The head (priority 10) needs all four: it cannot preempt its way in (hi outranks it) and is
    // reserved from t=1000. p (priority 50) could start now by preempting lo.
    const setup = () => {
      const s = new ClusterState(inventory(['n1', 'n2', 'n3', 'n4'].map((id) => cpuNode(id))));
      const pol = policy({ ...off, order: 'fcfs', backfill: 'easy', preemption: true, topology: false });
      schedule(s, [mpi('hi', 1, 100, 0, 100), mpi('lo', 1, 1000, 1, 0)], 0, pol);
      return { s, pol };
    };

    test('EASY: it may not land on the reserved head’s nodes and run past the head’s start', () => {
      const { s, pol } = setup();
      const ds = schedule(s, [mpi('head', 4, 100, 2, 10), mpi('p', 3, 2000, 3, 50)], 0, pol);
      expect(kinds(ds)).toEqual({ head: 'reserve' });
      expect(ds[0]).toMatchObject({ kind: 'reserve', at: 1000 });
      expect(s.running.has('lo')).toBe(true);
      expect(reserve(s, mpi('head', 4, 100, 2, 10), 0, pol, [])!.at).toBe(1000);
    });

    test('EASY: one that ends before the head begins may preempt, and says it does not delay it', () => {
      const { s, pol } = setup();
      const ds = schedule(s, [mpi('head', 4, 100, 2, 10), mpi('p', 3, 500, 3, 50)], 0, pol);
      expect(kinds(ds)).toEqual({ head: 'reserve', p: 'preempt' });
      expect(ds[1]).toMatchObject({ victims: ['lo'] });
      expect(ds[1].explanation).toMatch(/; it does not delay head$/);
      expect(reserve(s, mpi('head', 4, 100, 2, 10), 0, pol, [])!.at).toBeLessThanOrEqual(1000);
    });

    test('a victim that would still hold a reserved node when the head begins gives that room back', () => {
      // Two 2-CPU nodes: hi holds n2 until t=100; lo holds one CPU of n1 until t=5000. The head (three
      // CPUs) is reserved from t=100 on n2 and n1's free CPU. p may not take that free CPU, but it may
      // take lo's: lo would have held it past t=100 anyway.
      const s = new ClusterState(inventory([cpuNode('n1', { cpus: 2 }), cpuNode('n2', { cpus: 2 })]));
      const pol = policy({ ...off, order: 'fcfs', backfill: 'easy', preemption: true, topology: false });
      s.allocate(mpi('hi', 2, 100, 0, 100), [1], [2], 0);
      s.allocate(mpi('lo', 1, 5000, 0, 0), [0], [1], 0);
      const ds = schedule(s, [mpi('head', 3, 100, 1, 10), mpi('p', 1, 10000, 2, 50)], 0, pol);
      expect(ds[0]).toMatchObject({ jobId: 'head', kind: 'reserve', at: 100 });
      expect(ds[1]).toMatchObject({ jobId: 'p', kind: 'preempt', victims: ['lo'] });
      expect(nodesOf(ds[1])).toEqual(['n1']);
      expect(reserve(s, mpi('head', 3, 100, 1, 10), 0, pol, [])!.at).toBe(100);
    });

    test('it takes victims off the reserved nodes when it can, though they lose more work', () => {
      // Five nodes at t=1000: hi on n1-n3 until 1100; young (priority 0, started 990) on n4 until
      // 1090; old (priority 0, started at 0) on n5 until 20000. The head is reserved on n1-n4 from
      // t=1100. Preempting young loses the least work, but p would then hold n4 past t=1100.
      const s = new ClusterState(inventory(['n1', 'n2', 'n3', 'n4', 'n5'].map((id) => cpuNode(id))));
      const pol = policy({ ...off, order: 'fcfs', backfill: 'easy', preemption: true, topology: false });
      s.allocate(mpi('hi', 3, 150, 0, 100), [0, 1, 2], [1, 1, 1], 950);
      s.allocate(mpi('young', 1, 100, 0, 0), [3], [1], 990);
      s.allocate(mpi('old', 1, 20000, 0, 0), [4], [1], 0);
      const ds = schedule(s, [mpi('head', 4, 100, 1, 10), mpi('p', 1, 20000, 2, 50)], 1000, pol);
      expect(ds[0]).toMatchObject({ jobId: 'head', kind: 'reserve', at: 1100 });
      expect(nodesOf(ds[0])).toEqual(['n1', 'n2', 'n3', 'n4']);
      expect(ds[1]).toMatchObject({ jobId: 'p', kind: 'preempt', victims: ['old'] });
      expect(nodesOf(ds[1])).toEqual(['n5']);
      expect(reserve(s, mpi('head', 4, 100, 1, 10), 1000, pol, [])!.at).toBe(1100);
    });
  });
});
