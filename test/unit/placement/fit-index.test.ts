// The incremental fit index (placement/fit-index.ts) against the straightforward scan: on random
// inventories (several clusters, partitions with job types and GPU models, multi-node NVLink domains,
// nodes without an island, down nodes, oversubscription) and random sequences of allocations and
// releases, the indexed fit on the live state must choose exactly the nodes and slots the scan does.
import fc from 'fast-check';
import { ClusterState, findFit, policy, type Inventory, type JobRequest, type JobType } from '../../../placement/index.js';
import { BestFit } from '../../../placement/fit-index.js';
import { checkLimits, demand, limitsFor } from '../../../placement/policies.js';
import { copyView, liveView, scanFit, mayOversubscribe } from '../../../placement/fit.js';

const nodeArb = fc.record({
  cpus: fc.integer({ min: 1, max: 64 }),
  gpus: fc.constantFrom(0, 0, 1, 2, 4, 8),
  memoryMB: fc.integer({ min: 1024, max: 65536 }),
  island: fc.integer({ min: -1, max: 3 }),
  domain: fc.integer({ min: -2, max: 2 }),
  temp: fc.integer({ min: 18, max: 22 }),
  model: fc.constantFrom('H100', 'A100'),
  down: fc.integer({ min: 0, max: 9 }).map((x) => x === 0),
});

const partArb = fc.record({
  os: fc.boolean(),
  types: fc.option(fc.subarray(['hpc-mpi', 'ai-training', 'inference', 'hybrid'] as JobType[], { minLength: 1 }), { nil: undefined }),
  nodes: fc.array(nodeArb, { minLength: 1, maxLength: 12 }),
});

const inventoryArb: fc.Arbitrary<Inventory> = fc.array(fc.array(partArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 2 }).map((clusters) => ({
  sites: [
    {
      name: 's',
      clusters: clusters.map((parts, ci) => ({
        name: `c${ci}`,
        partitions: parts.map((p, pi) => ({
          name: `p${pi}`,
          jobTypes: p.types,
          oversubscription: p.os ? { cpu: 1.2, gpu: 1.05 } : undefined,
          nodes: p.nodes.map((n, ni) => ({
            id: `c${ci}p${pi}n${ni}`,
            cpus: n.cpus,
            gpus: n.gpus,
            gpuModel: n.gpus ? n.model : undefined,
            memoryMB: n.memoryMB,
            ibIsland: n.island < 0 ? undefined : `isl${n.island}`,
            // -2: none; -1: its own domain; 0..2: a domain shared by several nodes.
            nvlinkDomain: n.domain === -2 ? undefined : n.domain === -1 ? `own-${ci}-${pi}-${ni}` : `nvl${n.domain}`,
            rackTempC: n.temp,
            down: n.down,
          })),
        })),
      })),
    },
  ],
}));

// More shapes than the index keeps (16), so eviction and re-creation are exercised too.
const shapeArb = fc.record({
  type: fc.constantFrom<JobType>('hpc-mpi', 'ai-training', 'inference', 'hybrid'),
  qos: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const),
  cpus: fc.integer({ min: 0, max: 8 }),
  gpus: fc.constantFrom(0, 0, 0.5, 1, 2),
  memoryMB: fc.constantFrom(0, 1000, 4000),
  maxPerNode: fc.option(fc.constantFrom(1, 2, 4), { nil: undefined }),
  model: fc.option(fc.constantFrom('H100', 'A100'), { nil: undefined }),
  strictIsland: fc.boolean(),
  // Hard topology constraints (choose() applies them on both paths): set now and then.
  needsNvlink: fc.integer({ min: 0, max: 3 }).map((x) => x === 0),
  needsIb: fc.integer({ min: 0, max: 3 }).map((x) => x === 0),
});

const opArb = fc.record({ shape: fc.nat(), count: fc.integer({ min: 1, max: 24 }), allocate: fc.boolean(), release: fc.nat() });

