// A blocked borrower that needs whole GPU nodes, the widest its tenant has queued, reserves (EASY's one
// per pass) so narrow backfill stops fragmenting the nodes it needs; its reservation binds only its own tenant's jobs and other borrowers, never a lender's job.
import { ClusterState, policy, schedule, type JobRequest } from '../../../placement/index.js';
import { borrowCluster as gpuCluster, borrowJob, startedIds as started, TWO_TENANTS as TWO } from '../../placement/fixtures.js';

// This file's jobs run 5,000 s unless they say otherwise.
const gpuJob = (id: string, tenant: string, gpus: number, over: Partial<JobRequest> = {}): JobRequest => borrowJob(id, tenant, gpus, { walltime: 5000, ...over });

/** Two 8-GPU nodes; tenant a (entitlement 8 GPUs, silver burst 1.0×) holds 11: 4 on n0 until t=100, 7 on n1. */
function busy(): ClusterState {
  const s = new ClusterState(gpuCluster(2));
  s.allocate(gpuJob('a0', 'a', 4, { walltime: 100 }), [0], [4], 0);
  s.allocate(gpuJob('a1', 'a', 7, { walltime: 10_000 }), [1], [7], 0);
  return s;
}

describe('borrower reservations', () => {
  const pol = policy({ tenants: TWO, order: 'fcfs' });
  const wide = gpuJob('w', 'a', 8, { submit: 1, needsNvlink: true });

  test('a blocked whole-node borrower reserves, and its own tenant\'s narrow borrowers no longer take the node it drains', () => {
    const queue = [wide, gpuJob('s1', 'a', 1, { submit: 2 }), gpuJob('s2', 'a', 1, { submit: 3 })];
    const ds = schedule(busy(), queue, 10, pol);
    const r = ds.find((d) => d.jobId === 'w');
    expect(r).toMatchObject({ kind: 'reserve', reason: 'resources', at: 100 });
    expect(r!.explanation).toMatch(/borrows past its burst limit, so the reservation holds only against tenant a's jobs and other borrowers/);
    // s1 fits n1's last GPU; s2 would have to sit on n0, which w needs at t=100.
    expect(started(ds)).toEqual(['s1']);
  });

  test('the lending tenant\'s jobs within their limits ignore a borrower\'s reservation', () => {
    const ds = schedule(busy(), [wide, gpuJob('b0', 'b', 4, { submit: 2, needsNvlink: true })], 10, pol);
    expect(ds.find((d) => d.jobId === 'w')).toMatchObject({ kind: 'reserve', reason: 'resources' });
    expect(started(ds)).toEqual(['b0']);
  });

  test('a borrower\'s reservation does not take the one EASY keeps for a job within its limits', () => {
    // Without preemption, b's whole-node job is blocked: it still gets its own reservation after a's borrower took one.
    const ds = schedule(busy(), [wide, gpuJob('b0', 'b', 8, { submit: 2, needsNvlink: true })], 10, policy({ tenants: TWO, order: 'fcfs', preemption: false }));
    expect(ds.filter((d) => d.kind === 'reserve' && d.reason === 'resources').map((d) => d.jobId)).toEqual(['w', 'b0']);
  });

  test('the lender still reclaims by preemption what the borrowers hold, reservation or not', () => {
    const ds = schedule(busy(), [wide, gpuJob('b0', 'b', 8, { submit: 2, needsNvlink: true })], 10, pol);
    expect(ds.find((d) => d.jobId === 'b0')).toMatchObject({ kind: 'preempt' });
  });

  test('only the widest GPU demand its tenant has queued may drain: a narrower whole-node borrower waits as before', () => {
    const ds = schedule(busy(), [wide, gpuJob('w16', 'a', 16, { submit: 5 })], 10, pol);
    expect(ds.find((d) => d.jobId === 'w')).toMatchObject({ kind: 'reserve', reason: 'qos-burst' });
    expect(ds.find((d) => d.jobId === 'w16')).toMatchObject({ kind: 'reserve', reason: 'resources' });
  });

  test('without borrowing nothing changes: the job waits on its burst limit and holds no reservation', () => {
    const ds = schedule(busy(), [wide, gpuJob('s1', 'a', 1, { submit: 2 })], 10, policy({ tenants: TWO, order: 'fcfs', borrowing: false }));
    expect(ds.find((d) => d.jobId === 'w')).toMatchObject({ kind: 'reserve', reason: 'qos-burst' });
  });
});
