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
  const { placeJob } = createPlacementActivities([kubernetesSource(clients, 'k8s')]);
  const ai = await placeJob({ job: { id: 'train', type: 'ai-training', tenant: 't', qos: 'gold', priority: 100, submit: 0, count: 8, per: { cpus: 0.25, gpus: 1, memoryMB: 1024 }, walltime: 600, needsNvlink: true } });
  expect(ai.decision).toMatchObject({ kind: 'start', placement: { site: 'k8s', partition: 'tandem', nvlinkDomains: 1 } });
  // Cordoned (kubectl cordon): the GPU node is no longer a place for new work.
  const node = await clients.core.readNode({ name: 'gpu-a' });
  await clients.core.replaceNode({ name: 'gpu-a', body: { ...node, spec: { ...node.spec, unschedulable: true } } });
  const again = await placeJob({ job: { id: 'train-2', type: 'ai-training', tenant: 't', qos: 'gold', priority: 100, submit: 0, count: 8, per: { cpus: 0.25, gpus: 1, memoryMB: 1024 }, walltime: 600 } });
  expect(again.decision.kind).not.toBe('start');
});
