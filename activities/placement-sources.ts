// Inventory sources for placement: Slurm sites through whichever API the worker has (FirecREST v2
// /status/{system}/nodes, or slurmrestd /nodes), and Kubernetes clusters (Nodes and Pods). Topology comes from node features by Tandem's
// convention: `ib:<island>`, `nvlink:<domain>`, `rack:<rack>` (and `gpu:<model>:<count>` where the
// API reports no GRES).
import type { FirecrestJobBackend } from '../backends/slurm/firecrest-backend.js';
import type { SlurmrestdJobBackend } from '../backends/slurm/slurmrestd-backend.js';
import { gpusFromGres, type SiteJob, type SlurmNode } from '../backends/slurm/site-api.js';
import { toJobState } from '../backends/slurm/states.js';
import { decodeJobLabels } from '../contract/job-labels.js';
import type { NodeSpec, PartitionSpec, SiteSpec } from '../placement/index.js';
import type { InventorySource, RunningWork } from './placement.js';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { KubeClients } from '../backends/kubernetes/client.js';
import { CollectionWatch } from '../backends/kubernetes/collection-watch.js';

const UNAVAILABLE = ['down', 'drain', 'draining', 'drained', 'fail', 'failing', 'maint', 'not_responding', 'future', 'power_down', 'powered_down', 'reboot_requested'];

function feature(features: string[], key: string): string | undefined {
  const f = features.find((x) => x.startsWith(`${key}:`));
  return f ? f.slice(key.length + 1) : undefined;
}

/** Slurm hostlists: "c1", "c[1-3,7]", "gpu[01-02],login1" → node names. */
export function expandHostlist(list: string | undefined): string[] {
  const out: string[] = [];
  for (const m of (list ?? '').matchAll(/([^,[\]]+)(?:\[([^\]]*)\])?/g)) {
    const [, base, ranges] = m;
    if (!base || base === ',') continue;
    if (ranges === undefined) {
      out.push(base);
      continue;
    }
    for (const r of ranges.split(',')) {
      const [a, b = a] = r.split('-');
      for (let k = Number(a); k <= Number(b); k++) out.push(base + String(k).padStart(a!.length, '0'));
    }
  }
  return out;
}

/** "cpu=2,mem=512M,node=1,gres/gpu=1" → what the job holds in all (memory in MiB). */
export function parseTres(tres: string | undefined): { cpus: number; memoryMB: number; gpus: number } {
  const kv = new Map((tres ?? '').split(',').map((p) => p.split('=') as [string, string]));
  const mem = /^(\d+(?:\.\d+)?)([KMGT]?)$/.exec(kv.get('mem') ?? '');
  const unit: Record<string, number> = { K: 1 / 1024, M: 1, G: 1024, T: 1024 ** 2, '': 1 };
  return { cpus: Number(kv.get('cpu') ?? 0), memoryMB: mem ? Math.floor(Number(mem[1]) * unit[mem[2]!]!) : 0, gpus: Number(kv.get('gres/gpu') ?? 0) };
}

/**
 * Tandem's own running jobs on the site (those that carry its label), each as running work of its run
 * with its priority, so that placement may preempt it; what they use is taken off their nodes'
 * opaque in-use. Jobs without the label, or whose shape the API does not report, stay opaque.
 */
function tandemJobs(site: string, jobs: SiteJob[]): { work: RunningWork[]; use: Map<string, { cpus: number; memoryMB: number; gpus: number }> } {
  const work: RunningWork[] = [];
  const use = new Map<string, { cpus: number; memoryMB: number; gpus: number }>();
  for (const j of jobs) {
    const labels = decodeJobLabels(j.comment);
    const on = expandHostlist(j.nodes);
    if (!labels || toJobState(j.state) !== 'RUNNING' || !j.name.startsWith('tandem-') || !on.length || !j.tres) continue;
    const all = parseTres(j.tres);
    const per = { cpus: all.cpus / on.length, memoryMB: all.memoryMB / on.length, gpus: all.gpus / on.length };
    for (const n of on) {
      const u = use.get(n) ?? { cpus: 0, memoryMB: 0, gpus: 0 };
      use.set(n, { cpus: u.cpus + per.cpus, memoryMB: u.memoryMB + per.memoryMB, gpus: u.gpus + per.gpus });
    }
    work.push({
      job: { id: j.name, type: labels.stage === 'train' ? 'ai-training' : 'hybrid', tenant: 'tandem', qos: 'silver', priority: labels.priority, submit: j.startTime ?? 0, count: on.length, maxPerNode: 1, per, walltime: (j.timeLimitMinutes ?? 60) * 60, checkpointable: labels.checkpointable },
      nodes: on.map((node) => ({ node, slots: 1 })),
      start: j.startTime ?? 0,
      tandem: { ...labels, ref: { runtime: 'slurm', jobId: j.jobId, name: j.name, site, adopted: false } },
    });
  }
  return { work, use };
}

