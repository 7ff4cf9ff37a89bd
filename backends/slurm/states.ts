// Slurm job state strings (slurmrestd, FirecREST, squeue) → Tandem's JobState. Classification of those
// states (success / job failure / infrastructure) stays in contract/outcome.ts.
import type { JobState } from '../../contract/outcome.js';

const DIRECT: Record<string, JobState> = {
  PENDING: 'PENDING',
  RUNNING: 'RUNNING',
  COMPLETING: 'COMPLETING',
  COMPLETED: 'COMPLETED',
  FAILED: 'FAILED',
  OUT_OF_MEMORY: 'OUT_OF_MEMORY',
  TIMEOUT: 'TIMEOUT',
  DEADLINE: 'DEADLINE',
  NODE_FAIL: 'NODE_FAIL',
  PREEMPTED: 'PREEMPTED',
  BOOT_FAIL: 'BOOT_FAIL',
  CANCELLED: 'CANCELLED',
  // Transitional states: the job still exists and will move on by itself.
  CONFIGURING: 'PENDING',
  REQUEUED: 'PENDING',
  REQUEUE_FED: 'PENDING',
  REQUEUE_HOLD: 'PENDING',
  RESV_DEL_HOLD: 'PENDING',
  RESIZING: 'RUNNING',
  SIGNALING: 'RUNNING',
  STAGE_OUT: 'COMPLETING',
  SUSPENDED: 'RUNNING',
  STOPPED: 'RUNNING',
  // SPECIAL_EXIT is a job failure flagged by the site's epilog; REVOKED a federated sibling removed.
  SPECIAL_EXIT: 'FAILED',
  REVOKED: 'CANCELLED',
};

/**
 * Accepts "RUNNING", "CANCELLED by 0", "CA", or v0.0.40's ["RUNNING","COMPLETING"]; the base state is
 * the first word of the first entry. Unknown states are reported as still active rather than guessed at.
 */
export function toJobState(raw: string | string[] | undefined): JobState | undefined {
  const first = Array.isArray(raw) ? raw[0] : raw;
  if (!first) return undefined;
  const word = first.trim().split(/\s+/)[0]!.toUpperCase();
  return DIRECT[word] ?? SHORT[word];
}

// squeue's compact codes.
const SHORT: Record<string, JobState> = { PD: 'PENDING', R: 'RUNNING', CG: 'COMPLETING', CD: 'COMPLETED', F: 'FAILED', OOM: 'OUT_OF_MEMORY', TO: 'TIMEOUT', DL: 'DEADLINE', NF: 'NODE_FAIL', PR: 'PREEMPTED', BF: 'BOOT_FAIL', CA: 'CANCELLED' };

/** slurmrestd ≤ v0.0.38 reports the raw wait status: exit code in the high byte, signal in the low bits. */
export function decodeWaitStatus(status: number | null | undefined): { exitCode?: number; signal?: number } {
  if (status === null || status === undefined || !Number.isFinite(status)) return {};
  const signal = status & 0x7f;
  return signal ? { exitCode: 128 + signal, signal } : { exitCode: (status >> 8) & 0xff };
}
