// FGD's node score on the integer scale of the authors' Kubernetes plugin (fgd_score.go), and the
// ties it makes: near-equal nodes go to the first in order, not to the strictly least growth.
import { ClusterState, policy, schedule, type Decision, type JobRequest, type WorkloadShape } from '../../../placement/index.js';
import { fgdScore } from '../../../placement/packing.js';
import { gpuNode, inventory, job } from '../../placement/fixtures.js';

const off = { quotas: false, fairShare: false, qos: false, preemption: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;
const share = (id: string, milli: number): JobRequest => job({ id, per: { cpus: 1, gpus: milli / 1000, memoryMB: 0, gpuMilli: milli } });
const placed = (d: Decision) => ('placement' in d && d.placement ? d.placement.nodes.map((n) => ({ node: n.node, gpuIndex: n.gpuIndex })) : []);

describe('fgdScore', () => {
  test('is trunc(100 · sigmoid(-growth / 1000)), the plugin formula', () => {
    expect(fgdScore(0)).toBe(50);
    expect(fgdScore(-1000)).toBe(73); // 100 · σ(1) = 73.1
    expect(fgdScore(1000)).toBe(26); // 100 · σ(-1) = 26.9
    expect(fgdScore(39)).toBe(49); // just under 50: any growth at all loses the half point
    expect(fgdScore(-39)).toBe(50);
    expect(fgdScore(-8000)).toBe(99);
    expect(fgdScore(8000)).toBe(0);
    expect(fgdScore(4700)).toBe(0); // large growths all tie at the bottom
  });

  test('growths inside one score step tie; a step apart they do not', () => {
    expect(fgdScore(245)).toBe(fgdScore(250)); // 43.9 and 43.8
    expect(fgdScore(240)).toBeGreaterThan(fgdScore(250)); // 44.0
  });
});

describe('FGD packing on the integer score', () => {
  // A 0.5 share arrives; the workload is 0.7 shares. Node a has 750 free on GPU 1, node b 745: the
  // share on GPU 1 leaves 250 (a) or 245 (b) thousandths no 0.7 share can use. b grows 5 less, but
  // both score 43, so the tie goes to a, the first node (the least-growth rule would take b).
  const setup = () => {
    const s = new ClusterState(inventory([gpuNode('a', { gpus: 2 }), gpuNode('b', { gpus: 2 })]));
    s.allocate(share('x', 250), [0], [1], 0, [[1]]);
    s.allocate(share('y', 255), [1], [1], 0, [[3]]);
    return s;
  };
  const workload: WorkloadShape[] = [{ share: 1, cpus: 1, gpus: 0.7, gpuMilli: 700 }];

  test('a tie within one score step goes to the first node in order', () => {
    const s = setup();
    const d = schedule(s, [share('t', 500)], 0, policy({ ...off, order: 'fcfs', packing: 'fgd', targetWorkload: workload }));
    expect(placed(d[0])).toEqual([{ node: 'a', gpuIndex: [1] }]);
    expect(d[0].explanation).toMatch(/FGD packing: expected GPU fragmentation \+250 thousandths \(score 43\/100\), the best of 2 candidate node/);
  });

  test('a growth a whole step lower still wins over the first node', () => {
    const s = new ClusterState(inventory([gpuNode('a', { gpus: 2 }), gpuNode('b', { gpus: 2 })]));
    s.allocate(share('x', 250), [0], [1], 0, [[1]]);
    s.allocate(share('y', 300), [1], [1], 0, [[3]]); // b: 700 free on GPU 1, the share leaves 200 (score 45)
    const d = schedule(s, [share('t', 500)], 0, policy({ ...off, order: 'fcfs', packing: 'fgd', targetWorkload: workload }));
    expect(placed(d[0])).toEqual([{ node: 'b', gpuIndex: [1] }]);
  });
});
