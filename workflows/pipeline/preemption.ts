// Preemption between runs. A run whose job placement starts by preempting tells each victim's run
// (a signal) before it cancels the victim's job, so that the victim sees its job's CANCELLED end as a
// preemption: an infrastructure ending, resubmitted (uncounted) and restored from its checkpoint.
import { defineSignal, getExternalWorkflowHandle, isCancellation, setHandler } from '@temporalio/workflow';
import type { Victim } from '../../activities/placement.js';
import type { PipelineRun } from './context.js';
import type { JobStage } from './job-shape.js';

export interface PreemptedNotice {
  /** The preempting run's workflow id and priority. */
  by: string;
  priority: number;
  /** The victim's job (the site's job id, as the victim's JobRef has it). */
  jobId: string;
  stage: string;
}

export const preemptedSignal = defineSignal<[PreemptedNotice]>('tandem.preempted');

const notices = new WeakMap<PipelineRun, Map<string, PreemptedNotice>>();

/** Installs the run's handler (once): a notice that arrived earlier was buffered by Temporal. */
export function listenForPreemption(run: PipelineRun): void {
  if (notices.has(run)) return;
  const seen = new Map<string, PreemptedNotice>();
  notices.set(run, seen);
  setHandler(preemptedSignal, (n) => {
    seen.set(n.jobId, n);
    run.record({ kind: 'preemption', stage: n.stage as JobStage, jobId: n.jobId, message: `job ${n.jobId} preempted by run ${n.by} (priority ${n.priority}); it resumes from its checkpoint` });
  });
}

/** The notice for a job of this run that was preempted, if any. */
export function preemptionOf(run: PipelineRun, jobId: string): PreemptedNotice | undefined {
  return notices.get(run)?.get(jobId);
}

/** Stops each victim: its run is told first (a run that has ended is not), then its job is cancelled.
 *  Called once the preempting job is submitted, so that the room goes to it. */
export async function preemptVictims(run: PipelineRun, stage: JobStage, attempt: number, victims: Victim[]): Promise<void> {
  for (const v of victims) {
    run.record({ kind: 'preemption', stage, attempt, jobId: v.ref.jobId, site: v.ref.site, message: `preempted ${v.label} to start` });
    try {
      await getExternalWorkflowHandle(v.run).signal(preemptedSignal, { by: run.workflowId, priority: run.spec.priority, jobId: v.ref.jobId, stage: v.stage });
    } catch {
      // The victim's run has closed (or never was a pipeline): nothing resumes it, its job stops all the same.
    }
    try {
      await run.short.cancelJob(v.ref);
    } catch (e) {
      if (isCancellation(e)) throw e;
      // The preemptor's job is already queued at the site (job-stage.ts): it waits for the victim's end
      // instead, and the run goes on rather than failing with that job outside its compensations.
      run.record({ kind: 'preemption', stage, attempt, jobId: v.ref.jobId, site: v.ref.site, message: `could not stop ${v.label}: ${(e as Error).message}; this job waits for it to end` });
    }
  }
}
