// Property tests on random inventories and queues: capacity and oversubscription invariants, quotas,
// gang allocation, EASY never delaying its reserved head, determinism, and per-GPU share accounting.
import fc from 'fast-check';
import { ClusterState, QOS_RULES, policy, schedule, type Inventory, type JobRequest, type PolicyConfig, type WorkloadShape } from '../../placement/index.js';
import { reserve } from '../../placement/reserve.js';

const nodeArb = fc.record({
  cpus: fc.integer({ min: 1, max: 64 }),
  gpus: fc.constantFrom(0, 0, 2, 4, 8),
  memoryMB: fc.integer({ min: 1024, max: 65536 }),
  island: fc.integer({ min: 0, max: 3 }),
  temp: fc.integer({ min: 18, max: 40 }),
});

const inventoryArb: fc.Arbitrary<Inventory> = fc
  .array(fc.record({ os: fc.boolean(), nodes: fc.array(nodeArb, { minLength: 1, maxLength: 10 }) }), { minLength: 1, maxLength: 3 })
  .map((parts) => ({
    sites: [
      {
        name: 's',
        clusters: [
          {
            name: 'c',
            partitions: parts.map((p, pi) => ({
              name: `p${pi}`,
              oversubscription: p.os ? { cpu: 1.2, gpu: 1.05 } : undefined,
              nodes: p.nodes.map((n, ni) => ({ id: `p${pi}n${ni}`, cpus: n.cpus, gpus: n.gpus, memoryMB: n.memoryMB, ibIsland: `isl${n.island}`, nvlinkDomain: n.gpus ? `nvl-p${pi}n${ni}` : undefined, rackTempC: n.temp, price: { cpuHour: 0.01, gpuHour: 1 } })),
            })),
          },
        ],
      },
    ],
  }));

const jobArb = fc.record({
  type: fc.constantFrom('hpc-mpi' as const, 'ai-training' as const, 'inference' as const, 'hybrid' as const),
  tenant: fc.constantFrom('a', 'b', 'c'),
  qos: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const),
  priority: fc.integer({ min: 0, max: 3 }).map((p) => p * 100),
  submit: fc.integer({ min: 0, max: 100 }),
  count: fc.integer({ min: 1, max: 12 }),
  cpus: fc.integer({ min: 0, max: 16 }),
  gpus: fc.constantFrom(0, 0, 0.5, 1, 2),
  memoryMB: fc.integer({ min: 0, max: 8192 }),
  walltime: fc.integer({ min: 10, max: 5000 }),
  maxPerNode: fc.option(fc.constantFrom(1, 2, 4), { nil: undefined }),
  checkpointable: fc.boolean(),
  delayTolerant: fc.boolean(),
  needsNvlink: fc.boolean(),
});

const queueArb = fc.array(jobArb, { minLength: 1, maxLength: 25 }).map((js) =>
  js.map(
    (j, k): JobRequest => ({
      id: `j${k}`,
      type: j.type,
      tenant: j.tenant,
      qos: j.qos,
      priority: j.priority,
      submit: j.submit,
      count: j.count,
      per: { cpus: j.cpus || (j.gpus ? 0 : 1), gpus: j.gpus, memoryMB: j.memoryMB },
      walltime: j.walltime,
      maxPerNode: j.maxPerNode,
      checkpointable: j.checkpointable,
      delayTolerant: j.delayTolerant,
      needsNvlink: j.needsNvlink,
    }),
  ),
);

const policyArb: fc.Arbitrary<PolicyConfig> = fc
  .record({
    order: fc.constantFrom('fcfs' as const, 'sjf' as const, 'priority' as const, 'fairshare' as const),
    backfill: fc.constantFrom('none' as const, 'easy' as const, 'conservative' as const),
    flags: fc.array(fc.boolean(), { minLength: 9, maxLength: 9 }),
  })
  .map(({ order, backfill, flags }) =>
    policy({
      order,
      backfill,
      quotas: flags[0],
      fairShare: flags[1],
      qos: flags[2],
      preemption: flags[3],
      topology: flags[4],
      oversubscription: flags[5],
      deadlines: flags[6],
      cost: flags[7],
      thermal: flags[8],
      tenants: [{ name: 'a', weight: 2, quota: { cpus: 40, gpus: 6 } }, { name: 'b', weight: 1 }, { name: 'c', weight: 1, quota: { gpus: 3 } }],
    }),
  );

/** Two passes (the second after half the jobs ended) so preemption and backfill meet a busy cluster. */
function run(inv: Inventory, queue: JobRequest[], pol: PolicyConfig) {
  const s = new ClusterState(inv);
  const first = schedule(s, queue.slice(0, Math.ceil(queue.length / 2)), 0, pol);
  const ids = [...s.running.keys()];
  for (const id of ids.slice(0, Math.floor(ids.length / 2))) s.release(id);
  const rest = queue.filter((j) => !s.running.has(j.id) && !first.some((d) => d.jobId === j.id && d.kind === 'reject'));
  const second = schedule(s, rest.map((j) => ({ ...j, submit: j.submit + 1000 })), 1000, pol);
  return { s, decisions: [...first, ...second] };
}

const OPTS = { numRuns: 150, seed: 4242 };

