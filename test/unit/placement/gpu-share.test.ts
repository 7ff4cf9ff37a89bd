// GPU sharing on hand-built cases whose right answer is known: shares inside one GPU, whole-GPU slots
// on untouched GPUs only, release, preemption, and the FGD packing policy against best fit.
import fc from 'fast-check';
import { ClusterState, decide, findFit, liveView, policy, schedule, typicalWorkload, type Decision, type JobRequest, type WorkloadShape } from '../../../placement/index.js';
import { copyView, mayOversubscribe, scanFit } from '../../../placement/fit.js';
import { compileWorkload, fragmentation } from '../../../placement/fragmentation.js';
import { gpuNode, inventory, job } from '../../placement/fixtures.js';

const off = { quotas: false, fairShare: false, qos: false, preemption: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;
const pol = policy({ ...off, order: 'fcfs' });
const share = (id: string, milli: number, over: Partial<JobRequest> = {}): JobRequest => job({ id, per: { cpus: 1, gpus: milli / 1000, memoryMB: 0, gpuMilli: milli }, ...over });
const whole = (id: string, gpus: number, over: Partial<JobRequest> = {}): JobRequest => job({ id, per: { cpus: 1, gpus, memoryMB: 0 }, ...over });
const kinds = (ds: Decision[]) => Object.fromEntries(ds.map((d) => [d.jobId, d.kind]));
const freeOf = (s: ClusterState, node: string) => {
  const i = s.index.get(node)!;
  return [...s.gpu.free.subarray(s.gpuOff[i], s.gpuOff[i + 1])];
};
const placed = (d: Decision) => ('placement' in d && d.placement ? d.placement.nodes.map((n) => ({ node: n.node, gpuIndex: n.gpuIndex })) : []);

describe('shares of one GPU', () => {
  test('a 0.5 share fits beside another 0.5 on the same GPU', () => {
    const s = new ClusterState(inventory([gpuNode('g', { gpus: 1 })]));
    const ds = schedule(s, [share('a', 500, { submit: 1 }), share('b', 500, { submit: 2 })], 0, pol);
    expect(kinds(ds)).toEqual({ a: 'start', b: 'start' });
    expect(ds.map(placed)).toEqual([[{ node: 'g', gpuIndex: [0] }], [{ node: 'g', gpuIndex: [0] }]]);
    expect(freeOf(s, 'g')).toEqual([0]);
    expect(s.usedGpu[0]).toBeCloseTo(1, 9);
  });

  test('a 0.6 share does not fit beside a 0.5, even where the node has 1.0 GPU free in total', () => {
    const s = new ClusterState(inventory([gpuNode('g', { gpus: 2 })]));
    // One 0.5 on each GPU: 500 + 500 free, no single GPU with 600.
    s.allocate(share('x', 500), [0], [1], 0, [[0]]);
    s.allocate(share('y', 500), [0], [1], 0, [[1]]);
    expect(s.capGpu[0] - s.usedGpu[0]).toBeCloseTo(1, 9);
    const ds = schedule(s, [share('big', 600)], 0, pol);
    expect(ds).toMatchObject([{ jobId: 'big', kind: 'reserve', at: 3600 }]);
    expect(kinds(schedule(s, [share('fits', 500)], 0, pol))).toEqual({ fits: 'start' });
  });

  test('shares pack onto the tightest GPU they fit, leaving emptier GPUs whole', () => {
    const s = new ClusterState(inventory([gpuNode('g', { gpus: 3 })]));
    s.allocate(share('x', 300), [0], [1], 0, [[1]]);
    s.allocate(share('y', 700), [0], [1], 0, [[2]]);
    const ds = schedule(s, [share('z', 250)], 0, pol);
    expect(placed(ds[0])).toEqual([{ node: 'g', gpuIndex: [2] }]); // 300 free on GPU 2, 700 on GPU 1, 1000 on GPU 0
    expect(freeOf(s, 'g')).toEqual([1000, 700, 50]);
  });

  test('the GPU model constraint holds for shares', () => {
    const s = new ClusterState(inventory([gpuNode('a100', { gpus: 1, gpuModel: 'A100' }), gpuNode('h100', { gpus: 1, gpuModel: 'H100' })]));
    const ds = schedule(s, [share('m', 300, { gpuModel: 'H100' })], 0, pol);
    expect(placed(ds[0])).toEqual([{ node: 'h100', gpuIndex: [0] }]);
  });

  test('an impossible share is rejected, not rounded', () => {
    const s = new ClusterState(inventory([gpuNode('g')]));
    const bad = [job({ id: 'whole', per: { cpus: 1, gpus: 1, memoryMB: 0, gpuMilli: 1000 } }), job({ id: 'mismatch', per: { cpus: 1, gpus: 0, memoryMB: 0, gpuMilli: 500 } })];
    const ds = schedule(s, bad, 0, pol);
    expect(ds).toMatchObject([{ kind: 'reject', reason: 'invalid' }, { kind: 'reject', reason: 'invalid' }]);
    expect(() => s.allocate(bad[1], [0], [1], 0)).toThrow(/disagrees/);
    expect(s.running.size).toBe(0);
  });
});

describe('whole GPUs beside shares', () => {
  test('a whole-GPU slot skips partly used GPUs', () => {
    const s = new ClusterState(inventory([gpuNode('g', { gpus: 2 })]));
    expect(kinds(schedule(s, [share('s', 300)], 0, pol))).toEqual({ s: 'start' });
    expect(freeOf(s, 'g')).toEqual([700, 1000]);
    schedule(s, [whole('w', 1)], 0, pol);
    expect(s.running.get('w')!.gpus).toEqual([[1]]);
    expect(freeOf(s, 'g')).toEqual([700, 0]);
  });

  test('no whole-GPU slot where every GPU is partly used, though the node counter has a GPU free', () => {
    const s = new ClusterState(inventory([gpuNode('g', { gpus: 2 })]));
    s.allocate(share('x', 500), [0], [1], 0, [[0]]);
    s.allocate(share('y', 500), [0], [1], 0, [[1]]);
    expect(schedule(s, [whole('w', 1)], 0, pol)).toMatchObject([{ jobId: 'w', kind: 'reserve' }]);
  });

  test('release gives every thousandth back', () => {
    const s = new ClusterState(inventory([gpuNode('g', { gpus: 4 })]));
    schedule(s, [share('a', 300, { submit: 1 }), share('b', 450, { submit: 2 }), whole('w', 2, { submit: 3 }), share('c', 999, { submit: 4 })], 0, pol);
    expect(s.running.size).toBe(4);
    expect(freeOf(s, 'g')).toEqual([250, 0, 0, 1]);
    expect([s.gpu.whole[0], s.gpu.partial[0]]).toEqual([0, 2]);
    for (const id of ['b', 'w', 'a', 'c']) s.release(id);
    expect(freeOf(s, 'g')).toEqual([1000, 1000, 1000, 1000]);
    expect([s.gpu.whole[0], s.gpu.partial[0]]).toEqual([4, 0]);
    expect(s.usedGpu[0]).toBeCloseTo(0, 9);
  });

  test('preempting a share frees exactly its GPU for the preemptor', () => {
    const s = new ClusterState(inventory([gpuNode('g', { gpus: 1 })]));
    const p = policy({ ...off, order: 'priority', preemption: true });
    schedule(s, [share('low', 600, { priority: 1 })], 0, p);
    const ds = schedule(s, [share('high', 700, { priority: 9 })], 10, p);
    expect(ds).toMatchObject([{ jobId: 'high', kind: 'preempt', victims: ['low'] }]);
    expect(freeOf(s, 'g')).toEqual([300]);
  });

  test('decide honours the GPUs a running share is known to sit on', () => {
    const inv = inventory([gpuNode('g', { gpus: 2 })]);
    const running = [{ job: share('r', 500), nodes: [{ node: 'g', slots: 1, gpuIndex: [1] }], start: 0 }];
    expect(decide(inv, running, whole('two', 2), 0, pol)).toMatchObject({ kind: 'reserve' });
    const one = decide(inv, running, share('s', 600), 0, pol);
    expect(one).toMatchObject({ kind: 'start', placement: { nodes: [{ node: 'g', gpuIndex: [0] }] } });
  });
});

describe('fragmentation-aware packing (FGD)', () => {
  // Node a: one untouched GPU. Node b: two GPUs with 600 free each. A 0.5 share arrives.
  const setup = () => {
    const s = new ClusterState(inventory([gpuNode('a', { gpus: 1 }), gpuNode('b', { gpus: 2 })]));
    s.allocate(share('x', 400), [1], [1], 0, [[1]]);
    s.allocate(share('y', 400), [1], [1], 0, [[2]]);
    return s;
  };
  const wholeGpus: WorkloadShape[] = [{ share: 1, cpus: 1, gpus: 1 }];

  test('when the workload needs whole GPUs, FGD keeps the untouched GPU whole; best fit does not', () => {
    const fgd = setup();
    const d = schedule(fgd, [share('t', 500)], 0, policy({ ...off, order: 'fcfs', packing: 'fgd', targetWorkload: wholeGpus }));
    expect(placed(d[0])).toEqual([{ node: 'b', gpuIndex: [0] }]);
    expect(d[0].explanation).toMatch(/FGD packing: expected GPU fragmentation -500 thousandths \(score 62\/100\), the best of 2 candidate node/);
    expect(fgd.gpu.whole[0]).toBe(1);
    // Best fit leaves the least behind: node a (0.5 of 1 GPU) over node b (0.7 of 2).
    const bf = setup();
    expect(placed(schedule(bf, [share('t', 500)], 0, policy({ ...off, order: 'fcfs', packing: 'best-fit' }))[0])).toEqual([{ node: 'a', gpuIndex: [0] }]);
    expect(bf.gpu.whole[0]).toBe(0);
  });

  test('the fragmentation measure on a hand-computed node', () => {
    const w = compileWorkload([{ share: 0.5, cpus: 4, gpus: 1 }, { share: 0.25, cpus: 0, gpus: 0 }, { share: 0.25, cpus: 1, gpus: 0, gpuMilli: 700 }]);
    const free = Int32Array.from([1000, 600, 300]);
    // Whole GPU: GPU 0 fits, 900 on the others are fragments. CPU-only: all 1,900. 0.7 share: GPU 0 fits, 900 again.
    expect(fragmentation(w, 8, 0, 'H100', free, 0, 3)).toBeCloseTo(0.5 * 900 + 0.25 * 1900 + 0.25 * 900, 9);
    // Without CPU for the whole-GPU shape, its view is all 1,900.
    expect(fragmentation(w, 2, 0, 'H100', free, 0, 3)).toBeCloseTo(0.5 * 1900 + 0.25 * 1900 + 0.25 * 900, 9);
    expect(fragmentation(w, 8, 0, 'H100', Int32Array.from([0, 0]), 0, 2)).toBe(0);
  });

  test('the typical workload keeps the most frequent shapes up to the coverage and renormalises', () => {
    const t = (gpus: number, gpuMilli?: number) => ({ cpus: 1, gpus, gpuMilli });
    const tasks = [...Array(6).fill(t(1)), ...Array(3).fill(t(0.5, 500)), t(8)];
    expect(typicalWorkload(tasks, 0.9)).toEqual([
      { ...t(1), share: 6 / 9 },
      { ...t(0.5, 500), share: 3 / 9 },
    ]);
    expect(typicalWorkload(tasks, 1).map((x) => x.share)).toEqual([0.6, 0.3, 0.1]);
  });

  test('a gang that fits on no single node still gets the topology fit', () => {
    const s = new ClusterState(inventory([gpuNode('a', { gpus: 2 }), gpuNode('b', { gpus: 2 })]));
    const ds = schedule(s, [whole('gang', 1, { count: 3 })], 0, policy({ ...off, order: 'fcfs', packing: 'fgd', targetWorkload: wholeGpus }));
    expect(ds[0].kind).toBe('start');
    expect(s.running.get('gang')!.slots.reduce((a, b) => a + b, 0)).toBe(3);
  });
});

describe('the fit index with shares', () => {
  test('indexed fit = scan when shares and whole GPUs come and go', () => {
    let fits = 0;
    let compared = 0;
    const shapeArb = fc.record({ milli: fc.constantFrom(0, 0, 250, 500, 600, 999), gpus: fc.constantFrom(1, 2), cpus: fc.integer({ min: 0, max: 4 }), count: fc.integer({ min: 1, max: 6 }) });
    fc.assert(
      fc.property(fc.array(fc.constantFrom(1, 2, 4, 8), { minLength: 1, maxLength: 8 }), fc.array(fc.record({ shape: shapeArb, allocate: fc.boolean(), release: fc.nat() }), { minLength: 1, maxLength: 50 }), (gpus, ops) => {
        const s = new ClusterState(inventory(gpus.map((g, k) => gpuNode(`n${k}`, { gpus: g, cpus: 16, ibIsland: `isl${k % 2}` }))));
        const p = policy({ oversubscription: false });
        ops.forEach((op, k) => {
          const { milli, gpus: g, cpus, count } = op.shape;
          const j = milli ? share(`j${k}`, milli, { count, per: { cpus, gpus: milli / 1000, memoryMB: 0, gpuMilli: milli } }) : whole(`j${k}`, g, { count, per: { cpus, gpus: g, memoryMB: 0 } });
          const indexed = findFit(s, liveView(s), j, p);
          expect(indexed).toEqual(scanFit(s, copyView(s), j, p, mayOversubscribe(j, p), count));
          compared++;
          if (indexed) fits++;
          if (indexed && op.allocate) s.allocate(j, indexed.nodes, indexed.slots, 0);
          else if (s.running.size) s.release([...s.running.keys()][op.release % s.running.size]);
        });
      }),
      { numRuns: 150, seed: 5 },
    );
    expect(fits).toBeGreaterThan(compared / 5);
    expect(compared - fits).toBeGreaterThan(compared / 20);
  });
});
