// The live path (placement/live.ts) against the from-scratch reference: after any sequence of starts,
// finishes, placements and observations, the kept state decides exactly what decide() decides on a
// state rebuilt from the inventory and what runs; asking never changes the kept state; rollback
// restores a state to the last bit.
import fc from 'fast-check';
import { ClusterState, LiveCluster, buildState, decide, policy, type Inventory, type JobRequest, type PolicyConfig, type RunningJob } from '../../../placement/index.js';

const inventoryArb: fc.Arbitrary<Inventory> = fc
  .array(
    fc.record({
      cpus: fc.integer({ min: 1, max: 32 }),
      gpus: fc.constantFrom(0, 0, 2, 4, 8),
      memoryMB: fc.integer({ min: 1024, max: 65536 }),
      island: fc.integer({ min: 0, max: 2 }),
      os: fc.boolean(),
    }),
    { minLength: 1, maxLength: 12 },
  )
  .map((nodes) => ({
    sites: [
      {
        name: 's',
        clusters: [
          {
            name: 'c',
            partitions: [
              { name: 'a', oversubscription: { cpu: 1.2, gpu: 1.05 }, nodes: nodes.filter((n) => n.os) },
              { name: 'b', nodes: nodes.filter((n) => !n.os) },
            ]
              .filter((p) => p.nodes.length)
              .map((p) => ({ ...p, nodes: p.nodes.map((n, k) => ({ id: `${p.name}${k}`, cpus: n.cpus, gpus: n.gpus, memoryMB: n.memoryMB, ibIsland: `isl${n.island}`, nvlinkDomain: n.gpus ? `nvl-${p.name}${k}` : undefined, rackTempC: 20 + k, price: { cpuHour: 0.01, gpuHour: 1 } })) })),
          },
        ],
      },
    ],
  }));

const shapeArb = fc.record({
  tenant: fc.constantFrom('a', 'b', 'c'),
  qos: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const),
  priority: fc.integer({ min: 0, max: 3 }).map((p) => p * 100),
  count: fc.integer({ min: 1, max: 8 }),
  cpus: fc.integer({ min: 0, max: 8 }),
  // Whole GPUs, node-level halves and per-GPU shares (0.3 is not a binary fraction: sums round).
  gpu: fc.constantFrom({ gpus: 0 }, { gpus: 1 }, { gpus: 0.5 }, { gpus: 0.3, gpuMilli: 300 }, { gpus: 0.25, gpuMilli: 250 }),
  memoryMB: fc.integer({ min: 0, max: 4096 }),
  walltime: fc.integer({ min: 10, max: 5000 }),
  checkpointable: fc.boolean(),
  needsNvlink: fc.boolean(),
});

type Shape = typeof shapeArb extends fc.Arbitrary<infer T> ? T : never;
const toJob = (j: Shape, id: string, submit: number): JobRequest => ({
  id,
  type: j.gpu.gpus ? 'ai-training' : 'hpc-mpi',
  tenant: j.tenant,
  qos: j.qos,
  priority: j.priority,
  submit,
  count: j.count,
  per: { cpus: j.cpus || (j.gpu.gpus ? 0 : 1), ...j.gpu, memoryMB: j.memoryMB },
  walltime: j.walltime,
  checkpointable: j.checkpointable,
  needsNvlink: j.needsNvlink,
});

const policyArb: fc.Arbitrary<PolicyConfig> = fc
  .record({ order: fc.constantFrom('fcfs' as const, 'sjf' as const, 'priority' as const, 'fairshare' as const, 'score' as const), backfill: fc.constantFrom('easy' as const, 'conservative' as const), flags: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }) })
  .map(({ order, backfill, flags }) =>
    policy({ order, backfill, quotas: flags[0], qos: flags[1], preemption: flags[2], topology: flags[3], oversubscription: flags[4], thermal: flags[5], tenants: [{ name: 'a', weight: 2, quota: { cpus: 40, gpus: 6 } }, { name: 'b', weight: 1 }, { name: 'c', weight: 1, quota: { gpus: 3 } }] }),
  );

