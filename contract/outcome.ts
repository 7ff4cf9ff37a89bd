// Job states and their classification, in one place (ARCHITECTURE.md, "How a stage runs"). Failure
// types live in contract/failures.ts. Sandbox-safe: workflows use it.

/** Slurm's job states, which every backend maps onto; LOST is a job whose supervisor vanished. */
export const JOB_STATES = [
  'PENDING', 'RUNNING', 'COMPLETING', 'COMPLETED', 'FAILED', 'OUT_OF_MEMORY', 'TIMEOUT', 'DEADLINE',
  'NODE_FAIL', 'PREEMPTED', 'BOOT_FAIL', 'LOST', 'CANCELLED',
] as const;
export type JobState = (typeof JOB_STATES)[number];

export type Outcome = 'active' | 'success' | 'job-failure' | 'infrastructure' | 'cancelled';

const OUTCOME: Record<JobState, Outcome> = {
  PENDING: 'active',
  RUNNING: 'active',
  COMPLETING: 'active',
  COMPLETED: 'success',
  FAILED: 'job-failure',
  OUT_OF_MEMORY: 'job-failure',
  TIMEOUT: 'job-failure',
  DEADLINE: 'job-failure',
  NODE_FAIL: 'infrastructure',
  PREEMPTED: 'infrastructure',
  BOOT_FAIL: 'infrastructure',
  LOST: 'infrastructure',
  CANCELLED: 'cancelled',
};

export function classifyJobState(state: JobState): Outcome {
  return OUTCOME[state];
}

export interface JobProgress {
  step: number;
  total: number;
  loss?: number;
  accuracy?: number;
  resumedFromStep?: number;
}

export interface JobRef {
  runtime: 'local' | 'slurm' | 'kubernetes';
  jobId: string;
  name: string;
  /** Where the job runs (site/cluster), for the timeline. */
  site: string;
  /** True when submit found an existing job with this name and adopted it. */
  adopted: boolean;
}

export interface JobStatus {
  jobId: string;
  state: JobState;
  exitCode?: number;
  reason?: string;
  /** The last lines of the job's output, for errors and `status`. */
  tail?: string;
  progress?: JobProgress;
}
