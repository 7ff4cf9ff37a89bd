// How long the pipeline waits before trying again: a new job after a failed one, or another quota
// request. Pure: the delays become timers, so they must come out the same on replay.
import { durationMs } from '../../contract/duration.js';
import type { PipelineSpec, RetryOverride } from '../../contract/pipeline.js';
import type { JobStage } from './job-shape.js';

export const DEFAULT_RETRY = { maxAttempts: 3, initialInterval: '10s', backoffCoefficient: 2, maximumInterval: '5m' } as const;

/** Quota waits give up this long before the deadline, so the run fails for want of quota (the
 *  more useful reason) rather than by the deadline timer. */
export const QUOTA_DEADLINE_MARGIN_MS = 2000;

/** The stage's job retry policy: its own fields over the spec's over the defaults. */
export function stageRetry(spec: PipelineSpec, stage: JobStage): Required<RetryOverride> {
  return { ...DEFAULT_RETRY, ...spec.retry, ...spec.stages[stage].retry } as Required<RetryOverride>;
}

/** The pause after the n-th counted failure of a stage's job. */
export function retryDelayMs(retry: Required<RetryOverride>, failures: number): number {
  const base = durationMs(retry.initialInterval) * retry.backoffCoefficient ** (failures - 1);
  return Math.min(base, durationMs(retry.maximumInterval));
}

/** Attempts of one deploy call; deploy has no job of its own, so only maxAttempts applies. */
export function deployAttempts(spec: PipelineSpec): number {
  return spec.stages.deploy.retry?.maxAttempts ?? spec.retry?.maxAttempts ?? 3;
}

/** How long a quota wait may still last (Infinity without a deadline). */
export function quotaTimeLeftMs(deadline: string | undefined, nowMs: number): number {
  return deadline ? Date.parse(deadline) - QUOTA_DEADLINE_MARGIN_MS - nowMs : Infinity;
}

/** The pause before the next quota request: doubling, capped at ten intervals and at the time left. */
export function quotaBackoffMs(retryIntervalMs: number, round: number, leftMs: number): number {
  return Math.min(retryIntervalMs * 2 ** round, retryIntervalMs * 10, leftMs);
}
