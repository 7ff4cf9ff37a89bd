// Names derived from the run alone, so that a replay, a resubmission after a worker crash and the
// backend's own listing all agree on them (backends adopt a job they find under the same name).
import { shortHash } from '../../contract/hash.js';
import type { StageName } from '../../contract/pipeline.js';
import type { JobStage } from './job-shape.js';

/**
 * The name runs started before PATCHES.jobIdentity gave their jobs (they keep it on replay). It is
 * not unique: a reset keeps the workflow id, and the 40-character cut can drop what tells two ids apart.
 */
export function jobName(workflowId: string, stage: StageName, attempt: number): string {
  const id = workflowId.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `tandem-${id}-${stage}-${attempt}`;
}

/** One execution of a pipeline: a reset (`runs retry`) keeps the workflow id but gets a new run id;
 *  a resume is a new workflow id. Activity retries and worker crashes change neither. */
export interface RunLineage {
  workflowId: string;
  runId: string;
}

/** Kubernetes puts the Job's name in label values (`job-name`, tandem.dev/job): at most 63 characters.
 *  Slurm accepts 128 (backends/slurm/script.ts), file names 255. */
export const JOB_NAME_MAX = 63;
/** How much of the workflow id stays readable: room for the longest stage and a two-digit attempt. */
const SLUG_MAX = 28;

/**
 * `tandem-<workflow id, cut>-<hash>-<stage>-<attempt>`: the hash covers the whole identity (workflow
 * id, run id, stage, attempt), so names differ whenever identities do, however the prefix was cut.
 * Lower-case [a-z0-9-], alphanumeric at both ends: valid for Slurm, Kubernetes and file names.
 */
export function lineageJobName(run: RunLineage, stage: StageName, attempt: number): string {
  const hash = shortHash(JSON.stringify([run.workflowId, run.runId, stage, attempt]));
  const fixed = `tandem--${hash}-${stage}-${attempt}`.length;
  const slug = run.workflowId.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+/, '').slice(0, Math.max(0, Math.min(SLUG_MAX, JOB_NAME_MAX - fixed))).replace(/-+$/, '');
  return ['tandem', slug, hash, stage, String(attempt)].filter(Boolean).join('-');
}

/**
 * One name for every attempt of the run's deployment, so that a retried deploy (or a reset run)
 * replaces rather than duplicates. A name that does not fit in 60 is cut and, with `hashLong` (runs
 * with PATCHES.jobIdentity), ends in a hash of pipeline and workflow id: a 40-character pipeline
 * name would otherwise cut every run's random id suffix away and give all its runs one deployment.
 */
export function deploymentName(pipeline: string, workflowId: string, hashLong = false): string {
  const full = `${pipeline}-${workflowId}`.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
  if (!hashLong || full.length <= 60) return full.slice(0, 60).replace(/-+$/, '');
  const hash = shortHash(JSON.stringify([pipeline, workflowId]));
  return `${full.slice(0, 60 - hash.length - 1).replace(/-+$/, '')}-${hash}`;
}

/**
 * The served model endpoint of a pipeline (runs with PATCHES.servingEndpoint): one Deployment and
 * Service that every run rolls a new revision out to, named by `stages.deploy.name` (validated as a
 * DNS-1035 label) or, by default, by the pipeline (a DNS label of at most 40: prefixed when it starts
 * with a digit, which a Service name may not).
 */
export function endpointName(pipeline: string, given?: string): string {
  if (given) return given;
  return /^[a-z]/.test(pipeline) ? pipeline : `m-${pipeline}`;
}

/** One quota hold per stage of a run: it moves with the job between sites instead of piling up. */
export function holdIdOf(workflowId: string, stage: JobStage): string {
  return `${workflowId}/${stage}`;
}
