// Every ApplicationFailure type Tandem raises, its retryability, and one constructor: the only place
// failure types are named (ARCHITECTURE.md, "Failures and input errors"). Sandbox-safe: workflows,
// activities and backends all build their failures here.
//
// `nonRetryable` stops an activity's own retries. Job-level retries (a new job after a failed one)
// are decided by the workflow from the classified job outcome (contract/outcome.ts), not by Temporal.
import { ApplicationFailure } from '@temporalio/common';

export const FAILURES = {
  /** Could not observe (401/408/424/429/5xx, timeouts, a file mid-write): never a job failure. */
  ObservationFailed: { type: 'ObservationFailed', nonRetryable: false },
  /** A scheduler refused a submission for a QOS/association limit (403): back off, place again. */
  PlacementBackoff: { type: 'PlacementBackoff', nonRetryable: false },
  /** The job is gone or not yet visible (404): the caller decides (adopt, resubmit, or LOST). */
  JobNotFound: { type: 'JobNotFound', nonRetryable: false },
  /** A partition still has jobs: Phase 3 waits for them to finish or move. */
  PartitionInUse: { type: 'PartitionInUse', nonRetryable: false },
  /** The audit log cannot take a record (its key is unreadable, the disk is full): the side effect waits, retried. */
  AuditUnavailable: { type: 'AuditUnavailable', nonRetryable: false },
  /** A keyed worker refused a payload: plaintext, or not decryptable with its keys (contract/refused-payload.ts). */
  PayloadRefused: { type: 'PayloadRefused', nonRetryable: true },
  JobFailed: { type: 'JobFailed', nonRetryable: true },
  InfrastructureFailed: { type: 'InfrastructureFailed', nonRetryable: true },
  JobCancelled: { type: 'JobCancelled', nonRetryable: true },
  RuntimeUnavailable: { type: 'RuntimeUnavailable', nonRetryable: true },
  InvalidRequest: { type: 'InvalidRequest', nonRetryable: true },
  NoValidCheckpoint: { type: 'NoValidCheckpoint', nonRetryable: true },
  GateFailed: { type: 'GateFailed', nonRetryable: true },
  /** A stage that alone exceeds its tenant's quota, or that waited for quota past the deadline. */
  QuotaExceeded: { type: 'QuotaExceeded', nonRetryable: true },
  /** Workflow-level: the spec's deadline passed before a stage could start, or while one ran (it was cancelled and compensated). */
  DeadlineExceeded: { type: 'DeadlineExceeded', nonRetryable: true },
  /** The tenant policy (TANDEM_TENANT_POLICY) refuses the run: a site, partition, QoS, namespace, GPU count or variable its tenant may not use. */
  TenantPolicyDenied: { type: 'TenantPolicyDenied', nonRetryable: true },
  /** Workflow-level: no configured site can ever run the stage. */
  PlacementRejected: { type: 'PlacementRejected', nonRetryable: true },
  /** Workflow-level: a stage failed with an error that carried no type of its own. */
  StageFailed: { type: 'StageFailed', nonRetryable: true },
  /**
   * Matched, never thrown: the Argo interpreter lists it in its activities' nonRetryableErrorTypes.
   * A pod that ends Failed/Error comes back as a result (phase, message) and the interpreter applies
   * the template's retryStrategy itself.
   */
  ArgoPodFailed: { type: 'ArgoPodFailed', nonRetryable: true },
} as const;

export type FailureType = keyof typeof FAILURES;

/** The types an activity's retry policy must not retry (its `nonRetryableErrorTypes`). */
export const NON_RETRYABLE_TYPES: string[] = Object.values(FAILURES)
  .filter((f) => f.nonRetryable)
  .map((f) => f.type);

export interface FailureOptions {
  details?: unknown[];
  cause?: Error;
  /** Overrides the retry policy's next delay (e.g. a server's Retry-After). */
  nextRetryDelay?: number;
}

/** The ApplicationFailure of a known type, with the table's retryability. */
export function failure(type: FailureType, message: string, opts: FailureOptions = {}): ApplicationFailure {
  const f = FAILURES[type];
  return ApplicationFailure.create({ type: f.type, nonRetryable: f.nonRetryable, message, details: opts.details, cause: opts.cause, nextRetryDelay: opts.nextRetryDelay });
}

/**
 * A workflow's own failure around the error that ended it, never retried. It keeps the cause's type
 * even when that type is not in the table (another system's activity may raise its own), so callers
 * can still match on it; an untyped cause becomes StageFailed.
 */
export function wrapFailure(message: string, cause: Error, type?: string | null): ApplicationFailure {
  return ApplicationFailure.create({ type: type ?? FAILURES.StageFailed.type, nonRetryable: true, message, cause });
}
