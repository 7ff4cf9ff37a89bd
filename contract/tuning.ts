// Pipeline tuning: the knobs a launcher may set, every default in one place, and compileTuning(),
// which the workflow and the SDK both use so that neither repeats a default inline. Sandbox-safe.
import { z } from 'zod';
import { DEFAULT_GRACE_MS, defaultLeaseMs, leaseProblem } from './failover.js';
import { InputError, type InputIssue } from './input-error.js';

export interface PipelineTuning {
  /** How soon a crashed worker's polling activity is handed to another worker. */
  heartbeatTimeoutMs?: number;
  /** Upper bound of the job-status polling backoff. */
  pollMaxMs?: number;
  /** Cross-site failover of the train stage (the worker must serve the recovery activities). */
  failover?: FailoverTuning;
  /**
   * A task queue per site: a stage's job at a site named here is submitted, watched and cancelled, and
   * the checkpoints it wrote verified and catalogued, by the workers polling that queue (they have the
   * site's backend and see its files); everything else runs on the run's own queue. A site is the one
   * placement chose (`runtime: auto`), else the runtime a stage is pinned to (`slurm`, `local`, …).
   */
  siteQueues?: Record<string, string>;
}

export interface FailoverTuning {
  /** Sites to use, in preference order (default: every site the worker has configured). */
  sites?: string[];
  /** How long a site may stay unobservable before the job is given up there (default 60 s). */
  graceMs?: number;
  /** The job's lease; it must expire well inside the grace window (default: half of it). */
  leaseTtlMs?: number;
  /** Failovers allowed before the stage fails (default 3). */
  maxFailovers?: number;
  /** How often to look for a healthy site when none is (default 30 s)… */
  waitIntervalMs?: number;
  /** … and for how long at most, within spec.deadline (default 30 min). */
  maxWaitMs?: number;
}

export const TUNING_DEFAULTS = {
  heartbeatTimeoutMs: 30_000,
  pollMaxMs: 64_000,
  failover: { graceMs: DEFAULT_GRACE_MS, maxFailovers: 3, waitIntervalMs: 30_000, maxWaitMs: 30 * 60_000 },
} as const;

/**
 * How the Argo interpreter stays within Temporal's limits at any size (docs/argo-scale.md): at most
 * `maxActivitiesInFlight` activities in flight per workflow; a workflow runs about `sliceNodes` leaf
 * nodes itself and hands larger loops and composite calls to child workflows, at most `sliceFanOut`
 * children per loop (a child with more items splits them again), at most `childrenAtOnce` children of
 * one workflow running at a time, loops' and composite calls' together (each one's first workflow task
 * does a slice's worth of work, and each live child holds memory: not all at once on a loaded worker).
 */
export const ARGO_SCALE_DEFAULTS = { maxActivitiesInFlight: 500, sliceNodes: 250, sliceFanOut: 100, childrenAtOnce: 8 } as const;

/**
 * The workflow task timeout of an Argo run and its argoSlice children (Temporal's default is 10 s). A
 * worker running an Argo run's pods has a hundred of them at once beside the run's and its children's
 * workflow tasks, which queue for its one workflow thread: a 12 × 12 × 12 DAG on 2 busy cores had
 * workflow tasks of 7–20 s, each past 10 s timed out, retried and replayed from scratch, more work on an
 * already starved worker. A worker that dies holding a task delays the run by this long instead.
 */
export const ARGO_WORKFLOW_TASK_TIMEOUT = '60s';

export interface CompiledFailover extends Required<Omit<FailoverTuning, 'sites'>> {
  sites?: string[];
}

export interface CompiledTuning {
  heartbeatTimeoutMs: number;
  pollMaxMs: number;
  /** Present only when the launcher asked for failover. */
  failover?: CompiledFailover;
  /** Present only when the launcher named site queues (see PipelineTuning.siteQueues). */
  siteQueues?: Record<string, string>;
}

/** Every knob with its default applied (the lease follows the grace window unless set). */
export function compileTuning(t: PipelineTuning = {}): CompiledTuning {
  const d = TUNING_DEFAULTS;
  const fo = t.failover;
  let failover: CompiledFailover | undefined;
  if (fo) {
    const graceMs = fo.graceMs ?? d.failover.graceMs;
    failover = {
      sites: fo.sites,
      graceMs,
      leaseTtlMs: fo.leaseTtlMs ?? defaultLeaseMs(graceMs),
      maxFailovers: fo.maxFailovers ?? d.failover.maxFailovers,
      waitIntervalMs: fo.waitIntervalMs ?? d.failover.waitIntervalMs,
      maxWaitMs: fo.maxWaitMs ?? d.failover.maxWaitMs,
    };
  }
  const out: CompiledTuning = { heartbeatTimeoutMs: t.heartbeatTimeoutMs ?? d.heartbeatTimeoutMs, pollMaxMs: t.pollMaxMs ?? d.pollMaxMs, failover };
  // Absent unless asked for, so that a run without site queues compiles to exactly what it did before.
  if (t.siteQueues && Object.keys(t.siteQueues).length) out.siteQueues = { ...t.siteQueues };
  return out;
}

