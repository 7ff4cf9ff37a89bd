// The placement state a worker keeps between decisions (one per worker): the inventory its sources
// last reported and the work running there, booked once on a kept cluster state (placement/live.ts)
// and moved by events rather than rebuilt per decision.
//
// - Events: the submit and watch activities report what they see (a job started where, a job ended);
//   each moves the kept state by that one job.
// - Sources: a source that offers `generation()` (a cheap token that moves when its nodes or
//   partitions change) is read again only when the token moves, when an event says something changed
//   that it cannot describe, or every `resyncSeconds` (what recovers a lost event). A source without
//   one is read on every decision, as before, but what it reports is compared with what is kept
//   field by field (no serialising, no whole-list rebuild): nodes and partitions unchanged move the
//   state by the running jobs that differ; changed nodes or partitions build it afresh.
// - A tenant policy decides on a kept view of the tenant's sites and partitions, built once from the
//   same kept facts and moved by the same events.
import { LiveCluster, sameData, sameJob, type Decision, type Inventory, type JobRequest, type PolicyConfig, type RunningJob, type SiteSpec } from '../placement/index.js';
import type { JobRef } from '../contract/outcome.js';

/** A job Tandem itself submitted, as its labels name it (see contract/job-labels.ts): the only kind
 *  placement may preempt. */
export interface TandemJob {
  /** The workflow id of the run it belongs to. */
  run: string;
  stage: string;
  priority: number;
  checkpointable: boolean;
  ref: JobRef;
}

export interface RunningWork {
  job: JobRequest;
  nodes: { node: string; slots: number }[];
  start: number;
  /** Set only for jobs Tandem submitted; everything else is never a preemption victim. */
  tandem?: TandemJob;
  /** The machine's own load: no job with an end, and the local runtime shares the CPUs with it. */
  ambient?: boolean;
}

/** One backend's view: its sites (clusters, partitions, nodes) and the work already running there. */
export interface InventorySource {
  readonly name: string;
  gather(): Promise<{ sites: SiteSpec[]; running: RunningWork[] }>;
  /**
   * A cheap token that moves whenever the source's nodes or partitions change (a node generation,
   * a resourceVersion). With one, the kept placement state reads the source again only when it
   * moves, when an event asks, or every resyncSeconds; its running work moves by events in between
   * (activities/placement-inventory.ts). Without one the source is read on every decision.
   */
  generation?(): unknown;
  /** Lets go of what the source holds open between reads (a watch); the worker calls it at its end. */
  close?(): void | Promise<void>;
}


/** What the submit and watch activities tell placement (activities/index.ts). */
export interface PlacementEvents {
  /** A job runs on these nodes (a job kept already moves there). */
  started(work: RunningWork): void;
  /** A job ended (finished, failed, cancelled, preempted). An id placement does not keep marks every source for a fresh read. */
  finished(jobId: string): void;
  /** Something changed that no event describes (a job submitted, started on nodes not yet known): every source is read again at the next decision. */
  changed(): void;
}

interface SourceView {
  sites: SiteSpec[];
  generation: unknown;
  at: number;
  /** Ids of the running work this source reported (or events placed on its nodes). */
  owns: Set<string>;
}

interface Kept {
  work: RunningWork;
  /** As booked on the kept states: start clamped to when it was first seen, preemptibility by label. */
  booked: RunningJob;
  source: number;
}

const sameNodes = (a: RunningWork['nodes'], b: RunningWork['nodes']) => {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k].node !== b[k].node || a[k].slots !== b[k].slots) return false;
  return true;
};

/** The same running work as reported (the same job, nodes, start and Tandem label). */
export function sameWork(a: RunningWork, b: RunningWork): boolean {
  if (a === b) return true;
  return a.start === b.start && a.ambient === b.ambient && sameNodes(a.nodes, b.nodes) && sameJob(a.job, b.job) && sameData(a.tandem, b.tandem);
}

/**
 * The job as the kept state books it: its Tandem label's priority and checkpointability, preemptible
 * only when it is Tandem's and checkpointable (which asker may take it is decided per decision), and
 * never starting after `now` (a start of 0, unknown, is when it was seen).
 */
export function bookedOf(w: RunningWork, now: number): RunningJob {
  const t = w.tandem;
  return { job: { ...w.job, priority: t?.priority ?? w.job.priority, checkpointable: t?.checkpointable ?? w.job.checkpointable, preemptible: t !== undefined && t.checkpointable }, nodes: w.nodes, start: Math.min(w.start || now, now) };
}

