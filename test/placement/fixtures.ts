// Small hand-built inventories and jobs for the placement tests.
import type { Decision, Inventory, JobRequest, NodeSpec, PartitionSpec, PolicyConfig } from '../../placement/index.js';

export function inventory(nodes: NodeSpec[], part: Partial<PartitionSpec> = {}): Inventory {
  return { sites: [{ name: 'zurich', clusters: [{ name: 'alps', partitions: [{ name: 'normal', ...part, nodes }] }] }] };
}

export const gpuNode = (id: string, extra: Partial<NodeSpec> = {}): NodeSpec => ({ id, cpus: 64, gpus: 8, gpuModel: 'H100', memoryMB: 512_000, nvlinkDomain: `nvl-${id}`, ibIsland: 'leaf-1', price: { cpuHour: 0.01, gpuHour: 2 }, ...extra });
export const cpuNode = (id: string, extra: Partial<NodeSpec> = {}): NodeSpec => ({ id, cpus: 1, gpus: 0, memoryMB: 1024, ibIsland: 'leaf-1', ...extra });

let seq = 0;
export function job(over: Partial<JobRequest> = {}): JobRequest {
  return { id: `j${++seq}`, type: 'ai-training', tenant: 'a', qos: 'silver', priority: 100, submit: 0, count: 1, per: { cpus: 0, gpus: 1, memoryMB: 0 }, walltime: 3600, ...over };
}

/** The borrowing tests' cluster: `nodes` GPU nodes of `gpus` GPUs, each its own NVLink domain. */
export const borrowCluster = (nodes: number, gpus = 8): Inventory => ({
  sites: [{ name: 's', clusters: [{ name: 'c', partitions: [{ name: 'gpu', nodes: Array.from({ length: nodes }, (_, i) => ({ id: `n${i}`, cpus: 32, gpus, memoryMB: 256_000, nvlinkDomain: `nvl${i}` })) }] }] }],
});

/** A checkpointable silver job of one GPU per slot, `gpus` slots, for `tenant`. */
export const borrowJob = (id: string, tenant: string, gpus: number, over: Partial<JobRequest> = {}): JobRequest => ({
  id,
  type: 'ai-training',
  tenant,
  qos: 'silver',
  priority: 100,
  submit: 0,
  count: gpus,
  per: { cpus: 2, gpus: 1, memoryMB: 1000 },
  walltime: 3600,
  checkpointable: true,
  ...over,
});

/** Two tenants of equal weight, a and b. */
export const TWO_TENANTS: PolicyConfig['tenants'] = [
  { name: 'a', weight: 1 },
  { name: 'b', weight: 1 },
];

/** The jobs a pass started, by start or by preemption. */
export const startedIds = (ds: Decision[]) => ds.filter((d) => d.kind === 'start' || d.kind === 'preempt').map((d) => d.jobId);
