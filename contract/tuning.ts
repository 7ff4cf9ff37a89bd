// Pipeline tuning: the knobs a launcher may set, every default in one place, and compileTuning(),
// which the workflow and the SDK both use so that neither repeats a default inline. Sandbox-safe.
import { z } from 'zod';
import { DEFAULT_GRACE_MS, defaultLeaseMs } from './failover.js';

export interface PipelineTuning {
  /** How soon a crashed worker's polling activity is handed to another worker. */
  heartbeatTimeoutMs?: number;
  /** Upper bound of the job-status polling backoff. */
  pollMaxMs?: number;
  /** Cross-site failover of the train stage (the worker must serve the recovery activities). */
  failover?: FailoverTuning;
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

export interface CompiledFailover extends Required<Omit<FailoverTuning, 'sites'>> {
  sites?: string[];
}

export interface CompiledTuning {
  heartbeatTimeoutMs: number;
  pollMaxMs: number;
  /** Present only when the launcher asked for failover. */
  failover?: CompiledFailover;
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
  return { heartbeatTimeoutMs: t.heartbeatTimeoutMs ?? d.heartbeatTimeoutMs, pollMaxMs: t.pollMaxMs ?? d.pollMaxMs, failover };
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
  })
  .strict();
