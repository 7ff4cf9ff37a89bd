// Inventory sources for placement from Slurm sites, through whichever API the worker has: FirecREST
// v2 (/status/{system}/nodes) or slurmrestd (/nodes). Topology comes from node features by Tandem's
// convention: `ib:<island>`, `nvlink:<domain>`, `rack:<rack>` (and `gpu:<model>:<count>` where the
// API reports no GRES).
import type { FirecrestJobBackend } from '../backends/slurm/firecrest-backend.js';
import type { SlurmrestdJobBackend } from '../backends/slurm/slurmrestd-backend.js';
import { gpusFromGres, type SlurmNode } from '../backends/slurm/site-api.js';
import type { NodeSpec, PartitionSpec, SiteSpec } from '../placement/index.js';
import type { InventorySource, RunningWork } from './placement.js';

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
    if (n.allocCpus > 0 || n.allocMemoryMB > 0) {
      // What the site already runs on the node, as one opaque job: placement sees what is really free.
      running.push({
        job: { id: `${site}:${n.name}:in-use`, type: 'hybrid', tenant: 'site', qos: 'gold', priority: 1000, submit: 0, count: 1, per: { cpus: n.allocCpus, gpus: 0, memoryMB: Math.min(n.allocMemoryMB, n.memoryMB) }, walltime: 3600 },
        nodes: [{ node: n.name, slots: 1 }],
        start: 0,
      });
    }
  }
  const partitions: PartitionSpec[] = [...byPartition].sort(([a], [b]) => a.localeCompare(b)).map(([name, ns]) => ({ name, nodes: ns }));
  return { sites: [{ name: site, clusters: [{ name: cluster, partitions }] }], running };
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
          return {
            name: n.name,
            cpus: n.cpus,
            memoryMB: (n.freeMemory ?? 0) + (n.allocMemory ?? 0),
            allocCpus: n.allocCpus ?? 0,
            allocMemoryMB: n.allocMemory ?? 0,
            gpus: g.count,
            gpuModel: g.model,
            partitions: n.partitions ?? [],
            state: n.state.map((s) => s.toLowerCase()),
            features,
          };
        }),
      );
    },
  };
}
