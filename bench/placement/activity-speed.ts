// The placement activity as pipelines call it: `placeJob` from createPlacementActivities, with its
// inventory source in the loop (an in-process site that answers the way a Slurm source does: its
// nodes in two partitions, the site's own work as opaque running jobs, a tenth of the running work
// Tandem's own, preemptible by label), no network. Each step one job arrives and is placed; a start
// runs at the site, and the job that has run longest there finishes, so the load stays where it was.
// What the submit and watch activities see (a job started, a job finished) reaches the placement
// state as events, as in a worker. Beside it the engine alone (LiveCluster.place on the same state).
import { createPlacementActivities, type InventorySource, type RunningWork } from '../../activities/placement.js';
import { TenantGuard } from '../../activities/tenant-policy.js';
import { KeptInventory } from '../../activities/placement-inventory.js';
import { LiveCluster, type Inventory, type JobRequest, type NodeSpec, type PolicyConfig } from '../../placement/index.js';
import { inventory as benchInventory, runningSet } from './live-speed.js';

/** A site in process: node list, running work and a node generation that moves when a node changes. */
export class SimulatedSite implements InventorySource {
  readonly name = 'sim:site';
  readonly running = new Map<string, RunningWork>();
  gathers = 0;
  private gen = 0;
  constructor(readonly nodes: NodeSpec[], running: RunningWork[]) {
    for (const w of running) this.running.set(w.job.id, w);
  }

  /** The nodes in two partitions (p0, p1: first and second half), as a Slurm source reports them. */
  async gather(): Promise<{ sites: Inventory['sites']; running: RunningWork[] }> {
    this.gathers++;
    const half = Math.ceil(this.nodes.length / 2);
    // A fresh answer each time, as parsed from an API response.
    const copy = (ns: NodeSpec[]) => ns.map((n) => ({ ...n }));
    return {
      sites: [{ name: 'site', clusters: [{ name: 'c', partitions: [{ name: 'p0', nodes: copy(this.nodes.slice(0, half)), oversubscription: { cpu: 1.2, gpu: 1.05 } }, { name: 'p1', nodes: copy(this.nodes.slice(half)), oversubscription: { cpu: 1.2, gpu: 1.05 } }] }] }],
      running: Array.from(this.running.values()),
    };
  }

  generation(): number {
    return this.gen;
  }

  /** A node drained or resized: the site's node generation moves. */
  changeNode(k: number, change: Partial<NodeSpec>): void {
    this.nodes[k] = { ...this.nodes[k], ...change };
    this.gen++;
  }
}

/** The running work of the site: 3 × nodes jobs; every tenth is Tandem's (labelled, checkpointable), the rest the site's own. */
export function siteWork(inv: Inventory, shapes: JobRequest[], count: number): RunningWork[] {
  return runningSet(inv, shapes, count).map((r, k) =>
    k % 10 === 0
      ? { ...r, job: { ...r.job, tenant: 'tandem', checkpointable: true }, tandem: { run: `r-${k % 97}`, stage: 'train', priority: r.job.priority, checkpointable: true, ref: { runtime: 'slurm', jobId: String(k), name: r.job.id, site: 'site', adopted: false } } }
      : { ...r, job: { ...r.job, preemptible: false } },
  );
}

export interface ActivityRow {
  nodes: number;
  running: number;
  tenantPolicy: boolean;
  firstCallMs: number;
  calls: number;
  perSec: number;
  usPer: number;
  starts: number;
  reserves: number;
  gathers: number;
  engine: { perSec: number };
  heapMBPer10k: number;
  error?: string;
}

const heap = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
};

/**
 * `placeJob` calls for `budgetMs` (at most `maxCalls`), after one untimed first call (which builds
 * whatever the activity keeps); then the engine alone for the same job stream on a kept state.
 */
