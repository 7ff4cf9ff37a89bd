// Inventory sources for placement: Slurm sites through whichever API the worker has (FirecREST v2
// /status/{system}/nodes, or slurmrestd /nodes), and Kubernetes clusters (Nodes and Pods). Topology comes from node features by Tandem's
// convention: `ib:<island>`, `nvlink:<domain>`, `rack:<rack>` (and `gpu:<model>:<count>` where the
// API reports no GRES).
import type { FirecrestJobBackend } from '../backends/slurm/firecrest-backend.js';
import type { SlurmrestdJobBackend } from '../backends/slurm/slurmrestd-backend.js';
import { gpusFromGres, type SlurmNode } from '../backends/slurm/site-api.js';
import type { NodeSpec, PartitionSpec, SiteSpec } from '../placement/index.js';
import type { InventorySource, RunningWork } from './placement.js';
import type { KubeClients } from '../backends/kubernetes/client.js';

const UNAVAILABLE = ['down', 'drain', 'draining', 'drained', 'fail', 'failing', 'maint', 'not_responding', 'future', 'power_down', 'powered_down', 'reboot_requested'];

function feature(features: string[], key: string): string | undefined {
  const f = features.find((x) => x.startsWith(`${key}:`));
  return f ? f.slice(key.length + 1) : undefined;
}

/** A Slurm cluster's nodes as one site of the inventory, with their current use as running work. */
export function slurmInventory(site: string, cluster: string, nodes: SlurmNode[]): { sites: SiteSpec[]; running: RunningWork[] } {
  const byPartition = new Map<string, NodeSpec[]>();
  const running: RunningWork[] = [];
  for (const n of nodes) {
    const spec: NodeSpec = {
      id: n.name,
      cpus: n.cpus,
      gpus: n.gpus,
      gpuModel: n.gpuModel,
      memoryMB: n.memoryMB,
      ibIsland: feature(n.features, 'ib'),
      nvlinkDomain: feature(n.features, 'nvlink'),
      rack: feature(n.features, 'rack'),
      down: n.state.some((s) => UNAVAILABLE.includes(s)),
    };
    // The engine gives each node one home partition; a Slurm node in several (debug and long, say) is
    // placed under the first it lists, which is the order of slurm.conf.
    const home = n.partitions[0] ?? 'default';
    byPartition.set(home, [...(byPartition.get(home) ?? []), spec]);
    if (n.allocCpus > 0 || n.allocMemoryMB > 0 || n.allocGpus > 0) {
      // What the site already runs on the node, as one opaque job: placement sees what is really free.
      running.push({
        job: { id: `${site}:${n.name}:in-use`, type: 'hybrid', tenant: 'site', qos: 'gold', priority: 1000, submit: 0, count: 1, per: { cpus: n.allocCpus, gpus: Math.min(n.allocGpus, n.gpus), memoryMB: Math.min(n.allocMemoryMB, n.memoryMB) }, walltime: 3600 },
        nodes: [{ node: n.name, slots: 1 }],
        start: 0,
      });
    }
  }
  const partitions: PartitionSpec[] = [...byPartition].sort(([a], [b]) => a.localeCompare(b)).map(([name, ns]) => ({ name, nodes: ns }));
  return { sites: [{ name: site, clusters: [{ name: cluster, partitions }] }], running };
}

/**
 * FirecREST's NodeModel reports no GRES in use, so a node's busy GPUs are estimated from its CPUs: all
 * of them on an allocated node, the same share as its busy CPUs (rounded up) on a mixed one. Placement
 * then errs towards "busy", never towards a GPU that is not free.
 */
export function firecrestAllocGpus(gpus: number, cpus: number, allocCpus: number, state: string[]): number {
  if (!gpus) return 0;
  if (state.includes('allocated')) return gpus;
  return cpus > 0 ? Math.min(gpus, Math.ceil((gpus * allocCpus) / cpus)) : 0;
}

export function slurmrestdSource(backend: SlurmrestdJobBackend, cluster = backend.site): InventorySource {
  return { name: `slurmrestd:${backend.site}`, gather: async () => slurmInventory(backend.site, cluster, await backend.client.nodes()) };
}

