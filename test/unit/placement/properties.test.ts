// Property tests on random inventories and queues: capacity and oversubscription invariants at every
// step, quotas, gang allocation, EASY never delaying its reserved head (preemptions included),
// determinism, and per-GPU share accounting.
import fc from 'fast-check';
import { ClusterState, QOS_RULES, policy, schedule, type Decision, type Inventory, type JobRequest, type PolicyConfig, type WorkloadShape } from '../../../placement/index.js';
import { reserve } from '../../../placement/reserve.js';

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

/** One change to what runs, in the order the engine made it: a job placed, or a job gone. */
type Step = { release: string } | { job: JobRequest; nodes: { node: string; cpus: number; gpus: number; memoryMB: number }[] };

/** The steps a pass's decisions stand for: a preemption releases its victims, then places the job. */
function stepsOf(decisions: Decision[], queue: JobRequest[]): Step[] {
  const out: Step[] = [];
  for (const d of decisions) {
    if (d.kind === 'preempt') for (const v of d.victims) out.push({ release: v });
    if (d.kind === 'start' || d.kind === 'preempt') out.push({ job: queue.find((j) => j.id === d.jobId)!, nodes: d.placement.nodes });
  }
  return out;
}

/** Two passes (the second after half the jobs ended) so preemption and backfill meet a busy cluster. */
function run(inv: Inventory, queue: JobRequest[], pol: PolicyConfig) {
  const s = new ClusterState(inv);
  const first = schedule(s, queue.slice(0, Math.ceil(queue.length / 2)), 0, pol);
  const ids = [...s.running.keys()];
  const gone = ids.slice(0, Math.floor(ids.length / 2));
  for (const id of gone) s.release(id);
  const rest = queue.filter((j) => !s.running.has(j.id) && !first.some((d) => d.jobId === j.id && d.kind === 'reject'));
  const second = schedule(s, rest.map((j) => ({ ...j, submit: j.submit + 1000 })), 1000, pol);
  const steps = [...stepsOf(first, queue), ...gone.map((release) => ({ release })), ...stepsOf(second, queue)];
  return { s, decisions: [...first, ...second], steps };
}

/**
 * Replays the steps on plain per-node counters built from the inventory itself and returns the first
 * breach of the oversubscription rules ('' when none). After every step, no node holds more than
 * capacity × the ratio its partition permits the classes that may oversubscribe (QOS_RULES; only with
 * the policy on) and that it hosts — 1.0 while it hosts none — and never more memory than it has. And
 * no allocation of a class that may not oversubscribe leaves any of its nodes beyond physical capacity.
 */
function overcommit(inv: Inventory, pol: PolicyConfig, steps: Step[]): string {
  const nodes = new Map<string, { cpus: number; gpus: number; mem: number; osCpu: number; osGpu: number; usedCpu: number; usedGpu: number; usedMem: number; on: Set<string> }>();
  for (const site of inv.sites)
    for (const c of site.clusters)
      for (const p of c.partitions) for (const n of p.nodes) nodes.set(n.id, { cpus: n.cpus, gpus: n.gpus, mem: n.memoryMB, osCpu: p.oversubscription?.cpu ?? 1, osGpu: p.oversubscription?.gpu ?? 1, usedCpu: 0, usedGpu: 0, usedMem: 0, on: new Set() });
  const running = new Map<string, Extract<Step, { job: JobRequest }>>();
  const mayOs = (j: JobRequest) => pol.oversubscription && QOS_RULES[j.qos].oversubscribe;
  const EPS = 1e-6;
  for (const [k, step] of steps.entries()) {
    const a = 'release' in step ? running.get(step.release) : step;
    if (!a) return `step ${k}: ${'release' in step ? step.release : '?'} released but not running`;
    const sign = 'release' in step ? -1 : 1;
    if (sign > 0) running.set(a.job.id, a);
    else running.delete(a.job.id);
    for (const x of a.nodes) {
      const n = nodes.get(x.node)!;
      n.usedCpu += sign * x.cpus;
      n.usedGpu += sign * x.gpus;
      n.usedMem += sign * x.memoryMB;
      if (sign > 0) n.on.add(a.job.id);
      else n.on.delete(a.job.id);
      if (sign > 0 && !mayOs(a.job) && (n.usedCpu > n.cpus + EPS || n.usedGpu > n.gpus + EPS)) return `step ${k}: ${a.job.qos} job ${a.job.id} takes ${x.node} beyond physical capacity (${n.usedCpu}/${n.cpus} CPU, ${n.usedGpu}/${n.gpus} GPU)`;
    }
    for (const [id, n] of nodes) {
      const os = [...n.on].some((j) => mayOs(running.get(j)!.job));
      const rc = os ? n.osCpu : 1;
      const rg = os ? n.osGpu : 1;
      if (n.usedCpu > n.cpus * rc + EPS || n.usedGpu > n.gpus * rg + EPS || n.usedMem > n.mem + EPS) return `step ${k}: ${id} holds ${n.usedCpu}/${n.cpus} CPU, ${n.usedGpu}/${n.gpus} GPU, ${n.usedMem}/${n.mem} MB, beyond its ratio ${rc}/${rg}`;
    }
  }
  return '';
}

