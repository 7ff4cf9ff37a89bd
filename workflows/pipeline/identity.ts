// Names derived from the run alone, so that a replay, a resubmission after a worker crash and the
// backend's own listing all agree on them (backends adopt a job they find under the same name).
import type { StageName } from '../../contract/pipeline.js';
import type { JobStage } from './job-shape.js';

/** Deterministic, and valid as a Slurm job name, Kubernetes object name and file name. */
export function jobName(workflowId: string, stage: StageName, attempt: number): string {
  const id = workflowId.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `tandem-${id}-${stage}-${attempt}`;
}

/** One name for every attempt of the run's deployment, so that a retried deploy replaces rather than duplicates. */
export function deploymentName(pipeline: string, workflowId: string): string {
  return `${pipeline}-${workflowId}`.toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 60).replace(/-+$/, '');
}

/** One quota hold per stage of a run: it moves with the job between sites instead of piling up. */
export function holdIdOf(workflowId: string, stage: JobStage): string {
  return `${workflowId}/${stage}`;
}
