// retryStrategy: which failed attempts are retried, and the backoff between them. Each attempt is a
// child node `<name>(<n>)` of the Retry node; the loop itself is in template.ts (its delay is a timer).
import { parseDuration } from '../../contract/duration.js';
import { evaluateExpr } from '../../argo/lang/expr.js';
import { scopeEnv, substitute, type Scope } from '../../argo/lang/tags.js';
import type { ArgoNode, Json, Phase } from '../../argo/lang/types.js';
import type { NodeResult } from './model.js';

export interface RetryPlan {
  /** Retries after the first attempt (`limit` may be a `{{…}}` of the global scope); unbounded without one. */
  limit: number;
  policy: string;
  expression?: string;
  baseMs: number;
  factor: number;
  capMs?: number;
  /** No retry starts later than this after the first attempt began. */
  maxMs?: number;
}

export function retryPlan(retry: Json, global: Scope): RetryPlan {
  const backoff = (retry.backoff ?? {}) as Json;
  return {
    limit: retry.limit !== undefined ? Number(substitute(String(retry.limit), global)) : Infinity,
    // An `expression` alone retries every failure it accepts, as in Argo.
    policy: String(retry.retryPolicy ?? (retry.expression !== undefined ? 'Always' : 'OnFailure')),
    expression: retry.expression !== undefined ? String(retry.expression) : undefined,
    baseMs: backoff.duration !== undefined ? parseDuration(String(backoff.duration)) ?? 0 : 0,
    factor: backoff.factor !== undefined ? Number(backoff.factor) : 1,
    capMs: backoff.cap !== undefined ? parseDuration(String(backoff.cap)) : undefined,
    maxMs: backoff.maxDuration !== undefined ? parseDuration(String(backoff.maxDuration)) : undefined,
  };
}

/** `lastRetry.*`: the previous attempt, visible to the next attempt's template and to `expression`. */
export function lastRetryScope(last: NodeResult, node?: ArgoNode): Scope {
  return {
    'lastRetry.exitCode': last.outputs.exitCode ?? '',
    'lastRetry.status': last.phase,
    'lastRetry.message': last.message ?? '',
    'lastRetry.duration': String(node?.finishedAt && node.startedAt ? (Date.parse(node.finishedAt) - Date.parse(node.startedAt)) / 1000 : 0),
  };
}

/**
 * Whether the retry policy and limit allow another attempt after attempt `attempt` (0-based) ended
 * in `phase`. A limit that is not a number never stops the retries, as before.
 */
export function policyRetries(plan: RetryPlan, phase: Phase, attempt: number): boolean {
  const p = plan.policy;
  const retryable = p === 'Always' || (p === 'OnFailure' && phase === 'Failed') || ((p === 'OnError' || p === 'OnTransientError') && phase === 'Error');
  if (!retryable || attempt >= plan.limit) return false;
  return true;
}

/** Whether `expression` (when the strategy has one) asks for another attempt; an error in it means no. */
export function expressionRetries(plan: RetryPlan, last: Scope): boolean {
  if (plan.expression === undefined) return true;
  const env = scopeEnv(last);
  try {
    return evaluateExpr(plan.expression, env) === true;
  } catch {
    return false;
  }
}

/** The backoff before attempt `attempt + 1`: duration × factor^attempt, at most `cap`. */
export function retryDelay(plan: RetryPlan, attempt: number): number {
  let delay = plan.baseMs * plan.factor ** attempt;
  if (plan.capMs !== undefined) delay = Math.min(delay, plan.capMs);
  return delay;
}

/** Whether a retry after `delay` would start past `maxDuration` (times in ms since the epoch). */
export function pastMaxDuration(plan: RetryPlan, startedAt: number, nowMs: number, delay: number): boolean {
  return plan.maxMs !== undefined && nowMs + delay - startedAt > plan.maxMs;
}
