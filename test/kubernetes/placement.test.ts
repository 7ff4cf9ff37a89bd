// Placement's inventory from a Kubernetes cluster (the fake API server, through the real client):
// allocatable resources, pool labels, topology labels, readiness and cordons.
import { KubeClients } from '../../backends/kubernetes/client.js';
import { cpuQuantity, kubernetesSource, memoryMiB } from '../../activities/placement-sources.js';
import { createPlacementActivities } from '../../activities/placement.js';
import { startFakeCluster, type FakeCluster } from './fake/cluster.js';

let cluster: FakeCluster;
beforeAll(async () => {
  cluster = await startFakeCluster({
    nodes: [
      { name: 'gpu-a', gpus: 8, labels: { 'nvidia.com/gpu.product': 'A100-SXM4-80GB', 'topology.tandem.dev/nvlink-domain': 'nvl-a', 'topology.tandem.dev/ib-island': 'ib-1', 'tandem.dev/pool': 'tandem' } },
      { name: 'cpu-b', gpus: 0, labels: { 'topology.tandem.dev/ib-island': 'ib-1' } },
    ],
  });
});
afterAll(() => cluster?.close());

test('quantities', () => {
  expect(cpuQuantity('3500m')).toBe(3.5);
  expect(cpuQuantity('4')).toBe(4);
  expect(memoryMiB('16Gi')).toBe(16384);
  expect(memoryMiB('1048576Ki')).toBe(1024);
  expect(memoryMiB('1G')).toBe(953);
});

test('nodes become a site with pools as partitions; placement decides on it', async () => {
  const clients = new KubeClients({ kubeConfig: cluster.kubeConfig() });
  const inv = await kubernetesSource(clients, 'k8s').gather();
  expect(inv.sites[0]!.clusters[0]!.partitions).toEqual([
    { name: 'default', nodes: [expect.objectContaining({ id: 'cpu-b', cpus: 4, gpus: 0, memoryMB: 16384, ibIsland: 'ib-1', down: false })] },
    { name: 'tandem', nodes: [expect.objectContaining({ id: 'gpu-a', gpus: 8, gpuModel: 'A100-SXM4-80GB', nvlinkDomain: 'nvl-a' })] },
  ]);
  const { placeJob } = createPlacementActivities([kubernetesSource(clients, 'k8s')]);
  const ai = await placeJob({ job: { id: 'train', type: 'ai-training', tenant: 't', qos: 'gold', priority: 100, submit: 0, count: 8, per: { cpus: 0.25, gpus: 1, memoryMB: 1024 }, walltime: 600, needsNvlink: true } });
  expect(ai.decision).toMatchObject({ kind: 'start', placement: { site: 'k8s', partition: 'tandem', nvlinkDomains: 1 } });
  // Cordoned: the GPU node is no longer a place for new work.
  const node = await clients.core.readNode({ name: 'gpu-a' });
  await clients.core.replaceNode({ name: 'gpu-a', body: { ...node, spec: { ...node.spec, unschedulable: true } } });
  const again = await placeJob({ job: { id: 'train-2', type: 'ai-training', tenant: 't', qos: 'gold', priority: 100, submit: 0, count: 8, per: { cpus: 0.25, gpus: 1, memoryMB: 1024 }, walltime: 600 } });
  expect(again.decision.kind).not.toBe('start');
});
