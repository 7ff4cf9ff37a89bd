// What a running pipeline reports through its queries; shared by the workflow, SDK and CLI.
import type { StageName } from './pipeline.js';
import type { JobProgress } from './outcome.js';
import type { RouteDecision } from './routing.js';

export type Phase = 'running' | 'compensating' | 'completed' | 'failed' | 'cancelled';
export type StageStatus = 'pending' | 'running' | 'retrying' | 'completed' | 'failed' | 'cancelled' | 'compensated';

export interface StageState {
  status: StageStatus;
  attempts: number;
  runtime?: string;
  site?: string;
  jobId?: string;
  startedAt?: string;
  finishedAt?: string;
  error?: string;
  progress?: JobProgress;
}

export type TimelineKind =
  | 'pipeline-started'
  | 'stage-started'
  | 'stage-reused'
  | 'placement'
  | 'job-submitted'
  | 'job-adopted'
  | 'job-finished'
  | 'retry-scheduled'
  | 'stage-completed'
  | 'stage-failed'
  | 'compensation'
  | 'compensation-failed'
  | 'pipeline-completed'
  | 'pipeline-failed'
  | 'pipeline-cancelled'
  // spec.deadline reached while a stage ran: it is cancelled and the saga runs.
  | 'deadline'
  // Cross-site recovery (failover path): where to run, what was restored, what was fenced.
  | 'site-choice'
  | 'site-wait'
  | 'restore'
  | 'failover'
  | 'fence'
  // Tenant quotas (TANDEM_QUOTAS_FILE): a stage's hold booked, waiting for room, released.
  | 'quota'
  | 'quota-wait'
  // Staged migration, Phase 2: which pool of a migrating site the pipeline's jobs go to, and why.
  | 'routing'
  // Placement preempted another run's job to start this one, or this run's job was preempted.
  | 'preemption';

export interface TimelineEntry {
  at: string;
  kind: TimelineKind;
  stage?: StageName;
  attempt?: number;
  message: string;
  jobId?: string;
  runtime?: string;
  site?: string;
  state?: string;
}

export interface PipelineResult {
  pipeline: string;
  model: string;
  endpoint: string;
  checkpoint: { path: string; step: number };
  completion: string;
  trainingAttempts: number;
}

export interface PipelineStatus {
  workflowId: string;
  pipeline: string;
  tenant: string;
  phase: Phase;
  stage?: StageName;
  stages: Record<StageName, StageState>;
  error?: string;
  result?: PipelineResult;
  /** Set when this run resumes another. */
  resumedFrom?: string;
  /** Set when the run's jobs went to a migrating site: the pool they were routed to and why. */
  routing?: RouteDecision;
}