/**
 * Heartbeats a watching activity (awaitJob, watchAt) sends per heartbeat timeout, on its own schedule
 * and whatever its poll gap: one may be delayed by the worker's heartbeat throttle, or lost, and the
 * next still reaches the server in time.
 */
export const HEARTBEATS_PER_TIMEOUT = 3;

/**
 * How often a watching activity heartbeats: a third of its heartbeat timeout. An activity without one
 * still heartbeats at the default's cadence, because cancellation reaches an activity only in the
 * answer to a heartbeat.
 */
export function watchHeartbeatMs(heartbeatTimeoutMs?: number): number {
  const timeout = heartbeatTimeoutMs && heartbeatTimeoutMs > 0 ? heartbeatTimeoutMs : TUNING_DEFAULTS.heartbeatTimeoutMs;
  return Math.max(1, Math.floor(timeout / HEARTBEATS_PER_TIMEOUT));
}

/** What of the worker a launcher's tuning must fit (config/defaults.ts DEFAULTS has the defaults). */
export interface WorkerTiming {
  /** The worker's maxHeartbeatThrottleInterval: it sends an activity's heartbeats at most this often. */
  heartbeatThrottleMs: number;
}

/**
 * Problems of a well-formed tuning that the schema cannot see, each naming its field. The worker sends
 * heartbeats at most once per throttle interval, so whatever the watch's cadence, heartbeats reach the
 * server max(cadence, throttle) apart: a timeout shorter than two of those would time out a healthy watch.
 */
export function tuningIssues(t: PipelineTuning, worker: WorkerTiming): InputIssue[] {
  const issues: InputIssue[] = [];
  const { heartbeatTimeoutMs } = compileTuning(t);
  const cadence = Math.max(watchHeartbeatMs(heartbeatTimeoutMs), worker.heartbeatThrottleMs);
  if (heartbeatTimeoutMs < 2 * cadence) {
    issues.push({ path: 'tuning.heartbeatTimeoutMs', message: `${heartbeatTimeoutMs} ms is below twice the worker's heartbeat cadence (${cadence} ms: the worker sends heartbeats at most once per ${worker.heartbeatThrottleMs} ms), so a healthy watch could time out; use at least ${2 * worker.heartbeatThrottleMs} ms` });
  }
  if (t.failover) {
    const graceMs = t.failover.graceMs ?? TUNING_DEFAULTS.failover.graceMs;
    const problem = leaseProblem(graceMs, t.failover.leaseTtlMs ?? defaultLeaseMs(graceMs));
    if (problem) issues.push({ path: t.failover.leaseTtlMs === undefined ? 'tuning.failover.graceMs' : 'tuning.failover.leaseTtlMs', message: `${problem}; shorten the lease or lengthen the grace window (--failover-grace)` });
  }
  if (t.failover && t.siteQueues && Object.keys(t.siteQueues).length) {
    // Failover reaches every site through the recovery activities of the run's own queue.
    issues.push({ path: 'tuning.siteQueues', message: 'site queues cannot be combined with tuning.failover, which moves training between sites from the run\'s own task queue; use one or the other' });
  }
  return issues;
}

/**
 * A launcher's tuning, checked before anything starts: its shape (pipelineTuningSchema) and how its
 * timings fit together and with the worker. Throws an InputError naming every bad field.
 */
export function validateTuning(input: unknown, worker: WorkerTiming): PipelineTuning {
  const r = pipelineTuningSchema.safeParse(input ?? {});
  if (!r.success) {
    throw new InputError(
      'pipeline tuning',
      r.error.issues.map((i) => {
        const path = ['tuning', ...i.path.map(String), ...(i.code === 'unrecognized_keys' ? [i.keys[0]!] : [])].join('.');
        return { path, message: i.code === 'unrecognized_keys' ? `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `"${k}"`).join(', ')}` : i.message };
      }),
    );
  }
  const issues = tuningIssues(r.data, worker);
  if (issues.length) throw new InputError('pipeline tuning', issues);
  return r.data;
}

// Milliseconds as the SDK takes them: whole, positive, and below 2^31 (Node's and Temporal's timer limit).
const ms = (min = 1) => z.number().int().min(min).max(2 ** 31 - 1);

/** The shape the SDK and CLI check a launcher's tuning against, before anything starts. */
export const pipelineTuningSchema = z
  .object({
    heartbeatTimeoutMs: ms(1000).optional(),
    pollMaxMs: ms(100).optional(),
    failover: z
      .object({
        sites: z.array(z.string().min(1)).optional(),
        graceMs: ms(1000).optional(),
        leaseTtlMs: ms(1000).optional(),
        maxFailovers: z.number().int().min(0).max(100).optional(),
        waitIntervalMs: ms(100).optional(),
        maxWaitMs: ms(0).optional(),
      })
      .strict()
      .optional(),
    siteQueues: z.record(z.string().min(1, 'a site name must not be empty'), z.string().regex(/^\S+$/, 'a task queue name must be non-empty and contain no whitespace')).optional(),
  })
  .strict();