/** An event on the live state: place a new job, finish a running one, or observe the list as it is. */
const eventArb = fc.oneof(
  { weight: 5, arbitrary: shapeArb.map((shape) => ({ place: shape })) },
  { weight: 3, arbitrary: fc.nat().map((pick) => ({ finish: pick })) },
  { weight: 1, arbitrary: fc.constant({ observe: true as const }) },
);

/** A running job as the state holds it: nodes, slots and the GPU indices on each node. */
function factsOf(s: ClusterState, id: string, job: JobRequest): RunningJob {
  const a = s.running.get(id)!;
  return { job, start: a.start, nodes: a.nodes.map((i, k) => ({ node: s.ids[i], slots: a.slots[k], ...(a.gpus ? { gpuIndex: a.gpus[k].map((g) => g - s.gpuOff[i]) } : {}) })) };
}

/**
 * What a state says, to the bit: per-node use, island free, totals, tenants, running jobs and GPUs.
 * `digits`: round numbers to that many decimals (a state moved by events and one rebuilt
 * add the same shares in different orders, and 0.3 + 0.5 − 0.5 is not 0.3 in binary).
 */
function snapshot(s: ClusterState, digits?: number) {
  return JSON.stringify({
    used: [Array.from(s.usedCpu), Array.from(s.usedGpu), Array.from(s.usedMem)],
    islands: [Array.from(s.islandFreeCpu), Array.from(s.islandFreeGpu)],
    free: [s.freeCpu, s.freeGpu, s.freeMem],
    tenants: [...s.tenantUsage.entries()].filter(([, u]) => u.cpus || u.gpus || u.mem).sort(),
    running: [...s.running.values()].map((a) => [a.job.id, a.nodes, a.slots, a.gpus, a.start]).sort(),
    gpu: s.gpu,
    lowest: s.lowestPriority(),
  }, digits ? (_k, v) => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v * 10 ** digits) / 10 ** digits : v) : undefined);
}

