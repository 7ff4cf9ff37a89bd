// The Slurm job backend shared by FirecREST and slurmrestd: idempotent submit (look-up by the
// deterministic name first, and again after any doubtful submit), status through a shared poller that
// keeps the request rate per watched job bounded, cancel as compensation (not found = already gone),
// and the tail of the job's output on failure.
import type { JobProgress, JobRef, JobStatus } from '../../contract/outcome.js';
import type { JobBackend, JobRequest } from '../types.js';
import { SlurmApiError, defaultSleep } from './errors.js';
import { progressFile, renderBatchJob } from './script.js';
import type { SiteApi, SiteJob } from './site-api.js';
import { toJobState } from './states.js';
import { parseJsonLimited } from '../../contract/limits.js';
import { StatusPoller, type PollerOptions } from './status-poller.js';

export interface SlurmBackendOptions extends PollerOptions {
  /** The site's name (recorded in job refs and passed to jobs as TANDEM_SITE). */
  site: string;
  /** Directory on the site for job output and progress files (must be writable by the job's user). */
  workDir: string;
  /** A job missing right after submit is tolerated this long (listing lag), in ms. */
  submitGraceMs?: number;
  /** Attempts for a submit whose fate is unknown (dropped connection, 5xx). */
  submitAttempts?: number;
  /** Lines of stdout/stderr surfaced in status on failure. */
  tailLines?: number;
  /** Read the job's progress file while it runs (one extra request per refresh over FirecREST). */
  readProgress?: boolean;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export class SlurmJobBackend implements JobBackend {
  readonly runtime = 'slurm' as const;
  private readonly poller: StatusPoller;
  private readonly submittedAt = new Map<string, number>();
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(
    protected readonly api: SiteApi,
    protected readonly opts: SlurmBackendOptions,
  ) {
    this.sleep = opts.sleep ?? defaultSleep;
    this.now = opts.now ?? Date.now;
    this.poller = new StatusPoller(api, { ...opts, now: this.now });
  }

  get site(): string {
    return this.opts.site;
  }

  private ref(job: { jobId: string; name: string }, adopted: boolean): JobRef {
    return { runtime: 'slurm', jobId: job.jobId, name: job.name, site: this.opts.site, adopted };
  }

  async findByName(name: string): Promise<JobRef | undefined> {
    const jobs = (await this.api.listJobs()).filter((j) => j.name === name);
    if (jobs.length === 0) return undefined;
    // Several jobs can share a name only if someone else submitted one; the newest is ours.
    const newest = jobs.reduce((a, b) => (Number(b.jobId) > Number(a.jobId) ? b : a));
    return this.ref(newest, true);
  }

  async submit(req: JobRequest): Promise<JobRef> {
    const job = renderBatchJob(req, { workDir: this.opts.workDir, site: this.opts.site });
    const attempts = this.opts.submitAttempts ?? 8;
    let delay = 250;
    for (let attempt = 1; ; attempt++) {
      const existing = await this.findByName(req.name);
      if (existing) return existing;
      try {
        const jobId = await this.api.submit(job);
        this.submittedAt.set(jobId, this.now());
        return this.ref({ jobId, name: req.name }, false);
      } catch (e) {
        // A submit that failed in transit may still have created the job: look again before retrying.
        if (!(e instanceof SlurmApiError) || e.kind !== 'observation' || attempt >= attempts) throw e;
        await this.sleep(Math.max(delay, e.retryAfterMs ?? 0));
        delay = Math.min(delay * 2, 8000);
      }
    }
  }

  async status(jobId: string): Promise<JobStatus> {
    const job = await this.poller.get(jobId);
    if (!job) {
      const since = this.submittedAt.get(jobId);
      if (since !== undefined && this.now() - since < (this.opts.submitGraceMs ?? 20_000)) {
        return { jobId, state: 'PENDING', reason: 'submitted; not yet visible at the site' };
      }
      return { jobId, state: 'LOST', reason: `job ${jobId} is no longer known at site ${this.opts.site}` };
    }
    const state = toJobState(job.state) ?? 'PENDING';
    const st: JobStatus = { jobId, state };
    if (job.exitCode !== undefined) st.exitCode = job.exitCode;
    const active = state === 'PENDING' || state === 'RUNNING' || state === 'COMPLETING';
    if (active) {
      if (state === 'RUNNING' && this.opts.readProgress !== false) st.progress = await this.progress(job);
      return st;
    }
    if (this.opts.readProgress !== false) st.progress = await this.progress(job);
    if (state !== 'COMPLETED') {
      const reason = job.stateReason && job.stateReason !== 'None' ? job.stateReason : undefined;
      st.reason = [reason, job.exitCode !== undefined && job.exitCode !== 0 ? `exit code ${job.exitCode}` : undefined].filter(Boolean).join(', ') || undefined;
      const tail = await this.tail(job);
      if (tail) st.tail = tail;
    }
    return st;
  }

  private async progress(job: SiteJob): Promise<JobProgress | undefined> {
    if (!this.api.readSmall) return undefined;
    try {
      const text = await this.api.readSmall(progressFile({ workingDirectory: this.opts.workDir, jobName: job.name }));
      return text ? (parseJsonLimited(text) as JobProgress) : undefined;
    } catch {
      return undefined; // absent or mid-write: the next poll sees it
    }
  }

  /** The job's standard output as the site holds it (its last `lines` lines), e.g. an Argo step's result. */
  async output(jobId: string, lines = 10_000): Promise<string | undefined> {
    const job = await this.poller.get(jobId);
    const path = job?.standardOutput ?? (job ? `${this.opts.workDir}/${job.name}.out` : undefined);
    return path ? this.api.tail(path, lines) : undefined;
  }

  private async tail(job: SiteJob): Promise<string | undefined> {
    const lines = this.opts.tailLines ?? 15;
    const out: string[] = [];
    const base = `${this.opts.workDir}/${job.name}`;
    for (const path of [job.standardError ?? `${base}.err`, job.standardOutput ?? `${base}.out`]) {
      if (!path) continue;
      try {
        const t = (await this.api.tail(path, lines))?.trim();
        if (t) out.push(t);
      } catch {
        // The tail is a courtesy: failing to read it must not turn a classified outcome into an error.
      }
    }
    return out.length ? out.join('\n').split('\n').slice(-lines).join('\n') : undefined;
  }

  async cancel(jobId: string): Promise<void> {
    try {
      await this.api.cancel(jobId);
    } catch (e) {
      if (e instanceof SlurmApiError && e.kind === 'not-found') return; // already gone
      throw e;
    }
    this.poller.invalidate(jobId);
  }
}