export class KeptInventory implements PlacementEvents {
  private views: (SourceView | undefined)[];
  private readonly work = new Map<string, Kept>();
  private readonly ambient = new Set<string>();
  private readonly nodeSource = new Map<string, number>();
  private whole: LiveCluster | undefined;
  /** Kept states of restricted inventories (a tenant's sites and partitions), by what they keep. */
  private restricted = new Map<string, { inventory: Inventory; live: LiveCluster }>();
  private merged: Inventory = { sites: [] };
  private stale = true;
  /** Full reads of sources so far (for benches and tests: what events saved). */
  reads = 0;
  rebuilds = 0;

  constructor(
    private readonly sources: InventorySource[],
    private readonly resyncSeconds = 30,
    private readonly clock: () => number = () => Date.now() / 1000,
  ) {
    this.views = sources.map(() => undefined);
  }

  /** Closes every source that holds something open (their watches): the worker's end. */
  async close(): Promise<void> {
    await Promise.all(this.sources.map((s) => s.close?.()));
  }

  get inventory(): Inventory {
    return this.merged;
  }

  /** The running work as kept, by id. */
  running(id: string): RunningWork | undefined {
    return this.work.get(id)?.work;
  }

  get hasAmbient(): boolean {
    return this.ambient.size > 0;
  }

  get size(): number {
    return this.work.size;
  }

  started(w: RunningWork): void {
    const source = this.nodeSource.get(w.nodes[0]?.node ?? '');
    if (source === undefined) {
      this.stale = true; // nodes no source reported (yet): read them
      return;
    }
    const had = this.work.get(w.job.id);
    if (had && sameWork(had.work, w)) return;
    if (had && had.source !== source) this.views[had.source]?.owns.delete(w.job.id);
    this.book(w, source, this.clock());
  }

  finished(jobId: string): void {
    const had = this.work.get(jobId);
    if (!had) {
      this.stale = true;
      return;
    }
    this.views[had.source]?.owns.delete(jobId);
    this.unbook(jobId);
  }

  changed(): void {
    this.stale = true;
  }

  /**
   * Reads the sources that need it (never read, no generation, generation moved, stale, due for a
   * resync, or failed last time) and moves the kept state by what they report. Returns the sources
   * that could not be read: their sites are left out until they can be.
   */
  async refresh(now: number): Promise<{ source: string; error: string }[]> {
    // One at a time: concurrent decisions each refresh after the one before has kept its view, so the
    // view kept is always the newest read (a source's generation question asks from its last read).
    const before = this.refreshing;
    let done!: () => void;
    this.refreshing = new Promise<void>((r) => (done = r));
    try {
      await before;
      return await this.refreshNow(now);
    } finally {
      done();
    }
  }

  private refreshing: Promise<void> = Promise.resolve();

  private async refreshNow(now: number): Promise<{ source: string; error: string }[]> {
    const stale = this.stale;
    this.stale = false;
    // Each source's token is asked once per refresh: before the read, so a change during it moves it again.
    const tokens: unknown[] = this.sources.map(() => undefined);
    const need = await Promise.all(
      this.sources.map(async (s, k) => {
        if (!s.generation) return true;
        try {
          tokens[k] = await s.generation();
        } catch {
          return true;
        }
        const v = this.views[k];
        if (!v || stale || now - v.at >= this.resyncSeconds) return true;
        return !sameData(tokens[k], v.generation);
      }),
    );
    const unavailable: { source: string; error: string }[] = [];
    const read = await Promise.allSettled(
      this.sources.map(async (s, k) => {
        if (!need[k]) return undefined;
        return { generation: tokens[k], ...(await s.gather()) };
      }),
    );
    let structural = !this.whole;
    const fresh: ({ running: RunningWork[] } | undefined)[] = [];
    read.forEach((r, k) => {
      if (!need[k]) return;
      this.reads++;
      const was = this.views[k];
      if (r.status === 'rejected') {
        unavailable.push({ source: this.sources[k].name, error: String((r.reason as Error)?.message ?? r.reason) });
        if (was?.sites.length) structural = true;
        this.views[k] = { sites: [], generation: undefined, at: -Infinity, owns: was?.owns ?? new Set() };
        fresh[k] = { running: [] };
        return;
      }
      const { sites, running, generation } = r.value!;
      if (!was || !sameData(was.sites, sites)) structural = true;
      // Due again resyncSeconds after the read returned (a read of a large site can take a while).
      this.views[k] = { sites, generation, at: Math.max(now, this.clock()), owns: was?.owns ?? new Set() };
      fresh[k] = { running };
    });
    if (structural) this.rebuild(fresh, now);
    else for (let k = 0; k < this.sources.length; k++) if (fresh[k]) this.resync(k, fresh[k]!.running, now);
    return unavailable;
  }

