// The placement activity's kept inventory (activities/placement-inventory.ts) against the from-scratch
// reference: after any sequence of events (placements, jobs starting and ending at the site, nodes
// drained or resized), with some events lost and a resync after them, placeJob decides exactly what
// decideNow decides on the site's true inventory and running work, with and without a tenant policy.
import fc from 'fast-check';
import { createPlacementActivities, decideNow, gatherInventory, markPreemptible, type InventorySource, type RunningWork } from '../../../activities/placement.js';
import { KeptInventory } from '../../../activities/placement-inventory.js';
import { TenantGuard } from '../../../activities/tenant-policy.js';
import { policy, type Inventory, type JobRequest, type NodeSpec } from '../../../placement/index.js';

/** A site in process: the truth the kept state is checked against. */
class Site implements InventorySource {
  readonly name = 'site';
  readonly running = new Map<string, RunningWork>();
  gen = 0;
  reads = 0;
  constructor(readonly nodes: (NodeSpec & { part: string })[], private readonly withGeneration = true) {}
  inventory(): Inventory {
    const parts = ['p0', 'p1'].map((name) => ({ name, oversubscription: name === 'p0' ? { cpu: 1.2 } : undefined, nodes: this.nodes.filter((n) => n.part === name).map(({ part: _part, ...n }) => n) })).filter((p) => p.nodes.length);
    return { sites: [{ name: 's', clusters: [{ name: 'c', partitions: parts }] }] };
  }
  async gather() {
    this.reads++;
    return { sites: this.inventory().sites, running: [...this.running.values()] };
  }
  get generation() {
    return this.withGeneration ? () => this.gen : undefined;
  }
}

const nodesArb = fc.array(fc.record({ cpus: fc.integer({ min: 2, max: 32 }), gpus: fc.constantFrom(0, 0, 2, 4, 8), island: fc.integer({ min: 0, max: 2 }), p1: fc.boolean() }), { minLength: 1, maxLength: 10 }).map((ns) =>
  ns.map((n, k) => ({ id: `n${k}`, part: n.p1 && k > 0 ? 'p1' : 'p0', cpus: n.cpus, gpus: n.gpus, memoryMB: 65_536, ibIsland: `isl${n.island}`, nvlinkDomain: n.gpus ? `nvl${k}` : undefined })),
);

// Whole GPUs and CPUs only: which GPU of a node a share sits on depends on booking order, which a
// kept state moved by events and one rebuilt from a list need not share.
const shapeArb = fc.record({
  tenant: fc.constantFrom('a', 'b'),
  qos: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const),
  priority: fc.integer({ min: 0, max: 3 }).map((p) => p * 100),
  count: fc.integer({ min: 1, max: 6 }),
  cpus: fc.integer({ min: 1, max: 8 }),
  gpus: fc.constantFrom(0, 0, 1, 2),
  walltime: fc.integer({ min: 10, max: 5000 }),
  checkpointable: fc.boolean(),
  run: fc.constantFrom('r1', 'r2', 'r3'),
});
type Shape = typeof shapeArb extends fc.Arbitrary<infer T> ? T : never;
const toJob = (j: Shape, id: string, submit: number): JobRequest => ({ id, type: j.gpus ? 'ai-training' : 'hpc-mpi', tenant: j.tenant, qos: j.qos, priority: j.priority, submit, count: j.count, per: { cpus: j.cpus, gpus: j.gpus, memoryMB: 1024 }, walltime: j.walltime, checkpointable: j.checkpointable });

const eventArb = fc.oneof(
  { weight: 5, arbitrary: fc.record({ place: shapeArb, deliver: fc.boolean() }) },
  // A job the site starts by itself (another user's, or Tandem's of another worker), told or not.
  { weight: 3, arbitrary: fc.record({ foreign: shapeArb, tandem: fc.boolean(), deliver: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ finish: fc.nat(), deliver: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ node: fc.nat(), down: fc.boolean(), cpus: fc.integer({ min: 2, max: 32 }) }) },
  // What recovers lost events: an event saying something changed, or the periodic resync.
  { weight: 1, arbitrary: fc.constantFrom({ resync: 'changed' as const }, { resync: 'time' as const }) },
);

type Ev = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;
const RESYNC = 30;
const pol = policy({ tenants: [{ name: 'a', weight: 2, quota: { cpus: 40 } }, { name: 'b', weight: 1 }] });
const tenantPolicy = new TenantGuard({ tenants: { a: { sites: ['*'] }, b: { sites: ['s'], partitions: ['p0'] } } }, () => undefined);