export async function measureActivity(nodes: number, shapes: JobRequest[], pol: Partial<PolicyConfig>, enginePol: PolicyConfig, tenantPolicy: boolean, budgetMs: number, maxCalls: number): Promise<ActivityRow> {
  const inv = benchInventory(nodes);
  const work = siteWork(inv, shapes, 3 * nodes);
  const site = new SimulatedSite(inv.sites[0].clusters[0].partitions[0].nodes, work);
  const guard = tenantPolicy ? new TenantGuard({ tenants: { '*': { sites: ['site'], partitions: ['p0'] } } }, () => undefined) : undefined;
  // The worker's clock: real time (resyncs fall due every 30 s of it, as in a worker).
  const base = 100_000 - performance.now() / 1000;
  let now = 100_000;
  const h0 = heap();
  const clock = () => (now = base + performance.now() / 1000);
  const events = new KeptInventory([site], 30, clock);
  const acts = createPlacementActivities([site], pol, clock, guard, events);
  const row: ActivityRow = { nodes, running: work.length, tenantPolicy, firstCallMs: 0, calls: 0, perSec: 0, usPer: 0, starts: 0, reserves: 0, gathers: 0, engine: { perSec: 0 }, heapMBPer10k: 0 };
  const order = work.map((w) => w.job.id);
  let oldest = 0;
  const step = async (k: number) => {
    clock();
    const shape = shapes[k % shapes.length];
    const job: JobRequest = { ...shape, id: `live-${k}`, submit: now, tenant: `t${k % 7}` };
    const r = await acts.placeJob({ job, run: `r-${k % 89}` });
    const d = r.decision;
    if (d.kind === 'start' || d.kind === 'preempt') {
      row.starts++;
      if (d.kind === 'preempt')
        for (const v of d.victims) {
          site.running.delete(v);
          events.finished(v);
        }
      const w: RunningWork = { job, start: now, nodes: d.placement.nodes.map((n) => ({ node: n.node, slots: n.slots })) };
      site.running.set(job.id, w);
      events.started(w);
      order.push(job.id);
      while (oldest < order.length) {
        const id = order[oldest++];
        if (site.running.delete(id)) {
          events.finished(id);
          break;
        }
      }
    } else if (d.kind === 'reserve') row.reserves++;
  };
  try {
    const t0 = performance.now();
    await step(0);
    row.firstCallMs = performance.now() - t0;
    row.heapMBPer10k = ((heap() - h0) / 2 ** 20) * (10_000 / nodes);
    row.starts = row.reserves = 0;
    const g0 = site.gathers;
    const t1 = performance.now();
    let k = 1;
    while (k <= maxCalls && performance.now() - t1 < budgetMs) await step(k++);
    const ms = performance.now() - t1;
    row.calls = k - 1;
    row.perSec = (row.calls / ms) * 1000;
    row.usPer = (ms * 1000) / row.calls;
    row.gathers = site.gathers - g0;
  } catch (e) {
    row.error = `${(e as Error).name}: ${(e as Error).message}`.slice(0, 80);
  }
  // The engine alone: the same loop (place, book a start, finish the longest-running job) on a kept
  // state of the same cluster and running work (what bench:placement-speed's live rows time), without
  // the activity around it: no source, no events, no tenant check, no explanation.
  const seen = await site.gather();
  const engineInv = guard ? guard.restrict({ sites: seen.sites }, 't0') : { sites: seen.sites };
  const live = new LiveCluster(engineInv, seen.running.map((w) => ({ job: { ...w.job, preemptible: w.tandem !== undefined }, nodes: w.nodes, start: Math.min(w.start, now) })));
  const engineOrder = seen.running.map((w) => w.job.id);
  let first = 0;
  const n = Math.max(200, Math.min(row.calls || 200, 5000));
  let t2 = performance.now();
  for (let k = 0; k < n + 200; k++) {
    if (k === 200) t2 = performance.now(); // 200 untimed warm-up decisions
    const job = { ...shapes[k % shapes.length], id: `e-${k}`, submit: now, tenant: `t${k % 7}` };
    const d = live.place(job, now, enginePol);
    if (d.kind === 'start' || d.kind === 'preempt') {
      engineOrder.push(job.id);
      while (first < engineOrder.length && !live.finish(engineOrder[first++]));
    }
  }
  row.engine.perSec = (n / (performance.now() - t2)) * 1000;
  return row;
}
