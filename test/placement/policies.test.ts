// Every policy on a small hand-built case whose right answer is known.
import { ClusterState, decide, policy, schedule, type Decision } from '../../placement/index.js';
import { reserve } from '../../placement/reserve.js';
import { cpuNode, gpuNode, inventory, job } from './fixtures.js';

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
  test('an 8-GPU job stays inside one NVLink domain (first-fit would split it)', () => {
    const inv = inventory([gpuNode('g1'), gpuNode('g2')]);
    for (const topology of [true, false]) {
      const s = new ClusterState(inv);
      const pol = policy({ ...off, topology, order: 'fcfs' });
      schedule(s, [job({ id: 'half', count: 4 })], 0, pol);
      const d = schedule(s, [job({ id: 'eight', count: 8, needsNvlink: true, submit: 1 })], 0, pol)[0];
      expect(d.kind).toBe('start');
      if (d.kind !== 'start') return;
      expect(d.placement.nvlinkDomains).toBe(topology ? 1 : 2);
      if (topology) expect(nodesOf(d)).toEqual(['g2']);
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

  test('price: base rate, +20% for an NVLink placement, −30% when delay-tolerant', () => {
    const pol = policy({ ...off, cost: true });
    const base = schedule(new ClusterState(inventory([gpuNode('g1')])), [job({ count: 8 })], 0, pol)[0];
    const nvl = schedule(new ClusterState(inventory([gpuNode('g1')])), [job({ count: 8, needsNvlink: true })], 0, pol)[0];
    const tol = schedule(new ClusterState(inventory([gpuNode('g1')])), [job({ count: 8, delayTolerant: true })], 0, pol)[0];
    expect(base).toMatchObject({ price: 16 });
    expect(nvl).toMatchObject({ price: 19.2 });
    expect(tol).toMatchObject({ price: 11.2 });
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