async function run(nodes: (NodeSpec & { part: string })[], events: Ev[], guard: TenantGuard | undefined, withGeneration: boolean) {
  const site = new Site(nodes, withGeneration);
  let now = 1000;
  const clock = () => now;
  const kept = new KeptInventory([site], RESYNC, clock);
  const { placeJob } = createPlacementActivities([site], pol, clock, guard, kept);
  let inSync = true;
  let n = 0;
  let compared = 0;
  const tell = (deliver: boolean, event: () => void) => {
    if (deliver) event();
    else inSync = false;
  };
  const reference = (job: JobRequest, run: string) => {
    const inv = site.inventory();
    const restricted = guard ? guard.restrict(inv, job.tenant) : inv;
    return decideNow(restricted, markPreemptible([...site.running.values()], job, run), job, now, pol);
  };
  const check = async (shape: Shape) => {
    const job = toJob(shape, `j${n++}`, now);
    const { decision } = await placeJob({ job, run: shape.run });
    // Without a generation the site is read on every decision, so lost events never matter.
    if (inSync || !withGeneration) {
      expect(decision).toEqual(reference(job, shape.run));
      compared++;
    }
    return { job, decision };
  };
  for (const e of events) {
    now += 5;
    if ('place' in e) {
      const { job, decision } = await check(e.place);
      if (decision.kind === 'start' || decision.kind === 'preempt') {
        if (decision.kind === 'preempt')
          for (const v of decision.victims) {
            site.running.delete(v);
            tell(e.deliver, () => kept.finished(v));
          }
        const w: RunningWork = { job, start: now, nodes: decision.placement.nodes.map((p) => ({ node: p.node, slots: p.slots })), tandem: { run: e.place.run, stage: 'train', priority: job.priority, checkpointable: job.checkpointable === true, ref: { runtime: 'slurm', jobId: job.id, name: job.id, site: 's', adopted: false } } };
        site.running.set(job.id, w);
        tell(e.deliver, () => kept.started(w));
      }
    } else if ('foreign' in e) {
      // Where the site's own scheduler puts it: first fit on what really runs.
      const job = { ...toJob(e.foreign, `f${n++}`, now), preemptible: false };
      const d = decideNow(site.inventory(), [...site.running.values()], job, now, policy({ order: 'fcfs', quotas: false, qos: false, fairShare: false, preemption: false }));
      if (d.kind !== 'start') continue;
      const w: RunningWork = { job, start: now, nodes: d.placement.nodes.map((p) => ({ node: p.node, slots: p.slots })), ...(e.tandem ? { tandem: { run: 'other', stage: 'train', priority: job.priority, checkpointable: job.checkpointable === true, ref: { runtime: 'slurm' as const, jobId: job.id, name: job.id, site: 's', adopted: false } } } : {}) };
      site.running.set(job.id, w);
      tell(e.deliver, () => kept.started(w));
    } else if ('finish' in e) {
      const ids = [...site.running.keys()];
      if (!ids.length) continue;
      const id = ids[e.finish % ids.length];
      site.running.delete(id);
      tell(e.deliver, () => kept.finished(id));
    } else if ('node' in e) {
      const k = e.node % site.nodes.length;
      site.nodes[k] = { ...site.nodes[k], down: e.down, cpus: e.cpus };
      site.gen++; // the node generation moves: the next decision reads the site
    } else {
      if (e.resync === 'changed') kept.changed();
      else now += RESYNC;
      inSync = true;
    }
  }
  // However many events were lost, the periodic resync brings the kept state back to the truth.
  now += RESYNC;
  inSync = true;
  await check({ tenant: 'a', qos: 'silver', priority: 100, count: 1, cpus: 1, gpus: 0, walltime: 60, checkpointable: false, run: 'r1' });
  return { compared, reads: site.reads, kept };
}