describe('placement invariants on random inventories and queues', () => {
  test('no node beyond physical capacity except by an oversubscribing class, and never beyond its ratio', () => {
    fc.assert(
      fc.property(inventoryArb, queueArb, policyArb, (inv, queue, pol) => {
        const { s } = run(inv, queue, pol);
        for (let i = 0; i < s.n; i++) {
          expect(s.usedCpu[i]).toBeLessThanOrEqual(s.capCpu[i] * s.osCpu[i] + 1e-6);
          expect(s.usedGpu[i]).toBeLessThanOrEqual(s.capGpu[i] * s.osGpu[i] + 1e-6);
          expect(s.usedMem[i]).toBeLessThanOrEqual(s.capMem[i] + 1e-6);
          const over = s.usedCpu[i] > s.capCpu[i] + 1e-6 || s.usedGpu[i] > s.capGpu[i] + 1e-6;
          if (over) {
            expect(pol.oversubscription).toBe(true);
            const onNode = [...s.running.values()].filter((a) => a.nodes.includes(i));
            expect(onNode.some((a) => QOS_RULES[a.job.qos].oversubscribe)).toBe(true);
          }
        }
      }),
      OPTS,
    );
  });

  test('quotas hold, gangs are all-or-nothing, every decision is explained', () => {
    fc.assert(
      fc.property(inventoryArb, queueArb, policyArb, (inv, queue, pol) => {
        const { s, decisions } = run(inv, queue, pol);
        if (pol.quotas) {
          expect(s.usage('a').cpus).toBeLessThanOrEqual(40 + 1e-6);
          expect(s.usage('a').gpus).toBeLessThanOrEqual(6 + 1e-6);
          expect(s.usage('c').gpus).toBeLessThanOrEqual(3 + 1e-6);
        }
        for (const a of s.running.values()) expect(a.slots.reduce((x, y) => x + y, 0)).toBe(a.job.count);
        for (const d of decisions) {
          expect(d.explanation.length).toBeGreaterThan(10);
          if (d.kind === 'start' || d.kind === 'preempt') expect(d.placement.nodes.reduce((t, n) => t + n.slots, 0)).toBe(queue.find((j) => j.id === d.jobId)!.count);
        }
      }),
      OPTS,
    );
  });

  test('EASY backfill never delays the reserved head job', () => {
    fc.assert(
      fc.property(inventoryArb, queueArb, policyArb, (inv, queue, p) => {
        const pol = { ...p, backfill: 'easy' as const, preemption: false };
        const s = new ClusterState(inv);
        // Half the queue runs first so the rest meets a busy cluster.
        schedule(s, queue.slice(0, Math.ceil(queue.length / 2)), 0, { ...pol, backfill: 'none' });
        const waiting = queue.filter((j) => !s.running.has(j.id));
        const ds = schedule(s, waiting, 0, pol);
        const head = ds.find((d) => d.kind === 'reserve' && d.reason === 'resources');
        if (!head || head.kind !== 'reserve') return;
        const again = reserve(s, queue.find((j) => j.id === head.jobId)!, 0, pol, []);
        expect(again).toBeDefined();
        expect(again!.at).toBeLessThanOrEqual(head.at);
      }),
      OPTS,
    );
  });

  test('same input, same output', () => {
    fc.assert(
      fc.property(inventoryArb, queueArb, policyArb, (inv, queue, pol) => {
        expect(run(inv, queue, pol).decisions).toEqual(run(inv, queue, pol).decisions);
      }),
      { ...OPTS, numRuns: 60 },
    );
  });

  // Shares of one GPU mixed into the same queues, under every packing policy.
  const sharedQueueArb = fc.tuple(queueArb, fc.array(fc.constantFrom(0, 0, 100, 250, 500, 600, 999), { minLength: 25, maxLength: 25 })).map(([queue, milli]) =>
    queue.map((j, k): JobRequest => (milli[k] ? { ...j, per: { ...j.per, gpus: milli[k] / 1000, gpuMilli: milli[k] } } : j)),
  );
  const workload: WorkloadShape[] = [{ share: 0.5, cpus: 1, gpus: 1 }, { share: 0.3, cpus: 2, gpus: 0.5, gpuMilli: 500 }, { share: 0.2, cpus: 4, gpus: 0 }];
  const packedPolicyArb = fc.tuple(policyArb, fc.constantFrom('topology' as const, 'best-fit' as const, 'fgd' as const)).map(([p, packing]) => ({ ...p, packing, targetWorkload: workload }));

  test('no GPU below 0 or above 1000 thousandths; what allocations hold is exactly what GPUs lack; release restores all', () => {
    let shares = 0;
    fc.assert(
      fc.property(inventoryArb, sharedQueueArb, packedPolicyArb, (inv, queue, pol) => {
        const { s } = run(inv, queue, pol);
        const held = new Int32Array(s.gpu.free.length);
        for (const a of s.running.values()) {
          if (a.job.per.gpuMilli !== undefined) shares++;
          a.gpus?.forEach((gs) => gs.forEach((x) => (held[x] += a.job.per.gpuMilli ?? 1000)));
        }
        for (let i = 0; i < s.n; i++) {
          expect(s.usedGpu[i]).toBeLessThanOrEqual(s.capGpu[i] * s.osGpu[i] + 1e-6);
          let whole = 0;
          let partial = 0;
          for (let x = s.gpuOff[i]; x < s.gpuOff[i + 1]; x++) {
            const f = s.gpu.free[x];
            expect(f).toBeGreaterThanOrEqual(0);
            expect(f).toBeLessThanOrEqual(1000);
            expect(held[x]).toBe(1000 - f);
            if (f === 1000) whole++;
            else if (f > 0) partial++;
          }
          expect([s.gpu.whole[i], s.gpu.partial[i]]).toEqual([whole, partial]);
        }
        for (const id of [...s.running.keys()]) s.release(id);
        expect([...s.gpu.free].every((f) => f === 1000)).toBe(true);
        expect(s.gpu.partialTotal).toBe(0);
      }),
      OPTS,
    );
    expect(shares).toBeGreaterThan(100); // the property met shares that were actually running
  });
});