const OPTS = { numRuns: 150, seed: 4242 };

describe('placement invariants on random inventories and queues', () => {
  test('at every step no node exceeds the ratio of the classes it hosts, and no class that may not oversubscribe pushes a node beyond physical capacity', () => {
    let over = 0;
    fc.assert(
      fc.property(inventoryArb, queueArb, policyArb, (inv, queue, pol) => {
        const { s, steps } = run(inv, queue, pol);
        expect(overcommit(inv, pol, steps)).toBe('');
        // The replay ends where the engine's own counters are.
        const replayed = new Float64Array(s.n);
        const live = new Map<string, Step>();
        for (const st of steps) if ('release' in st) live.delete(st.release); else live.set(st.job.id, st);
        for (const st of live.values()) if (!('release' in st)) for (const x of st.nodes) replayed[s.index.get(x.node)!] += x.cpus;
        for (let i = 0; i < s.n; i++) {
          expect(replayed[i]).toBeCloseTo(s.usedCpu[i], 6);
          if (s.usedCpu[i] > s.capCpu[i] + 1e-6 || s.usedGpu[i] > s.capGpu[i] + 1e-6) over++;
        }
      }),
      OPTS,
    );
    expect(over).toBeGreaterThan(10); // oversubscribed nodes were actually met
  });

  test('the overcommit check flags what the final-state check let pass', () => {
    // One 10-CPU node whose partition permits 1.2×. bronze takes 2 CPUs, then gold takes all 10: the
    // node ends at 12 ≤ 12 with an oversubscribing class on it (the old check's whole condition), but
    // the gold allocation itself went beyond physical capacity.
    const inv: Inventory = { sites: [{ name: 's', clusters: [{ name: 'c', partitions: [{ name: 'p', oversubscription: { cpu: 1.2, gpu: 1.05 }, nodes: [{ id: 'n', cpus: 10, gpus: 0, memoryMB: 100 }] }] }] }] };
    const pol = policy({ oversubscription: true });
    const j = (id: string, qos: JobRequest['qos'], cpus: number): Step => ({ job: { id, type: 'hpc-mpi', tenant: 't', qos, priority: 0, submit: 0, count: 1, per: { cpus, gpus: 0, memoryMB: 0 }, walltime: 1 }, nodes: [{ node: 'n', cpus, gpus: 0, memoryMB: 0 }] });
    expect(overcommit(inv, pol, [j('b', 'bronze', 2), j('g', 'gold', 10)])).toMatch(/gold job g takes n beyond physical capacity/);
    // Gold first, then bronze on top: allowed, up to 1.2× and no further.
    expect(overcommit(inv, pol, [j('g', 'gold', 10), j('b', 'bronze', 2)])).toBe('');
    expect(overcommit(inv, pol, [j('g', 'gold', 10), j('b', 'bronze', 3)])).toMatch(/beyond its ratio 1.2/);
    // Once the bronze job leaves, a node it oversubscribed must be back within 1.0: gold alone at 10.
    expect(overcommit(inv, pol, [j('g', 'gold', 10), j('b', 'bronze', 2), { release: 'b' }])).toBe('');
    // Without the oversubscription policy nobody goes beyond physical capacity.
    expect(overcommit(inv, policy({ oversubscription: false }), [j('g', 'gold', 8), j('b', 'bronze', 3)])).toMatch(/bronze job b takes n beyond physical/);
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

  test('EASY backfill never delays the reserved head job, preemptions included', () => {
    let heads = 0;
    let preemptedAfter = 0;
    fc.assert(
      fc.property(inventoryArb, queueArb, policyArb, (inv, q, p) => {
        // Smaller gangs and no tenant limits, so that more jobs fit but must wait: more heads.
        const queue = q.map((j) => ({ ...j, count: Math.min(j.count, 4), per: { ...j.per, cpus: Math.min(j.per.cpus, 4), memoryMB: Math.min(j.per.memoryMB, 2048) } }));
        const pol = { ...p, backfill: 'easy' as const, quotas: false, qos: false };
        const s = new ClusterState(inv);
        // Half the queue runs first, at the lowest priority, so the rest meets a busy cluster it may
        // preempt its way into.
        schedule(s, queue.slice(0, Math.ceil(queue.length / 2)).map((j) => ({ ...j, priority: 0 })), 0, pol);
        const waiting = queue.filter((j) => !s.running.has(j.id));
        const ds = schedule(s, waiting, 0, pol);
        const h = ds.findIndex((d) => d.kind === 'reserve' && d.reason === 'resources');
        const head = ds[h];
        if (!head || head.kind !== 'reserve') return;
        heads++;
        if (ds.slice(h).some((d) => d.kind === 'preempt')) preemptedAfter++;
        const again = reserve(s, queue.find((j) => j.id === head.jobId)!, 0, pol, []);
        expect(again).toBeDefined();
        expect(again!.at).toBeLessThanOrEqual(head.at);
      }),
      { ...OPTS, numRuns: 400 },
    );
    // The property met reserved heads (it holds vacuously otherwise), some followed by preemptions.
    expect(heads).toBeGreaterThan(20);
    expect(preemptedAfter).toBeGreaterThan(0);
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