describe('kept placement inventory', () => {
  test('placeJob on the kept state equals a from-scratch decision on the truth after any events, lost ones followed by a resync', async () => {
    await fc.assert(
      fc.asyncProperty(nodesArb, fc.array(eventArb, { minLength: 1, maxLength: 40 }), fc.boolean(), async (nodes, events, tenant) => {
        await run(nodes, events, tenant ? tenantPolicy : undefined, true);
      }),
      { numRuns: 150 },
    );
  });

  test('a source without a generation is read on every decision and agrees after every event, lost or not', async () => {
    await fc.assert(
      fc.asyncProperty(nodesArb, fc.array(eventArb, { minLength: 1, maxLength: 30 }), async (nodes, events) => {
        const { compared, reads } = await run(nodes, events, undefined, false);
        expect(reads).toBe(compared);
      }),
      { numRuns: 60 },
    );
  });

  test('with a generation, events move the state without reading the site; a lost event shows until the resync', async () => {
    const site = new Site([{ id: 'n0', part: 'p0', cpus: 8, gpus: 0, memoryMB: 65_536 }]);
    let now = 1000;
    const kept = new KeptInventory([site], RESYNC, () => now);
    const { placeJob } = createPlacementActivities([site], {}, () => now, undefined, kept);
    const job = (id: string, cpus: number): JobRequest => ({ id, type: 'hpc-mpi', tenant: 'a', qos: 'silver', priority: 100, submit: now, count: 1, per: { cpus, gpus: 0, memoryMB: 1 }, walltime: 600 });
    expect((await placeJob({ job: job('x', 8) })).decision).toMatchObject({ kind: 'start' });
    expect(site.reads).toBe(1);
    // The site starts a job nobody tells placement about: the kept state still sees 8 free CPUs.
    site.running.set('lost', { job: job('lost', 6), start: now, nodes: [{ node: 'n0', slots: 1 }] });
    now += 1;
    expect((await placeJob({ job: job('y', 4) })).decision.kind).toBe('start');
    expect(site.reads).toBe(1);
    // A told start moves it at once, without a read.
    kept.started({ job: job('told', 1), start: now, nodes: [{ node: 'n0', slots: 1 }] });
    expect(kept.size).toBe(1);
    // The resync reads the site and sees the lost job: 4 CPUs no longer fit beside it.
    now += RESYNC;
    expect((await placeJob({ job: job('z', 4) })).decision.kind).toBe('reserve');
    expect(site.reads).toBe(2);
    expect(kept.size).toBe(1); // "told" is not at the site: the resync ended it
  });

  test('a told start of a Tandem job is preempted by a higher-priority job of another run, never of its own', async () => {
    const site = new Site([{ id: 'n0', part: 'p1', cpus: 8, gpus: 0, memoryMB: 65_536 }]);
    const kept = new KeptInventory([site], RESYNC, () => 1000);
    const { placeJob } = createPlacementActivities([site], {}, () => 1000, undefined, kept);
    const job = (id: string, priority: number): JobRequest => ({ id, type: 'hpc-mpi', tenant: 'a', qos: 'silver', priority, submit: 1000, count: 1, per: { cpus: 8, gpus: 0, memoryMB: 1 }, walltime: 600, checkpointable: true });
    await placeJob({ job: job('first', 1) });
    kept.started({ job: job('low', 1), start: 990, nodes: [{ node: 'n0', slots: 1 }], tandem: { run: 'r1', stage: 'train', priority: 1, checkpointable: true, ref: { runtime: 'slurm', jobId: '7', name: 'low', site: 's', adopted: false } } });
    expect((await placeJob({ job: job('mine', 100), run: 'r1' })).decision.kind).toBe('reserve');
    const other = await placeJob({ job: job('theirs', 100), run: 'r2' });
    expect(other.decision).toMatchObject({ kind: 'preempt', victims: ['low'] });
    expect(other.victims).toMatchObject([{ run: 'r1', label: 'job 7 of run r1 (priority 1)' }]);
  });

  test('gathering and deciding with 150,000 running jobs does not overflow the stack', async () => {
    const nodes: NodeSpec[] = Array.from({ length: 50_000 }, (_, k) => ({ id: `n${k}`, cpus: 64, gpus: 0, memoryMB: 256_000 }));
    const running: RunningWork[] = Array.from({ length: 150_000 }, (_, k) => ({ job: { id: `w${k}`, type: 'hpc-mpi', tenant: 'site', qos: 'gold', priority: 1000, submit: 0, count: 1, per: { cpus: 8, gpus: 0, memoryMB: 1000 }, walltime: 3600, preemptible: false }, nodes: [{ node: `n${k % 50_000}`, slots: 1 }], start: 1 }));
    const big: InventorySource = { name: 'big', gather: async () => ({ sites: [{ name: 'b', clusters: [{ name: 'c', partitions: [{ name: 'p', nodes }] }] }], running }) };
    const { running: gathered } = await gatherInventory([big]);
    expect(gathered.length).toBe(150_000);
    const { placeJob } = createPlacementActivities([big], {}, () => 100);
    const { decision } = await placeJob({ job: { id: 'q', type: 'hpc-mpi', tenant: 'a', qos: 'silver', priority: 1, submit: 100, count: 1, per: { cpus: 40, gpus: 0, memoryMB: 1000 }, walltime: 60 } });
    expect(decision.kind).toBe('start');
  });
});