/** A Slurm cluster's nodes as one site of the inventory, with their current use as running work. */
export function slurmInventory(site: string, cluster: string, nodes: SlurmNode[], jobs: SiteJob[] = []): { sites: SiteSpec[]; running: RunningWork[] } {
  const byPartition = new Map<string, NodeSpec[]>();
  const own = tandemJobs(site, jobs);
  const running: RunningWork[] = [...own.work];
  for (const node of nodes) {
    const u = own.use.get(node.name);
    const n = u ? { ...node, allocCpus: Math.max(0, node.allocCpus - u.cpus), allocMemoryMB: Math.max(0, node.allocMemoryMB - u.memoryMB), allocGpus: Math.max(0, node.allocGpus - u.gpus) } : node;
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
    // Appended in place: copying the list for every node was quadratic in a partition's size.
    const list = byPartition.get(home);
    if (list) list.push(spec);
    else byPartition.set(home, [spec]);
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

/**
 * How far slurmctld's clock may be behind the worker's when the kept inventory asks slurmrestd whether
 * the nodes changed since its last read (`update_time` is compared with slurmctld's own clock). A
 * change is then seen at once as long as the clocks differ by less than this; beyond it, a change made
 * within the difference after a read waits for the next change or the 30 s resync. After a change the
 * site is read again on each decision for this long (the question cannot tell the change already read).
 */
export const SLURM_CLOCK_MARGIN_S = 5;

/**
 * A Slurm site through slurmrestd. Its generation is a counter that moves when slurmrestd says the node
 * table changed since the last read (`nodesChangedSince`, a 304 otherwise): a job that starts or ends
 * changes its nodes' allocation, so the site's own jobs move it too, and an unchanged site costs one
 * small request per decision instead of reading every node and job.
 */
export function slurmrestdSource(backend: SlurmrestdJobBackend, cluster = backend.site, opts: { clock?: () => number; clockMarginSeconds?: number } = {}): InventorySource {
  const clock = opts.clock ?? (() => Date.now() / 1000);
  const margin = opts.clockMarginSeconds ?? SLURM_CLOCK_MARGIN_S;
  /** The worker's clock when the last full read began: what it read is at least that recent. */
  let readFrom: number | undefined;
  let token = 0;
  return {
    name: `slurmrestd:${backend.site}`,
    // The job listing names Tandem's own jobs (by label); FirecREST's job model carries no comment, so
    // there every job stays opaque and is never preempted.
    gather: async () => {
      const from = clock();
      const [nodes, jobs] = await Promise.all([backend.client.nodes(), backend.client.listJobs()]);
      readFrom = from;
      return slurmInventory(backend.site, cluster, nodes, jobs);
    },
    generation: async () => {
      // Never read: the kept state reads it anyway. Read: moved only when slurmrestd says so.
      if (readFrom !== undefined && (await backend.client.nodesChangedSince(readFrom - margin))) token++;
      return token;
    },
  };
}

/**
 * A Slurm site through FirecREST v2 (`/status/{system}/nodes`). It has no generation: FirecREST's API
 * offers no change token or conditional read, so the kept state reads it on every decision and moves
 * by what differs (activities/placement-inventory.ts).
 */
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

/** A Node as placement sees it (allocatable CPU, memory, nvidia.com/gpu, topology labels, readiness), and its pool. */
function nodeSpecOf(n: V1Node): { pool: string; spec: NodeSpec } {
  const labels = n.metadata?.labels ?? {};
  const alloc = n.status?.allocatable ?? {};
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return {
    pool: labels['tandem.dev/pool'] ?? 'default',
    spec: {
      id: n.metadata!.name!,
      cpus: Math.floor(cpuQuantity(alloc.cpu)),
      gpus: Number(alloc['nvidia.com/gpu'] ?? 0),
      gpuModel: labels['nvidia.com/gpu.product'],
      memoryMB: memoryMiB(alloc.memory),
      ibIsland: labels['topology.tandem.dev/ib-island'],
      nvlinkDomain: labels['topology.tandem.dev/nvlink-domain'],
      rack: labels['topology.tandem.dev/rack'],
      down: !ready || n.spec?.unschedulable === true,
    },
  };
}

/** A pod bound to a node and Pending or Running holds its containers' requests there; any other holds nothing. */
function podUseOf(p: V1Pod): { node: string; per: { cpus: number; gpus: number; memoryMB: number } } | undefined {
  if (!p.spec?.nodeName || (p.status?.phase !== 'Running' && p.status?.phase !== 'Pending')) return undefined;
  const per = (p.spec.containers ?? []).reduce((a, c) => ({ cpus: a.cpus + cpuQuantity(c.resources?.requests?.cpu), gpus: a.gpus + Number(c.resources?.limits?.['nvidia.com/gpu'] ?? c.resources?.requests?.['nvidia.com/gpu'] ?? 0), memoryMB: a.memoryMB + memoryMiB(c.resources?.requests?.memory) }), { cpus: 0, gpus: 0, memoryMB: 0 });
  return { node: p.spec.nodeName, per };
}

/**
 * A Kubernetes cluster's nodes (allocatable CPU, memory, nvidia.com/gpu) as one site; the partition is
 * the node's Tandem pool label (`tandem.dev/pool`, else "default"). Topology labels by Tandem's
 * convention: `topology.tandem.dev/ib-island`, `topology.tandem.dev/nvlink-domain`,
 * `topology.tandem.dev/rack`; the GPU model from GPU feature discovery (`nvidia.com/gpu.product`).
 * Pods of the worker's namespace count as running work on their nodes.
 *
 * Its generation comes from two watches (backends/kubernetes/collection-watch.ts), of the Nodes and of
 * the namespace's Pods, each reduced to what placement reads: it moves when a node's spec above or a
 * pod's use changes, never on a heartbeat, so an unchanged cluster is not listed again per decision.
 * While a watch is starting or down the generation is new at every call, so the cluster is read
 * every decision, as without one. `close()` stops the watches (the worker does at its end); a later
 * decision starts them again.
 */
export function kubernetesSource(clients: KubeClients, site = new URL(clients.server).host): InventorySource & { close(): void; watching(): boolean } {
  const nodes = new CollectionWatch<V1Node>({ clients, path: '/api/v1/nodes', list: () => clients.core.listNode({}), fingerprint: (n) => JSON.stringify(nodeSpecOf(n)) });
  const pods = new CollectionWatch<V1Pod>({ clients, path: `/api/v1/namespaces/${clients.namespace}/pods`, list: () => clients.core.listNamespacedPod({ namespace: clients.namespace }), fingerprint: (p) => { const u = podUseOf(p); return u && JSON.stringify(u); } });
  let unsynced = 0;
  return {
    name: `kubernetes:${site}`,
    generation() {
      const n = nodes.current();
      const p = pods.current();
      return n === undefined || p === undefined ? { unsynced: ++unsynced } : [n, p];
    },
    close() {
      nodes.close();
      pods.close();
    },
    /** Whether either watch still runs (tests: close() stops both). */
    watching: () => nodes.running || pods.running,
    async gather() {
      const byPool = new Map<string, NodeSpec[]>();
      for (const n of (await clients.core.listNode({})).items) {
        const { pool, spec } = nodeSpecOf(n);
        const list = byPool.get(pool);
        if (list) list.push(spec);
        else byPool.set(pool, [spec]);
      }
      const running: RunningWork[] = [];
      for (const p of (await clients.core.listNamespacedPod({ namespace: clients.namespace })).items) {
        const u = podUseOf(p);
        if (u) running.push({ job: { id: `${site}:${p.metadata!.name}`, type: 'hybrid', tenant: 'site', qos: 'gold', priority: 1000, submit: 0, count: 1, per: u.per, walltime: 3600 }, nodes: [{ node: u.node, slots: 1 }], start: 0 });
      }
      const partitions: PartitionSpec[] = [...byPool].sort(([a], [b]) => a.localeCompare(b)).map(([name, ns]) => ({ name, nodes: ns }));
      return { sites: [{ name: site, clusters: [{ name: site, partitions }] }], running };
    },
  };
}
