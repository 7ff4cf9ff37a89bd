// [real control plane] Placement's inventory from the Node objects of a real kube-apiserver
// (control-plane.ts; kwok keeps the nodes Ready): allocatable resources, pool labels, topology
// labels, readiness and cordons. placement.test.ts keeps only the pure quantity parsing.
import { kubernetesSource } from '../../activities/placement-sources.js';
import { createPlacementActivities } from '../../activities/placement.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';

let cp: ControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({
    nodes: [
      { name: 'gpu-a', gpus: 8, cpu: '64', memory: '512Gi', labels: { 'nvidia.com/gpu.product': 'A100-SXM4-80GB', 'topology.tandem.dev/nvlink-domain': 'nvl-a', 'topology.tandem.dev/ib-island': 'ib-1', 'tandem.dev/pool': 'tandem' } },
      { name: 'cpu-b', cpu: '4', memory: '16Gi', labels: { 'topology.tandem.dev/ib-island': 'ib-1' } },
    ],
  });
}, 120_000);
afterAll(() => cp?.stop());

test('nodes become a site with pools as partitions; placement decides on it; a cordon takes the node away', async () => {
  const clients = cp.clients();
  const inv = await kubernetesSource(clients, 'k8s').gather();
  expect(inv.sites[0]!.clusters[0]!.partitions).toEqual([
    { name: 'default', nodes: [expect.objectContaining({ id: 'cpu-b', cpus: 4, gpus: 0, memoryMB: 16384, ibIsland: 'ib-1', down: false })] },
    { name: 'tandem', nodes: [expect.objectContaining({ id: 'gpu-a', cpus: 64, gpus: 8, memoryMB: 524288, gpuModel: 'A100-SXM4-80GB', nvlinkDomain: 'nvl-a', down: false })] },
  ]);
  const src = kubernetesSource(clients, 'k8s');
  const { placeJob } = createPlacementActivities([src]);
  try {
    const ai = await placeJob({ job: { id: 'train', type: 'ai-training', tenant: 't', qos: 'gold', priority: 100, submit: 0, count: 8, per: { cpus: 0.25, gpus: 1, memoryMB: 1024 }, walltime: 600, needsNvlink: true } });
    expect(ai.decision).toMatchObject({ kind: 'start', placement: { site: 'k8s', partition: 'tandem', nvlinkDomains: 1 } });
    // Cordoned (kubectl cordon): the GPU node is no longer a place for new work.
    // A patch, as kubectl cordon sends: a read-then-replace races kwok's status writes (409 Conflict).
    await clients.core.patchNode({ name: 'gpu-a', body: [{ op: 'add', path: '/spec/unschedulable', value: true }] });
    const again = await placeJob({ job: { id: 'train-2', type: 'ai-training', tenant: 't', qos: 'gold', priority: 100, submit: 0, count: 8, per: { cpus: 0.25, gpus: 1, memoryMB: 1024 }, walltime: 600 } });
    expect(again.decision.kind).not.toBe('start');
  } finally {
    src.close(); // its watches, started by the decisions above
  }
});

test('the kept inventory follows the cluster by watching it: unchanged, no list per decision; a cordon and a pod are seen at once; closed, the watches stop', async () => {
  const { KeptInventory } = await import('../../activities/placement-inventory.js');
  const clients = cp.clients();
  const src = kubernetesSource(clients, 'k8s');
  // resync after an hour: what the kept state learns below comes through the watches alone.
  const kept = new KeptInventory([src], 3600);
  const now = () => Date.now() / 1000;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const until = async (what: string, ok: () => boolean) => {
    for (const end = Date.now() + 20_000; Date.now() < end; await sleep(100)) {
      await kept.refresh(now());
      if (ok()) return;
    }
    throw new Error(`the kept inventory never saw ${what}`);
  };
  const node = (id: string) => kept.inventory.sites[0]?.clusters[0]?.partitions.flatMap((p) => p.nodes).find((n) => n.id === id);
  try {
    // Until both watches are up every decision lists (as a source without a generation would).
    let steady = -1;
    await until('both watches up', () => {
      const same = kept.reads === steady;
      steady = kept.reads;
      return same;
    });
    const before = kept.reads;
    for (let k = 0; k < 20; k++) await kept.refresh(now());
    expect(kept.reads - before).toBe(0);
    // A cordon (a node's spec placement reads) moves the generation: seen without the resync.
    expect(node('cpu-b')?.down).toBe(false);
    await clients.core.patchNode({ name: 'cpu-b', body: [{ op: 'add', path: '/spec/unschedulable', value: true }] });
    await until('the cordon', () => node('cpu-b')?.down === true);
    await clients.core.patchNode({ name: 'cpu-b', body: [{ op: 'replace', path: '/spec/unschedulable', value: false }] });
    await until('the uncordon', () => node('cpu-b')?.down === false);
    // A pod of the namespace bound to a node holds its requests there.
    await clients.core.createNamespacedPod({ namespace: clients.namespace, body: { metadata: { name: 'other-team' }, spec: { nodeName: 'cpu-b', containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '2', memory: '1Gi' } } }] } } });
    await until('the pod', () => kept.running('k8s:other-team')?.job.per.cpus === 2);
    await clients.core.deleteNamespacedPod({ name: 'other-team', namespace: clients.namespace, gracePeriodSeconds: 0 });
    await until('the pod gone', () => kept.running('k8s:other-team') === undefined);
  } finally {
    await kept.close();
  }
  // Closed: both watches stop (their streams aborted), until a decision asks again.
  for (const end = Date.now() + 5000; src.watching() && Date.now() < end; ) await sleep(50);
  expect(src.watching()).toBe(false);
}, 120_000);
