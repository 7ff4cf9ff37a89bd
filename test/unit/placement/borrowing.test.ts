// Borrowing (Kueue's cohort model): idle capacity beyond a tenant's burst limit is lent to checkpointable
// jobs and reclaimed by preemption, in the same pass, when a tenant within its limits needs it.
import fc from 'fast-check';
import { ClusterState, QOS_RULES, dominant, entitlement, policy, schedule, type JobRequest } from '../../../placement/index.js';
import { borrowCluster as gpuCluster, borrowJob as gpuJob, startedIds as started, TWO_TENANTS as TWO } from '../../placement/fixtures.js';

describe('borrowing', () => {
  test('idle capacity past the burst limit goes to checkpointable jobs, flagged and explained; not without borrowing', () => {
    const queue = [0, 1, 2, 3].map((k) => gpuJob(`a${k}`, 'a', 8, { submit: k }));
    const lent = schedule(new ClusterState(gpuCluster(4)), queue, 10, policy({ tenants: TWO }));
    expect(started(lent).sort()).toEqual(['a0', 'a1', 'a2', 'a3']);
    const borrowed = lent.filter((d) => d.kind === 'start' && d.borrowed);
    // Silver's burst is 1.0 × an entitlement of 16 GPUs: the third and fourth jobs borrow.
    expect(borrowed.map((d) => d.jobId).sort()).toEqual(['a2', 'a3']);
    expect(borrowed[0].explanation).toMatch(/borrows idle capacity past the silver burst limit/);
    const capped = schedule(new ClusterState(gpuCluster(4)), queue, 10, policy({ tenants: TWO, borrowing: false }));
    expect(started(capped).sort()).toEqual(['a0', 'a1']);
    expect(capped.filter((d) => d.kind === 'reserve' && d.reason === 'qos-burst').map((d) => d.jobId).sort()).toEqual(['a2', 'a3']);
  });

  test('a job that is not checkpointable (or not preemptible) never borrows', () => {
    const queue = [0, 1, 2].map((k) => gpuJob(`a${k}`, 'a', 8, { submit: k, checkpointable: k !== 2 }));
    queue.push(gpuJob('a3', 'a', 8, { submit: 3, preemptible: false }));
    const ds = schedule(new ClusterState(gpuCluster(4)), queue, 10, policy({ tenants: TWO }));
    expect(started(ds).sort()).toEqual(['a0', 'a1']);
    expect(ds.find((d) => d.jobId === 'a2')).toMatchObject({ kind: 'reserve', reason: 'qos-burst' });
  });

  test('the owner reclaims lent capacity in the next pass by preempting borrowers', () => {
    const s = new ClusterState(gpuCluster(4));
    const pol = policy({ tenants: TWO });
    schedule(s, [0, 1, 2, 3].map((k) => gpuJob(`a${k}`, 'a', 8, { submit: k })), 0, pol);
    // 16 GPUs: within b's silver burst (1.0 × 16) but above its guarantee (0.8 × 16), so it is the
    // lent capacity, not the guarantee, that it takes back.
    const ds = schedule(s, [gpuJob('b0', 'b', 16, { submit: 5 })], 5, pol);
    expect(ds).toHaveLength(1);
    const d = ds[0];
    expect(d.kind).toBe('preempt');
    if (d.kind !== 'preempt') return;
    expect(d.victims).toHaveLength(2);
    for (const v of d.victims) expect(v).toMatch(/^a/);
    expect(d.explanation).toMatch(/tenant b, within its silver burst limit, reclaims capacity lent beyond their tenants' burst limits/);
    // Without borrowing nothing was lent, so there is nothing to reclaim: b starts in idle capacity.
    const s2 = new ClusterState(gpuCluster(4));
    const pol2 = policy({ tenants: TWO, borrowing: false });
    schedule(s2, [0, 1, 2, 3].map((k) => gpuJob(`a${k}`, 'a', 8, { submit: k })), 0, pol2);
    expect(schedule(s2, [gpuJob('b0', 'b', 16, { submit: 5 })], 5, pol2)[0].kind).toBe('start');
  });

  test('a resource the borrower does not hold past its burst is not reclaimed from it', () => {
    // Three tenants, 64 CPUs and 16 GPUs: a borrows GPUs (16 of its 5.3) but holds 16 of its 21.3
    // CPUs; c holds 25 CPUs, within its gold burst. b's 24-CPU job is within its gold burst, above its
    // guarantee, and does not fit in the 23 idle CPUs: the CPUs are nobody's loan, so b waits.
    const s = new ClusterState(gpuCluster(2));
    const pol = policy({ tenants: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    const cpuJob = (id: string, tenant: string, cpus: number, submit = 0): JobRequest => ({ ...gpuJob(id, tenant, cpus, { submit, qos: 'gold', checkpointable: false, per: { cpus: 1, gpus: 0, memoryMB: 0 } }), type: 'hpc-mpi' });
    const aJobs = (cpus: number) => [gpuJob('a0', 'a', 8, { per: { cpus, gpus: 1, memoryMB: 1000 } }), gpuJob('a1', 'a', 8, { submit: 1, per: { cpus: 1, gpus: 1, memoryMB: 1000 } })];
    // a's jobs are placed first, each on a node of its own (in one pass the 'score' order would
    // start the smaller CPU jobs first and pack the nodes differently).
    schedule(s, aJobs(1), 0, pol);
    schedule(s, [cpuJob('c0', 'c', 12, 2), cpuJob('c1', 'c', 13, 3)], 0, pol);
    expect(s.running.size).toBe(4);
    expect(s.usage('c').cpus).toBe(25);
    const ds = schedule(s, [cpuJob('b0', 'b', 24)], 5, pol);
    expect(ds.map((d) => d.kind)).toEqual(['reserve']);
    // Once a also holds CPUs past its burst, b takes them back.
    const s2 = new ClusterState(gpuCluster(2));
    schedule(s2, aJobs(2), 0, pol);
    schedule(s2, [cpuJob('c0', 'c', 12, 2), cpuJob('c1', 'c', 13, 3)], 0, pol);
    expect(s2.usage('a').cpus).toBe(24);
    const ds2 = schedule(s2, [cpuJob('b0', 'b', 24)], 5, pol);
    expect(ds2[0]).toMatchObject({ kind: 'preempt' });
  });

  test('property: a tenant within its guarantee never waits while a borrower holds what it needs (reclaim delay: zero passes)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(4, 8),
        fc.array(fc.record({ gpus: fc.integer({ min: 1, max: 8 }), walltime: fc.integer({ min: 60, max: 10_000 }), qos: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const) }), { minLength: 1, maxLength: 16 }),
        fc.record({ gpus: fc.integer({ min: 1, max: 16 }), qos: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const), wa: fc.integer({ min: 1, max: 3 }), wb: fc.integer({ min: 1, max: 3 }), order: fc.constantFrom('score' as const, 'fcfs' as const, 'sjf' as const) }),
        (nodes, perNode, borrowers, owner) => {
          const inv = gpuCluster(nodes, perNode);
          const pol = policy({ order: owner.order, tenants: [{ name: 'a', weight: owner.wa }, { name: 'b', weight: owner.wb }] });
          const s = new ClusterState(inv);
          // Tenant a fills what it can, borrowing past its burst limit while b is idle.
          schedule(s, borrowers.map((b, k) => gpuJob(`a${k}`, 'a', Math.min(b.gpus, perNode), { submit: k, walltime: b.walltime, qos: b.qos })), 100, pol);
          const job = gpuJob('b0', 'b', Math.min(owner.gpus, perNode * nodes), { submit: 200, qos: owner.qos });
          const eb = entitlement(s, pol, 'b')!;
          const withinGuarantee = dominant({ cpus: job.per.cpus * job.count, gpus: job.count, mem: job.per.memoryMB * job.count }, eb) <= QOS_RULES[job.qos].guarantee + 1e-9;
          const ea = entitlement(s, pol, 'a')!;
          // Some job of a runs while a holds more GPUs than that job's class may without borrowing.
          const aBorrows = [...s.running.values()].some((x) => s.usage('a').gpus > QOS_RULES[x.job.qos].burst * ea.gpus + 1e-9);
          // b's job fits if every one of a's jobs left.
          const empty = new ClusterState(inv);
          const fitsWithoutA = schedule(empty, [job], 200, pol).some((d) => d.kind === 'start');
          const before = new Map(s.running);
          const ds = schedule(s, [job], 200, pol);
          const d = ds.find((x) => x.jobId === 'b0');
          if (d && (d.kind === 'start' || d.kind === 'preempt')) {
            // Whatever it preempted was a's checkpointable work, while a held more than its class's burst.
            if (d.kind === 'preempt')
              for (const v of d.victims) {
                const a = before.get(v)!;
                expect(a.job.tenant).toBe('a');
                expect(a.job.checkpointable).toBe(true);
              }
            return;
          }
          // Left waiting: only allowed when the owner is not within its guarantee, nothing of a is
          // lent beyond its burst, or the job could not fit even with all of a's work gone.
          expect(!withinGuarantee || !aBorrows || !fitsWithoutA).toBe(true);
        },
      ),
      { numRuns: 300, seed: 2020 },
    );
  });
});
