// `tandem simulate --inventory FILE`: the machine as a YAML/JSON inventory (placement/types.ts
// Inventory: sites → clusters → partitions → nodes), checked against a schema before the replay builds
// it. Without one, `clusters: 7` surfaced as "s.clusters.flatMap is not a function" and a node with
// `cpus: -4` or `cpus: 0` (every job's width divides by the smallest) replayed nonsense.
import { z } from 'zod';
import { parseYamlWith, SpecError } from '../contract/parse.js';
import type { Inventory } from '../placement/types.js';

const name = z.string().min(1, 'must not be empty');
const nonNegative = z.number().finite().min(0, 'must be 0 or more');

const NodeSchema = z.strictObject({
  id: name,
  // Jobs of a trace take whole nodes of the smallest node's processors: a node needs at least one.
  cpus: z.number().int('must be a whole number').min(1, 'must be at least 1'),
  gpus: z.number().int('must be a whole number').min(0, 'must be 0 or more').default(0),
  memoryMB: nonNegative.default(0),
  gpuModel: name.optional(),
  nvlinkDomain: name.optional(),
  ibIsland: name.optional(),
  rack: name.optional(),
  rackTempC: z.number().finite().optional(),
  powerW: nonNegative.optional(),
  idlePowerW: nonNegative.optional(),
  price: z.strictObject({ cpuHour: nonNegative, gpuHour: nonNegative }).optional(),
  down: z.boolean().optional(),
});

const ratio = z.number().finite().min(1, 'must be at least 1 (1 is no oversubscription)');
const PartitionSchema = z.strictObject({
  name,
  nodes: z.array(NodeSchema).min(1, 'a partition needs at least one node'),
  jobTypes: z.array(z.enum(['hpc-mpi', 'ai-training', 'inference', 'hybrid'])).optional(),
  oversubscription: z.strictObject({ cpu: ratio.optional(), gpu: ratio.optional() }).optional(),
});

const InventorySchema = z
  .strictObject({
    sites: z
      .array(z.strictObject({ name, clusters: z.array(z.strictObject({ name, partitions: z.array(PartitionSchema).min(1, 'a cluster needs at least one partition') })).min(1, 'a site needs at least one cluster') }))
      .min(1, 'an inventory needs at least one site'),
  })
  .superRefine((inv, ctx) => {
    // The engine indexes nodes by id: two nodes of one id would be one node counted twice.
    const seen = new Map<string, string>();
    inv.sites.forEach((s, si) =>
      s.clusters.forEach((c, ci) =>
        c.partitions.forEach((p, pi) =>
          p.nodes.forEach((n, ni) => {
            const at = `sites[${si}].clusters[${ci}].partitions[${pi}].nodes[${ni}]`;
            const first = seen.get(n.id);
            if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['sites', si, 'clusters', ci, 'partitions', pi, 'nodes', ni, 'id'], message: `node id "${n.id}" is also ${first}` });
            else seen.set(n.id, at);
          }),
        ),
      ),
    );
  });

/** The inventory in `text` (YAML or JSON); a SpecError names every bad field and its line. */
export function parseInventory(text: string, source: string, maxNodes: number): Inventory {
  const inv = parseYamlWith(InventorySchema, text, source, 'inventory', 'with `sites: [{ name, clusters: [{ name, partitions: [{ name, nodes: [{ id, cpus, gpus, memoryMB }] }] }] }]`') as Inventory;
  const nodes = inv.sites.reduce((t, s) => t + s.clusters.reduce((u, c) => u + c.partitions.reduce((v, p) => v + p.nodes.length, 0), 0), 0);
  if (nodes > maxNodes) throw new SpecError(source, [{ path: 'sites', message: `${nodes.toLocaleString('en-US')} nodes: more than the ${maxNodes.toLocaleString('en-US')} a replay builds` }], 'inventory');
  return inv;
}
