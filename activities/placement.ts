// The placement activity: gathers live state from whatever inventory sources the worker has (the
// local machine always; FirecREST, slurmrestd and Kubernetes sources plug in through InventorySource)
// and returns the pure engine's decision, which the workflow records in history.
import { availableParallelism, cpus, freemem, hostname, loadavg, totalmem } from 'node:os';
import { decide, explainDecision, policy as makePolicy, type Decision, type Inventory, type JobRequest, type PolicyConfig, type SiteSpec } from '../placement/index.js';
import { observePlacement } from '../observe/activity-metrics.js';
import { failure } from '../contract/failures.js';
import type { TenantGuard } from './tenant-policy.js';
import { KeptInventory, type InventorySource, type RunningWork, type TandemJob } from './placement-inventory.js';

export type { InventorySource, RunningWork, TandemJob } from './placement-inventory.js';

/** A job placement preempts, with what the two runs' timelines say about it. */
export interface Victim extends TandemJob {
  /** "job 123 of run r-1 (priority 10)". */
  label: string;
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
        running.push({ job: { id: 'host-load', type: 'hybrid', tenant: 'system', qos: 'gold', priority: 1000, submit: 0, count: 1, per: { cpus: busyCores, gpus: 0, memoryMB: Math.min(usedMB, memoryMB) }, walltime: 60 }, nodes: [{ node, slots: 1 }], start: 0, ambient: true });
      }
      return { sites, running };
    },
  };
}

export interface PlaceInput {
  job: JobRequest;
  /** The run asking (its workflow id): its own jobs are never its victims. */
  run?: string;
}

export interface PlaceResult {
  decision: Decision;
  /** Sources that could not be observed this time (their sites are simply absent). */
  unavailable: { source: string; error: string }[];
  /** The decision for a person: where, why, when in the worker's local time, price; no epochs. */
  summary?: string;
  /** For a preempt decision: the Tandem jobs to stop, each of a run that resumes from its checkpoint. */
  victims?: Victim[];
}

/** A wall-clock time in the worker's timezone: "14:05", or "Tue 14:05" when not today. */
export function localTime(seconds: number, now: number): string {
  const at = new Date(seconds * 1000);
  const hm: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' };
  return at.toDateString() === new Date(now * 1000).toDateString() ? at.toLocaleTimeString([], hm) : at.toLocaleString([], { ...hm, weekday: 'short', day: 'numeric', month: 'short' });
}

/** Which running work the job may preempt: Tandem's own checkpointable jobs of other runs, of lower
 *  priority. Nothing else, whatever the engine's guarantee rules would allow. */
export function markPreemptible(running: RunningWork[], job: JobRequest, run?: string): RunningWork[] {
  return running.map((w) => {
    const t = w.tandem;
    const preemptible = t !== undefined && t.checkpointable && t.priority < job.priority && t.run !== run;
    return { ...w, job: { ...w.job, priority: t?.priority ?? w.job.priority, checkpointable: t?.checkpointable ?? w.job.checkpointable, preemptible } };
  });
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
      // Loops, not push(...list): a spread passes every element as an argument, which overflows the stack from ~125k running jobs.
      for (const s of r.value.sites) inventory.sites.push(s);
      for (const w of r.value.running) running.push(w);
    } else unavailable.push({ source: sources[k].name, error: String((r.reason as Error)?.message ?? r.reason) });
  });
  return { inventory, running, unavailable };
}

const clampRunning = (running: RunningWork[], now: number) => running.map((w) => ({ ...w, start: Math.min(w.start || now, now) }));

/** The engine's decision on live state: neither running work nor the job starts after `now`. */
export function decideNow(inventory: Inventory, running: RunningWork[], job: JobRequest, now: number, pol: PolicyConfig): Decision {
  return decide(inventory, clampRunning(running, now), { ...job, submit: Math.min(job.submit, now) }, now, pol);
}

/**
 * `guard`: the tenant policy (activities/tenant-policy.ts): the run is checked, and placed only on its
 * tenant's sites and partitions. `kept`: the worker's kept placement state, which the submit and
 * watch activities move by events (activities/placement-inventory.ts); one of its own by default.
 */
export function createPlacementActivities(sources: InventorySource[] = [localMachineSource()], pol: Partial<PolicyConfig> = {}, clock: () => number = () => Date.now() / 1000, guard?: TenantGuard, kept: KeptInventory = new KeptInventory(sources, 30, clock)) {
  const config = makePolicy(pol);
  return {
    async placeJob({ job, run }: PlaceInput): Promise<PlaceResult> {
      const t0 = performance.now();
      await guard?.enforce();
      const now = clock();
      const unavailable = await kept.refresh(now);
      const whole = kept.inventory;
      // Only the tenant's sites and partitions: a kept view of them, moved by the same events.
      const restricted = guard ? kept.restrictedInventory((inv) => guard.restrict(inv, job.tenant)) : undefined;
      if (restricted && whole.sites.length && !restricted.sites.length) {
        throw failure('TenantPolicyDenied', `refused by the tenant policy: tenant "${job.tenant}" may use none of this worker's sites and partitions (${whole.sites.map((s) => s.name).join(', ')})`);
      }
      let decision = kept.decide(job, now, config, { run, restricted });
      if (decision.kind === 'reserve' && kept.hasAmbient) {
        // Waiting for the host's own load to end would wait for ever: the local runtime shares the
        // CPUs with it, so the job starts if it fits beside everything that is a job.
        const beside = kept.decide(job, now, config, { run, restricted, withoutAmbient: true });
        if (beside.kind === 'start') decision = { ...beside, explanation: `${beside.explanation}; shares the host with its current load`, oversubscribed: true };
      }
      const victims = new Map<string, Victim>();
      if (decision.kind === 'preempt') {
        for (const id of decision.victims) {
          const t = kept.running(id)?.tandem;
          // The engine only picks work marked preemptible, which is Tandem's; a victim that is not is a bug.
          if (!t) throw new Error(`placement chose ${id} as a preemption victim, but it is not a job Tandem submitted`);
          victims.set(id, { ...t, label: `job ${t.ref.jobId} of run ${t.run} (priority ${t.priority})` });
        }
      }
      const summary = explainDecision(decision, { now, clock: (t) => localTime(t, now), victim: (id) => victims.get(id)?.label ?? id });
      observePlacement(decision.kind, config.order, t0, unavailable); // metrics
      return { decision, unavailable, summary, ...(victims.size ? { victims: [...victims.values()] } : {}) };
    },
  };
}

export type PlacementActivities = ReturnType<typeof createPlacementActivities>;