describe('LiveCluster', () => {
  test('decisions on the kept state equal decide() on a state rebuilt from scratch, after any events', () => {
    fc.assert(
      fc.property(inventoryArb, policyArb, fc.array(eventArb, { minLength: 1, maxLength: 40 }), (inv, pol, events) => {
        const live = new LiveCluster(inv);
        let running: RunningJob[] = [];
        let now = 0;
        let n = 0;
        for (const e of events) {
          now += 7;
          if ('place' in e) {
            const job = toJob(e.place, `j${n++}`, now);
            const reference = decide(inv, running, job, now, pol);
            const before = snapshot(live.state);
            const asked = live.decide(job, now, pol);
            expect(asked).toEqual(reference);
            expect(snapshot(live.state)).toBe(before); // asking changes nothing
            const d = live.place(job, now, pol);
            expect(d).toEqual(reference);
            if (d.kind === 'preempt') running = running.filter((r) => !d.victims.includes(r.job.id));
            // The reference is rebuilt from the same facts the kept state has, GPUs included: a
            // placement names the GPUs of shares only, and a rebuild would put whole GPUs anywhere.
            if (d.kind === 'start' || d.kind === 'preempt') running.push(factsOf(live.state, job.id, job));
          } else if ('finish' in e) {
            if (!running.length) continue;
            const [gone] = running.splice(e.finish % running.length, 1);
            expect(live.finish(gone.job.id)).toBe(true);
          } else {
            const r = live.observe(inv, running);
            expect(r).toEqual({ rebuilt: false, started: 0, finished: 0, changed: 0 });
          }
          expect(live.size).toBe(running.length);
        }
        // A probe after the whole history: the same answer as a rebuild, for a job of every shape class.
        for (const [k, gpu] of ([{ gpus: 0 }, { gpus: 1 }, { gpus: 0.3, gpuMilli: 300 }] as Shape["gpu"][]).entries()) {
          const probe = toJob({ tenant: 'b', qos: 'gold', priority: 300, count: 2, cpus: 2, gpu, memoryMB: 512, walltime: 100, checkpointable: false, needsNvlink: false }, `probe${k}`, now);
          expect(live.decide(probe, now, pol)).toEqual(decide(inv, running, probe, now, pol));
        }
      }),
      { numRuns: 150 },
    );
  });

  test('observe moves the kept state by the difference and agrees with a rebuild', () => {
    fc.assert(
      fc.property(inventoryArb, fc.array(shapeArb, { minLength: 1, maxLength: 20 }), fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }), (inv, shapes, keep) => {
        const pol = policy({ backfill: 'easy' });
        // What runs first: whatever a pass over the shapes starts; then some leave and new ones come.
        const s = buildState(inv, []);
        const first: RunningJob[] = [];
        shapes.forEach((sh, k) => {
          const job = toJob(sh, `r${k}`, 0);
          const d = new LiveCluster(inv, first).decide(job, 0, pol);
          if (d.kind === 'start') {
            s.allocate(job, d.placement.nodes.map((x) => s.index.get(x.node)!), d.placement.nodes.map((x) => x.slots), 0);
            first.push(factsOf(s, job.id, job));
          }
        });
        const live = new LiveCluster(inv, first);
        const second = first.filter((_, k) => keep[k]).map((r, k) => (k === 0 ? { ...r, job: { ...r.job, priority: r.job.priority + 1 } } : r));
        const res = live.observe(inv, second);
        expect(res.rebuilt).toBe(false);
        expect(res.finished).toBe(first.length - second.length);
        expect(res.changed).toBe(second.length ? 1 : 0);
        const rebuilt = buildState(inv, second);
        expect(snapshot(live.state, 9)).toBe(snapshot(rebuilt, 9));
        // And the same decisions, for a job of every shape class.
        for (const [k, gpu] of ([{ gpus: 0 }, { gpus: 1 }, { gpus: 0.5 }, { gpus: 0.3, gpuMilli: 300 }] as Shape['gpu'][]).entries()) {
          const probe = toJob({ tenant: 'b', qos: 'gold', priority: 300, count: 2, cpus: 1, gpu, memoryMB: 512, walltime: 100, checkpointable: false, needsNvlink: false }, `probe${k}`, 5);
          expect(live.decide(probe, 5, pol)).toEqual(decide(inv, second, probe, 5, pol));
        }
        // A changed inventory rebuilds.
        const smaller: Inventory = { sites: [{ ...inv.sites[0], clusters: [{ ...inv.sites[0].clusters[0], partitions: inv.sites[0].clusters[0].partitions.slice(0, 1) }] }] };
        if (inv.sites[0].clusters[0].partitions.length > 1) expect(live.observe(smaller, second).rebuilt).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  test('rollback puts every figure back, including sums of shares that do not add up exactly', () => {
    const inv: Inventory = { sites: [{ name: 's', clusters: [{ name: 'c', partitions: [{ name: 'p', nodes: [{ id: 'n0', cpus: 8, gpus: 2, memoryMB: 1000 }] }] }] }] };
    const s = new ClusterState(inv);
    const share = (id: string): JobRequest => ({ id, type: 'inference', tenant: 't', qos: 'gold', priority: 1, submit: 0, count: 1, per: { cpus: 0.1, gpus: 0.1, gpuMilli: 100, memoryMB: 0.7 }, walltime: 10 });
    s.allocate(share('a'), [0], [1], 0);
    s.allocate(share('b'), [0], [1], 0);
    const before = snapshot(s);
    s.begin();
    s.release('a');
    s.allocate(share('c'), [0], [1], 0);
    s.allocate(share('a'), [0], [1], 5);
    expect(snapshot(s)).not.toBe(before);
    s.rollback();
    expect(snapshot(s)).toBe(before);
    expect(() => s.rollback()).toThrow('rollback() without begin()');
  });
});
