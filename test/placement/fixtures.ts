// Small hand-built inventories and jobs for the placement tests.
import type { Inventory, JobRequest, NodeSpec, PartitionSpec } from '../../placement/index.js';

export function inventory(nodes: NodeSpec[], part: Partial<PartitionSpec> = {}): Inventory {
  return { sites: [{ name: 'zurich', clusters: [{ name: 'alps', partitions: [{ name: 'normal', ...part, nodes }] }] }] };
}

export const gpuNode = (id: string, extra: Partial<NodeSpec> = {}): NodeSpec => ({ id, cpus: 64, gpus: 8, gpuModel: 'H100', memoryMB: 512_000, nvlinkDomain: `nvl-${id}`, ibIsland: 'leaf-1', price: { cpuHour: 0.01, gpuHour: 2 }, ...extra });
export const cpuNode = (id: string, extra: Partial<NodeSpec> = {}): NodeSpec => ({ id, cpus: 1, gpus: 0, memoryMB: 1024, ibIsland: 'leaf-1', ...extra });

let seq = 0;
export function job(over: Partial<JobRequest> = {}): JobRequest {
  return { id: `j${++seq}`, type: 'ai-training', tenant: 'a', qos: 'silver', priority: 100, submit: 0, count: 1, per: { cpus: 0, gpus: 1, memoryMB: 0 }, walltime: 3600, ...over };
}
