// Watching many jobs costs one listing per refresh, not one request per job per poll. awaitJob may ask
// for a job's status every second; answers come from the last listing until it is older than the
// refresh interval, and concurrent askers share one in-flight request. The interval adapts to the
// number of jobs being watched so that requests per job-hour stay under a budget.
import type { SiteApi, SiteJob } from './site-api.js';

export interface PollerOptions {
  /** Fixed refresh interval in ms; when unset it adapts to the watched-job count and the budget. */
  statusIntervalMs?: number;
  /** Target listing requests per watched job-hour (the adaptive interval's budget). */
  requestsPerJobHour?: number;
  minIntervalMs?: number;
  maxIntervalMs?: number;
  now?: () => number;
}

interface Snapshot {
  at: number;
  jobs: Map<string, SiteJob>;
}

export class StatusPoller {
  private snapshot: Snapshot | undefined;
  private inflight: Promise<Snapshot> | undefined;
  /** Jobs asked about recently, with the time of the last question: the watched set. */
  private readonly watched = new Map<string, number>();
  private readonly now: () => number;
  /** Jobs that were missing from the last listing and fetched one by one (listing lag, or purged). */
  private readonly single = new Map<string, { at: number; job: SiteJob | undefined }>();

  constructor(
    private readonly api: SiteApi,
    private readonly opts: PollerOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** The refresh interval for the current number of watched jobs. */
  intervalMs(): number {
    if (this.opts.statusIntervalMs !== undefined) return this.opts.statusIntervalMs;
    const budget = this.opts.requestsPerJobHour ?? 100;
    const n = Math.max(1, this.watchedCount());
    const ideal = 3_600_000 / (budget * n);
    return Math.min(this.opts.maxIntervalMs ?? 60_000, Math.max(this.opts.minIntervalMs ?? 2_000, ideal));
  }

  private watchedCount(): number {
    const horizon = this.now() - 5 * 60_000;
    for (const [id, at] of this.watched) if (at < horizon) this.watched.delete(id);
    return this.watched.size;
  }

  invalidate(jobId: string): void {
    this.snapshot?.jobs.delete(jobId);
    this.single.delete(jobId);
    if (this.snapshot) this.snapshot.at = -Infinity;
  }

  private refresh(): Promise<Snapshot> {
    this.inflight ??= this.api
      .listJobs()
      .then((list) => {
        const snap = { at: this.now(), jobs: new Map(list.map((j) => [j.jobId, j])) };
        this.snapshot = snap;
        return snap;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  async get(jobId: string): Promise<SiteJob | undefined> {
    this.watched.set(jobId, this.now());
    const interval = this.intervalMs();
    let snap = this.snapshot;
    if (!snap || this.now() - snap.at >= interval) snap = await this.refresh();
    const listed = snap.jobs.get(jobId);
    if (listed) return listed;
    // Not in the listing: ask for the job itself, at most once per interval.
    const cached = this.single.get(jobId);
    if (cached && this.now() - cached.at < interval) return cached.job;
    const job = await this.api.getJob(jobId);
    this.single.set(jobId, { at: this.now(), job });
    return job;
  }
}
