// The pipeline's activity option profiles, one per kind of call. Timeouts and retries decide how
// long a dead worker holds a stage up and what counts as a job failure, so they live together.
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/common';
import type { createActivities } from '../../activities/index.js';
import type { KubernetesActivities } from '../../activities/kubernetes.js';
import type { PlacementActivities } from '../../activities/placement.js';
import type { RecoveryActivities } from '../../activities/recovery.js';
import { NON_RETRYABLE_TYPES } from '../../contract/failures.js';

export type PipelineActivities = ReturnType<typeof createActivities> & KubernetesActivities & PlacementActivities & RecoveryActivities;

/** Observation failures retried inside one activity (never a new job). */
export const OBSERVATION_RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE_TYPES } as const;

/** Unlimited: a job or rollout is watched until it ends, however many workers that takes. */
const UNTIL_IT_ENDS = { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: NON_RETRYABLE_TYPES } as const;

/**
 * How soon a short call that no worker is running is retried. The worker heartbeats it while it runs
 * (workers/keepalive.ts), so only a task that was lost between server and worker (its dispatch answered
 * while the server was overloaded) waits this long, instead of its whole start-to-close timeout.
 */
export const SHORT_CALL_HEARTBEAT_TIMEOUT = '20s';

/** Submit, cancel, place, admit, catalogue: quick calls to a scheduler, ledger or file system. */
export function shortIo(): ActivityOptions {
  return { startToCloseTimeout: '2m', heartbeatTimeout: SHORT_CALL_HEARTBEAT_TIMEOUT, retry: OBSERVATION_RETRY };
}

/**
 * Short bookkeeping run as local activities on the workflow's own worker (since PATCHES.leanHistory):
 * reading a site's migration routing, admitting a stage to its quota ledger. No task of their own on the
 * server, so no three activity events and no workflow task around each; the same retries.
 */
export function localBookkeeping(): LocalActivityOptions {
  return { startToCloseTimeout: '2m', retry: OBSERVATION_RETRY };
}

/** Watching a job to its end. */
export function watchJob(walltimeMs: number, heartbeatTimeoutMs: number): ActivityOptions {
  // The job's walltime bounds one watch; the margin covers queueing on a busy site.
  return { startToCloseTimeout: walltimeMs + 3_600_000, heartbeatTimeout: heartbeatTimeoutMs, retry: UNTIL_IT_ENDS };
}

/** Copying data and checkpoints between sites, and fencing a job once its site answers again. */
export function staging(heartbeatTimeoutMs: number): ActivityOptions {
  return { startToCloseTimeout: '30m', heartbeatTimeout: heartbeatTimeoutMs, retry: OBSERVATION_RETRY };
}

/** Starting a model server or applying its Deployment. */
export function deployCall(maxAttempts: number): ActivityOptions {
  // It takes seconds; the timeout is how long a worker that died mid-call holds the stage up
  // before another worker retries it.
  return { startToCloseTimeout: '1m', heartbeatTimeout: SHORT_CALL_HEARTBEAT_TIMEOUT, retry: { ...OBSERVATION_RETRY, maximumAttempts: maxAttempts } };
}

/** The readiness gate: health, model listing and a smoke completion, within the spec's timeout. */
export function readinessGate(readinessTimeoutMs: number, heartbeatTimeoutMs: number): ActivityOptions {
  return { startToCloseTimeout: readinessTimeoutMs + 30_000, heartbeatTimeout: heartbeatTimeoutMs, retry: { ...OBSERVATION_RETRY, maximumAttempts: 3 } };
}

/** Waiting for a Kubernetes rollout, and rolling it back. */
export function rollout(heartbeatTimeoutMs: number): ActivityOptions {
  return { startToCloseTimeout: '30m', heartbeatTimeout: heartbeatTimeoutMs, retry: UNTIL_IT_ENDS };
}