  /**
   * The decision for `job` on the kept state (or, with `restricted`, a part of `inventory` as
   * restrictedInventory gave it, on the kept view of that part). Running work the job may preempt: Tandem's own checkpointable jobs of
   * other runs, of lower priority. `withoutAmbient`: decided beside the host's own load.
   */
  decide(job: JobRequest, now: number, pol: PolicyConfig, opts: { run?: string; restricted?: Inventory; withoutAmbient?: boolean } = {}): Decision {
    const live = opts.restricted ? this.restrictedView(opts.restricted) : this.whole!;
    const { run } = opts;
    const mayPreempt = (v: JobRequest) => {
      const t = this.work.get(v.id)?.work.tandem;
      return t !== undefined && t.checkpointable && t.priority < job.priority && t.run !== run;
    };
    return live.decide({ ...job, submit: Math.min(job.submit, now) }, now, pol, { mayPreempt, ...(opts.withoutAmbient ? { without: this.ambient } : {}) });
  }

  /** The restricted inventory `restrict` gives (for its checks), without building a kept view. */
  restrictedInventory(restrict: (inv: Inventory) => Inventory): Inventory {
    return restrict(this.merged);
  }

  private restrictedView(inventory: Inventory): LiveCluster {
    // Which partitions it keeps names the view (a few strings, not the nodes).
    const parts: string[] = [];
    for (const s of inventory.sites) for (const c of s.clusters) for (const p of c.partitions) parts.push(`${s.name}\u0000${c.name}\u0000${p.name}\u0000${p.nodes.length}`);
    const key = parts.join('\u0001');
    let v = this.restricted.get(key);
    if (!v) {
      const booked: RunningJob[] = [];
      for (const w of this.work.values()) booked.push(w.booked);
      v = { inventory, live: new LiveCluster(inventory, booked) };
      this.restricted.set(key, v);
    }
    return v.live;
  }

  private book(w: RunningWork, source: number, now: number): void {
    const booked = bookedOf(w, now);
    this.work.set(w.job.id, { work: w, booked, source });
    this.views[source]?.owns.add(w.job.id);
    if (w.ambient) this.ambient.add(w.job.id);
    else this.ambient.delete(w.job.id);
    this.whole?.start(booked);
    for (const v of this.restricted.values()) v.live.start(booked);
  }

  private unbook(id: string): void {
    this.work.delete(id);
    this.ambient.delete(id);
    this.whole?.finish(id);
    for (const v of this.restricted.values()) v.live.finish(id);
  }

  /** Source k's running work as it reports it: what differs is booked, what it no longer lists ends. */
  private resync(k: number, running: RunningWork[], now: number): void {
    const owns = this.views[k]!.owns;
    const seen = new Set<string>();
    for (const w of running) {
      if (seen.has(w.job.id)) continue;
      seen.add(w.job.id);
      const had = this.work.get(w.job.id);
      if (had && had.source === k && sameWork(had.work, w)) continue;
      if (had && had.source !== k) this.views[had.source]?.owns.delete(w.job.id);
      this.book(w, k, now);
    }
    const gone: string[] = [];
    for (const id of owns) if (!seen.has(id)) gone.push(id);
    for (const id of gone) {
      owns.delete(id);
      this.unbook(id);
    }
  }

  /** Nodes or partitions changed: the inventory merged again (source order) and the states built afresh. */
  private rebuild(fresh: ({ running: RunningWork[] } | undefined)[], now: number): void {
    this.rebuilds++;
    const sites: SiteSpec[] = [];
    this.nodeSource.clear();
    this.views.forEach((v, k) => {
      for (const s of v?.sites ?? []) {
        sites.push(s);
        for (const c of s.clusters) for (const p of c.partitions) for (const n of p.nodes) if (!this.nodeSource.has(n.id)) this.nodeSource.set(n.id, k);
      }
    });
    this.merged = { sites };
    // What each source runs: as just read, else as kept (events included).
    const lists: RunningWork[][] = this.sources.map(() => []);
    for (const [, w] of this.work) if (!fresh[w.source]) lists[w.source].push(w.work);
    for (let k = 0; k < this.sources.length; k++) if (fresh[k]) lists[k] = fresh[k]!.running;
    this.work.clear();
    this.ambient.clear();
    this.restricted.clear();
    const booked: RunningJob[] = [];
    lists.forEach((list, k) => {
      const owns = new Set<string>();
      if (this.views[k]) this.views[k]!.owns = owns;
      for (const w of list) {
        if (this.work.has(w.job.id)) continue;
        const b = bookedOf(w, now);
        this.work.set(w.job.id, { work: w, booked: b, source: k });
        owns.add(w.job.id);
        if (w.ambient) this.ambient.add(w.job.id);
        booked.push(b);
      }
    });
    this.whole = new LiveCluster(this.merged, booked);
  }
}
