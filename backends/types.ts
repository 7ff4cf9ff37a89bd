import type { Resources } from '../contract/pipeline.js';
import type { JobRef, JobStatus } from '../contract/outcome.js';
import type { KubernetesOptionsInput } from '../contract/kubernetes.js';
import type { JobLabels } from '../contract/job-labels.js';

export interface JobRequest {
  /** Deterministic name, e.g. tandem-<workflowId>-<stage>-<attempt>; the idempotency key. */
  name: string;
  command: string[];
  env: Record<string, string>;
  resources: Resources;
  /** Walltime in ms; the backend stops the job with TIMEOUT beyond it. */
  walltimeMs: number;
  /** stages.<stage>.kubernetes, for the Kubernetes backend; the others ignore it. */
  kubernetes?: KubernetesOptionsInput;
  /** Who the job belongs to (contract/job-labels.ts); the Slurm backends store it as the job's comment. */
  labels?: JobLabels;
  /** What the local sandbox lets the job reach beyond its own files (backends/local-jobs.ts); other backends ignore it. */
  sandbox?: { writable?: string[]; network?: 'none' | 'host' };
}

/** One interface per kind of batch system: local processes, Slurm (FirecREST/slurmrestd), Kubernetes Jobs. */
export interface JobBackend {
  readonly runtime: JobRef['runtime'];
  findByName(name: string): Promise<JobRef | undefined>;
  submit(request: JobRequest): Promise<JobRef>;
  status(jobId: string): Promise<JobStatus>;
  /** Idempotent: cancelling a finished or unknown job is not an error. */
  cancel(jobId: string): Promise<void>;
}