describe('indexed topology fit = straightforward scan', () => {
  test('same nodes and slots on random inventories under random allocate/release sequences', () => {
    let fits = 0;
    let compared = 0;
    fc.assert(
      fc.property(
        inventoryArb,
        fc.array(shapeArb, { minLength: 1, maxLength: 20 }),
        fc.array(opArb, { minLength: 1, maxLength: 60 }),
        fc.record({ thermal: fc.boolean(), oversubscription: fc.boolean(), smallLog: fc.boolean() }),
        (inv, shapes, ops, flags) => {
          const s = new ClusterState(inv);
          if (flags.smallLog) s.changeLogLimit = 5; // forces the indexes to rebuild from scratch
          const pol = policy({ thermal: flags.thermal, oversubscription: flags.oversubscription, topology: true });
          let seq = 0;
          for (const op of ops) {
            const sh = shapes[op.shape % shapes.length];
            const job: JobRequest = {
              id: `j${seq++}`,
              type: sh.type,
              tenant: 't',
              qos: sh.qos,
              priority: 0,
              submit: 0,
              count: op.count,
              per: { cpus: sh.cpus || (sh.gpus ? 0 : 1), gpus: sh.gpus, memoryMB: sh.memoryMB },
              maxPerNode: sh.maxPerNode,
              gpuModel: sh.model,
              strictIsland: sh.strictIsland,
              needsNvlink: sh.needsNvlink,
              needsIb: sh.needsIb,
              walltime: 100,
            };
            const indexed = findFit(s, liveView(s), job, pol);
            const scanned = scanFit(s, copyView(s), job, pol, mayOversubscribe(job, pol), job.count);
            expect(indexed).toEqual(scanned);
            compared++;
            if (indexed) fits++;
            if (indexed && op.allocate) s.allocate(job, indexed.nodes, indexed.slots, 0);
            else if (s.running.size) s.release([...s.running.keys()][op.release % s.running.size]);
          }
        },
      ),
      { numRuns: 250, seed: 7 },
    );
    // The comparison must have met both outcomes often, or it proves little.
    expect(fits).toBeGreaterThan(compared / 5);
    expect(compared - fits).toBeGreaterThan(compared / 20);
  });

  test('BestFit: smallest value ≥ need, lowest rank among equals, after moves in and out of buckets', () => {
    // Ranks reverse the group order, so rank (not index) must decide ties.
    const groupAt = Int32Array.from([4, 3, 2, 1, 0]);
    const rankOf = Int32Array.from([4, 3, 2, 1, 0]);
    const b = new BestFit(rankOf, groupAt);
    [5, 3, 5, 8, 3].forEach((v, g) => b.set(g, v));
    expect(b.best(1)).toBe(4); // value 3: groups 1 and 4, group 4 ranks first
    expect(b.best(4)).toBe(2); // value 5: groups 0 and 2
    expect(b.best(6)).toBe(3);
    expect(b.best(9)).toBe(-1);
    b.set(4, 0);
    expect(b.best(1)).toBe(1);
    b.set(1, 9);
    expect(b.best(1)).toBe(2);
    expect(b.best(9)).toBe(1);
    b.set(2, 0);
    b.set(0, 0);
    expect(b.best(4)).toBe(3);
    b.set(4, 5);
    expect(b.best(4)).toBe(4);
  });
});

describe('limit reservations: when the tenant\'s running jobs free enough', () => {
  test('same blocked/at answer as subtracting running jobs one by one, earliest end first', () => {
    const inv: Inventory = { sites: [{ name: 's', clusters: [{ name: 'c', partitions: [{ name: 'p', nodes: Array.from({ length: 6 }, (_, i) => ({ id: `n${i}`, cpus: 32, gpus: 8, memoryMB: 64_000 })) }] }] }] };
    let blocked = 0;
    fc.assert(
      fc.property(
        fc.array(fc.record({ tenant: fc.constantFrom('a', 'b'), qos: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const), cpus: fc.integer({ min: 0, max: 6 }), gpus: fc.integer({ min: 0, max: 4 }), count: fc.integer({ min: 1, max: 4 }), walltime: fc.integer({ min: 1, max: 50 }), release: fc.boolean() }), { minLength: 1, maxLength: 40 }),
        fc.record({ quotas: fc.boolean(), qos: fc.boolean() }),
        (ops, flags) => {
          const pol = policy({ ...flags, tenants: [{ name: 'a', weight: 2, quota: { cpus: 40, gpus: 10 } }, { name: 'b', weight: 1, quota: { gpus: 6 } }] });
          const s = new ClusterState(inv);
          ops.forEach((o, k) => {
            const job: JobRequest = { id: `j${k}`, type: 'hybrid', tenant: o.tenant, qos: o.qos, priority: 0, submit: 0, count: o.count, per: { cpus: o.cpus || 1, gpus: o.gpus, memoryMB: 100 }, walltime: o.walltime * 10 };
            const got = checkLimits(s, pol, job, 5);
            // The walk the binary search replaces.
            let want: { ok: boolean; at?: number } = { ok: true };
            for (const limit of limitsFor(s, pol, job)) {
              let u = { ...s.usage(job.tenant) };
              const d = demand(job);
              u = { cpus: u.cpus + d.cpus, gpus: u.gpus + d.gpus, mem: u.mem + d.mem };
              if (limit.within(u)) continue;
              if (!limit.within(d)) {
                want = { ok: false, at: Infinity };
                break;
              }
              let at = Infinity;
              for (const a of s.runningOf(job.tenant)) {
                const x = demand(a.job);
                u = { cpus: u.cpus - x.cpus, gpus: u.gpus - x.gpus, mem: u.mem - x.mem };
                if (limit.within(u)) {
                  at = Math.max(5, a.estEnd);
                  break;
                }
              }
              want = { ok: false, at };
              break;
            }
            expect(got.ok).toBe(want.ok);
            if (!got.ok) {
              blocked++;
              expect(got.at).toBe(want.at);
            }
            if (got.ok) s.allocate(job, [k % 6], [o.count], 0);
            if (o.release && s.running.size) s.release([...s.running.keys()][k % s.running.size]);
          });
        },
      ),
      { numRuns: 150, seed: 11 },
    );
    expect(blocked).toBeGreaterThan(50);
  });
});
