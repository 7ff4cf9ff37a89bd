// needsNvlink and needsIb as hard placement constraints, on hand-built cases whose right answer is
// known: inside one NVLink domain / one IB island, or reserved until one has room, or rejected (with
// the reason) when none ever could; under topology-aware fit, first-fit and best-fit packing alike.
import { ClusterState, decide, policy, schedule, type Decision, type JobRequest, type NodeSpec } from '../../../placement/index.js';
import { cpuNode, gpuNode, inventory, job } from '../../placement/fixtures.js';

const off = { quotas: false, fairShare: false, qos: false, preemption: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;
const pol = policy({ ...off, order: 'fcfs' });
const nodesOf = (d: Decision) => ('placement' in d && d.placement ? d.placement.nodes.map((n) => n.node) : []);
const gpus = (id: string, count: number, over: Partial<JobRequest> = {}) => job({ id, count, ...over });
const ranks = (id: string, count: number, over: Partial<JobRequest> = {}) => job({ id, type: 'hpc-mpi', count, per: { cpus: 1, gpus: 0, memoryMB: 0 }, ...over });

describe('needsNvlink: one NVLink domain', () => {
  test('no domain has room now: reserved for when one will, not started across two', () => {
    const s = new ClusterState(inventory([gpuNode('g1'), gpuNode('g2')]));
    s.allocate(gpus('x', 4, { walltime: 3600 }), [0], [4], 0);
    s.allocate(gpus('y', 4, { walltime: 7200 }), [1], [4], 0);
    const d = schedule(s, [gpus('nv8', 8, { needsNvlink: true })], 0, pol)[0];
    expect(d).toMatchObject({ kind: 'reserve', reason: 'resources', at: 3600, placement: { nvlinkDomains: 1, nodes: [{ node: 'g1', gpus: 8 }] } });
    expect(d.explanation).toBe('reserved from t=3600 on 1 node(s) of zurich/alps/normal, 1 NVLink domain(s), 1 IB island(s); needsNvlink: inside one NVLink domain (running jobs end by their estimates)');
    // Without the flag the same gang starts now on both half-free nodes.
    expect(schedule(s, [gpus('free8', 8)], 0, pol)[0]).toMatchObject({ kind: 'start', placement: { nvlinkDomains: 2 } });
  });

  test('no domain is ever large enough: rejected, saying so; without the flag it starts on two nodes', () => {
    const inv = inventory([gpuNode('g1'), gpuNode('g2')]);
    const d = schedule(new ClusterState(inv), [gpus('nv16', 16, { needsNvlink: true })], 0, pol)[0];
    expect(d).toMatchObject({ kind: 'reject', reason: 'too-large' });
    expect(d.explanation).toBe('no single NVLink domain can ever hold 16 slot(s) of 0 CPU / 1 GPU / 0 MB, and the job must stay inside one (needsNvlink): the largest holds 8 of its 16 slot(s) on the idle cluster');
    // decide() (the activity's entry) gives the same answer.
    expect(decide(inv, [], gpus('nv16', 16, { needsNvlink: true }), 0, pol)).toMatchObject({ kind: 'reject', reason: 'too-large' });
    expect(schedule(new ClusterState(inv), [gpus('any16', 16)], 0, pol)[0]).toMatchObject({ kind: 'start', placement: { nvlinkDomains: 2 } });
  });

  test('a node that declares no NVLink domain never takes the job', () => {
    const pcie = inventory([gpuNode('p', { nvlinkDomain: undefined })]);
    const d = schedule(new ClusterState(pcie), [gpus('nv2', 2, { needsNvlink: true })], 0, pol)[0];
    expect(d).toMatchObject({ kind: 'reject', reason: 'too-large' });
    expect(d.explanation).toMatch(/the largest holds 0 of its 2 slot\(s\)/);
    expect(schedule(new ClusterState(pcie), [gpus('plain2', 2)], 0, pol)[0]).toMatchObject({ kind: 'start', placement: { nvlinkDomains: 0 } });
  });

  test('first-fit (topology off) fills one multi-node domain instead of the first nodes in inventory order', () => {
    // solo: 8 GPUs in its own domain, first in inventory; r1-r4: 4 GPUs each in one shared domain.
    const nodes: NodeSpec[] = [gpuNode('solo'), ...['r1', 'r2', 'r3', 'r4'].map((id) => gpuNode(id, { gpus: 4, nvlinkDomain: 'nvl-rack' }))];
    const ff = policy({ ...off, order: 'fcfs', topology: false });
    const d = schedule(new ClusterState(inventory(nodes)), [gpus('nv12', 12, { needsNvlink: true })], 0, ff)[0];
    expect(d).toMatchObject({ kind: 'start', placement: { nvlinkDomains: 1 } });
    expect(nodesOf(d)).toEqual(['r1', 'r2', 'r3']);
    expect(nodesOf(schedule(new ClusterState(inventory(nodes)), [gpus('any12', 12)], 0, ff)[0])).toEqual(['solo', 'r1']);
    // Topology-aware, the same domain.
    expect(nodesOf(schedule(new ClusterState(inventory(nodes)), [gpus('nv12', 12, { needsNvlink: true })], 0, pol)[0])).toHaveLength(3);
  });

  test('best-fit packing skips the tighter node when it has no NVLink domain', () => {
    const nodes = [gpuNode('pcie', { gpus: 4, nvlinkDomain: undefined }), gpuNode('nvl')];
    const bf = policy({ ...off, order: 'fcfs', packing: 'best-fit' });
    expect(nodesOf(schedule(new ClusterState(inventory(nodes)), [gpus('nv2', 2, { needsNvlink: true })], 0, bf)[0])).toEqual(['nvl']);
    expect(nodesOf(schedule(new ClusterState(inventory(nodes)), [gpus('plain2', 2)], 0, bf)[0])).toEqual(['pcie']);
  });

  test('a CPU-only job is not bound by needsNvlink (NVLink joins GPUs)', () => {
    const d = schedule(new ClusterState(inventory([cpuNode('c1'), cpuNode('c2')])), [ranks('cpu2', 2, { needsNvlink: true })], 0, pol)[0];
    expect(d).toMatchObject({ kind: 'start', placement: { nvlinkDomains: 0 } });
    expect(d.explanation).not.toMatch(/needsNvlink/);
  });

  test('with needsIb too, a domain whose nodes span two islands is passed over', () => {
    // nvl-x spans islands A and B; nvl-y lies inside A. Both hold 8 GPUs; nvl-x comes first.
    const nodes = [gpuNode('x1', { gpus: 4, nvlinkDomain: 'nvl-x', ibIsland: 'A' }), gpuNode('x2', { gpus: 4, nvlinkDomain: 'nvl-x', ibIsland: 'B' }), gpuNode('y1', { gpus: 4, nvlinkDomain: 'nvl-y', ibIsland: 'A' }), gpuNode('y2', { gpus: 4, nvlinkDomain: 'nvl-y', ibIsland: 'A' })];
    const both = schedule(new ClusterState(inventory(nodes)), [gpus('both', 8, { needsNvlink: true, needsIb: true })], 0, pol)[0];
    expect(both).toMatchObject({ kind: 'start', placement: { nvlinkDomains: 1, ibIslands: 1 } });
    expect(nodesOf(both)).toEqual(['y1', 'y2']);
    expect(both.explanation).toMatch(/; needsNvlink: inside one NVLink domain; needsIb: inside one IB island$/);
    expect(nodesOf(schedule(new ClusterState(inventory(nodes)), [gpus('nv', 8, { needsNvlink: true })], 0, pol)[0])).toEqual(['x1', 'x2']);
  });
});

describe('needsIb: one InfiniBand island, like a strict island', () => {
  const islands = (a: number, b: number) => [...Array.from({ length: a }, (_, k) => cpuNode(`a${k + 1}`, { ibIsland: 'A' })), ...Array.from({ length: b }, (_, k) => cpuNode(`b${k + 1}`, { ibIsland: 'B' }))];

  test('no island is ever large enough: rejected, saying so; without the flag it spans two', () => {
    const inv = inventory(islands(4, 4));
    const d = schedule(new ClusterState(inv), [ranks('ib5', 5, { needsIb: true })], 0, pol)[0];
    expect(d).toMatchObject({ kind: 'reject', reason: 'too-large' });
    expect(d.explanation).toBe('no single IB island can ever hold 5 slot(s) of 1 CPU / 0 GPU / 0 MB, and the job must stay inside one (needsIb): the largest holds 4 of its 5 slot(s) on the idle cluster');
    expect(schedule(new ClusterState(inv), [ranks('any5', 5)], 0, pol)[0]).toMatchObject({ kind: 'start', placement: { ibIslands: 2 } });
  });

  test('no island has room now: reserved for when one will', () => {
    const s = new ClusterState(inventory(islands(4, 4)));
    s.allocate(ranks('fa', 2, { walltime: 100 }), [0, 1], [1, 1], 0);
    s.allocate(ranks('fb', 2, { walltime: 200 }), [4, 5], [1, 1], 0);
    const d = schedule(s, [ranks('ib3', 3, { needsIb: true })], 0, pol)[0];
    expect(d).toMatchObject({ kind: 'reserve', at: 100, placement: { ibIslands: 1 } });
    expect(nodesOf(d).every((n) => n.startsWith('a'))).toBe(true);
    expect(d.explanation).toMatch(/1 IB island\(s\); needsIb: inside one IB island \(running jobs end/);
    expect(schedule(s, [ranks('any3', 3)], 0, pol)[0]).toMatchObject({ kind: 'start', placement: { ibIslands: 2 } });
  });

  test('first-fit (topology off) takes the first island that holds all ranks', () => {
    const ff = policy({ ...off, order: 'fcfs', topology: false });
    expect(nodesOf(schedule(new ClusterState(inventory(islands(2, 4))), [ranks('ib3', 3, { needsIb: true })], 0, ff)[0])).toEqual(['b1', 'b2', 'b3']);
    expect(nodesOf(schedule(new ClusterState(inventory(islands(2, 4))), [ranks('any3', 3)], 0, ff)[0])).toEqual(['a1', 'a2', 'b1']);
  });
});