export function firecrestSource(backend: FirecrestJobBackend, system: string): InventorySource {
  return {
    name: `firecrest:${backend.site}`,
    gather: async () => {
      const { nodes } = await backend.client.nodes(system);
      return slurmInventory(
        backend.site,
        system,
        nodes.map((n) => {
          const features = (Array.isArray(n.features) ? n.features : (n.features ?? '').split(',')).map((f) => f.trim()).filter(Boolean);
          const g = gpusFromGres(features.filter((f) => f.startsWith('gpu:')).join(','));
          const state = n.state.map((s) => s.toLowerCase());
          return {
            name: n.name,
            cpus: n.cpus,
            memoryMB: (n.freeMemory ?? 0) + (n.allocMemory ?? 0),
            allocCpus: n.allocCpus ?? 0,
            allocMemoryMB: n.allocMemory ?? 0,
            gpus: g.count,
            allocGpus: firecrestAllocGpus(g.count, n.cpus, n.allocCpus ?? 0, state),
            gpuModel: g.model,
            partitions: n.partitions ?? [],
            state,
            features,
          };
        }),
      );
    },
  };
}

/** Kubernetes quantities: "4", "3500m" CPUs; "16Gi", "16384Ki", "1G" memory (in MiB). */
export function cpuQuantity(q: string | undefined): number {
  if (!q) return 0;
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}

export function memoryMiB(q: string | undefined): number {
  if (!q) return 0;
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|K|M|G|T)?$/.exec(q);
  if (!m) return 0;
  const MiB = 1024 ** 2;
  const f: Record<string, number> = { Ki: 1 / 1024, Mi: 1, Gi: 1024, Ti: 1024 ** 2, K: 1e3 / MiB, M: 1e6 / MiB, G: 1e9 / MiB, T: 1e12 / MiB, '': 1 / MiB };
  return Math.floor(Number(m[1]) * f[m[2] ?? '']!);
}

/**
 * A Kubernetes cluster's nodes (allocatable CPU, memory, nvidia.com/gpu) as one site; the partition is
 * the node's Tandem pool label (`tandem.dev/pool`, else "default"). Topology labels by Tandem's
 * convention: `topology.tandem.dev/ib-island`, `topology.tandem.dev/nvlink-domain`,
 * `topology.tandem.dev/rack`; the GPU model from GPU feature discovery (`nvidia.com/gpu.product`).
 * Pods of the worker's namespace count as running work on their nodes.
 */
export function kubernetesSource(clients: KubeClients, site = new URL(clients.server).host): InventorySource {
  return {
    name: `kubernetes:${site}`,
    async gather() {
      const nodes = (await clients.core.listNode({})).items;
      const byPool = new Map<string, NodeSpec[]>();
      for (const n of nodes) {
        const labels = n.metadata?.labels ?? {};
        const alloc = n.status?.allocatable ?? {};
        const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
        const spec: NodeSpec = {
          id: n.metadata!.name!,
          cpus: Math.floor(cpuQuantity(alloc.cpu)),
          gpus: Number(alloc['nvidia.com/gpu'] ?? 0),
          gpuModel: labels['nvidia.com/gpu.product'],
          memoryMB: memoryMiB(alloc.memory),
          ibIsland: labels['topology.tandem.dev/ib-island'],
          nvlinkDomain: labels['topology.tandem.dev/nvlink-domain'],
          rack: labels['topology.tandem.dev/rack'],
          down: !ready || n.spec?.unschedulable === true,
        };
        const pool = labels['tandem.dev/pool'] ?? 'default';
        byPool.set(pool, [...(byPool.get(pool) ?? []), spec]);
      }
      const running: RunningWork[] = [];
      const pods = (await clients.core.listNamespacedPod({ namespace: clients.namespace })).items.filter((p) => p.spec?.nodeName && (p.status?.phase === 'Running' || p.status?.phase === 'Pending'));
      for (const p of pods) {
        const req = (p.spec?.containers ?? []).reduce((a, c) => ({ cpus: a.cpus + cpuQuantity(c.resources?.requests?.cpu), gpus: a.gpus + Number(c.resources?.limits?.['nvidia.com/gpu'] ?? c.resources?.requests?.['nvidia.com/gpu'] ?? 0), memoryMB: a.memoryMB + memoryMiB(c.resources?.requests?.memory) }), { cpus: 0, gpus: 0, memoryMB: 0 });
        running.push({ job: { id: `${site}:${p.metadata!.name}`, type: 'hybrid', tenant: 'site', qos: 'gold', priority: 1000, submit: 0, count: 1, per: req, walltime: 3600 }, nodes: [{ node: p.spec!.nodeName!, slots: 1 }], start: 0 });
      }
      const partitions: PartitionSpec[] = [...byPool].sort(([a], [b]) => a.localeCompare(b)).map(([name, ns]) => ({ name, nodes: ns }));
      return { sites: [{ name: site, clusters: [{ name: site, partitions }] }], running };
    },
  };
}
