// Which job names this run uses. Runs started before PATCHES.jobIdentity keep the names their history
// recorded; newer runs name jobs by their lineage (identity.ts), so that a reset or a resume submits
// new jobs instead of adopting the finished ones of the run it came from.
import { workflowInfo } from '@temporalio/workflow';
import { jobName, lineageJobName } from './identity.js';
import type { JobStage } from './job-shape.js';
import { PATCHES, type PatchId } from './patches.js';

/** Computed in the workflow and passed in the activity input, so activity retries reuse it. */
export function stageJobName(run: { workflowId: string; has(id: PatchId): boolean }, stage: JobStage, attempt: number): string {
  const { workflowId } = run;
  return run.has(PATCHES.jobIdentity) ? lineageJobName({ workflowId, runId: workflowInfo().runId }, stage, attempt) : jobName(workflowId, stage, attempt);
}
