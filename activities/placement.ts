// The placement activity: gathers live state from whatever inventory sources the worker has (the
// local machine always; FirecREST, slurmrestd and Kubernetes sources plug in through InventorySource)
// and returns the pure engine's decision, which the workflow records in history.
import { availableParallelism, cpus, freemem, hostname, loadavg, totalmem } from 'node:os';
import { decide, policy as makePolicy, type Decision, type Inventory, type JobRequest, type PolicyConfig, type SiteSpec } from '../placement/index.js';

export interface RunningWork {
  job: JobRequest;
  nodes: { node: string; slots: number }[];
  start: number;
}

/** One backend's view: its sites (clusters, partitions, nodes) and the work already running there. */
export interface InventorySource {
  readonly name: string;
  gather(): Promise<{ sites: SiteSpec[]; running: RunningWork[] }>;
}

/** The machine the worker runs on, as one single-node site. Busy cores (load average) count as used. */
export function localMachineSource(site = 'local'): InventorySource {
  return {
    name: 'local',
    async gather() {
      const cores = availableParallelism?.() ?? cpus().length;
      const memoryMB = Math.floor(totalmem() / 2 ** 20);
      const busyCores = Math.min(cores, Math.round(loadavg()[0]));
      const usedMB = Math.floor((totalmem() - freemem()) / 2 ** 20);
      const node = hostname();
      const sites: SiteSpec[] = [{ name: site, clusters: [{ name: node, partitions: [{ name: 'local', nodes: [{ id: node, cpus: cores, gpus: 0, memoryMB }] }] }] }];
      const running: RunningWork[] = [];
      if (busyCores > 0 || usedMB > 0) {
        // The host's own load as one opaque job, so placement sees what is really free.
        running.push({ job: { id: 'host-load', type: 'hybrid', tenant: 'system', qos: 'gold', priority: 1000, submit: 0, count: 1, per: { cpus: busyCores, gpus: 0, memoryMB: Math.min(usedMB, memoryMB) }, walltime: 60 }, nodes: [{ node, slots: 1 }], start: 0 });
      }
      return { sites, running };
    },
  };
}

export interface PlaceInput {
  job: JobRequest;
}

export interface PlaceResult {
  decision: Decision;
  /** Sources that could not be observed this time (their sites are simply absent). */
  unavailable: { source: string; error: string }[];
}

/** Every source read in parallel and merged in source order (the engine breaks ties by inventory
 *  order); a source that cannot be read is reported and left out, never fatal. */
export async function gatherInventory(sources: InventorySource[]): Promise<{ inventory: Inventory; running: RunningWork[]; unavailable: PlaceResult['unavailable'] }> {
  const inventory: Inventory = { sites: [] };
  const running: RunningWork[] = [];
  const unavailable: PlaceResult['unavailable'] = [];
  const results = await Promise.allSettled(sources.map((s) => s.gather()));
  results.forEach((r, k) => {
    if (r.status === 'fulfilled') {
      inventory.sites.push(...r.value.sites);
      running.push(...r.value.running);
    } else unavailable.push({ source: sources[k].name, error: String((r.reason as Error)?.message ?? r.reason) });
  });
  return { inventory, running, unavailable };
}

/** The engine's decision on live state: neither running work nor the job starts after `now`. */
export function decideNow(inventory: Inventory, running: RunningWork[], job: JobRequest, now: number, pol: PolicyConfig): Decision {
  return decide(inventory, running.map((w) => ({ ...w, start: Math.min(w.start || now, now) })), { ...job, submit: Math.min(job.submit, now) }, now, pol);
}

export function createPlacementActivities(sources: InventorySource[] = [localMachineSource()], pol: Partial<PolicyConfig> = {}, clock: () => number = () => Date.now() / 1000) {
  const config = makePolicy(pol);
  return {
    async placeJob({ job }: PlaceInput): Promise<PlaceResult> {
      const { inventory, running, unavailable } = await gatherInventory(sources);
      return { decision: decideNow(inventory, running, job, clock(), config), unavailable };
    },
  };
}

export type PlacementActivities = ReturnType<typeof createPlacementActivities>;
