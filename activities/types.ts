// Activity inputs and outputs shared with workflows (import type only from workflows/).
import type { Resources, Runtime } from '../contract/pipeline.js';
import type { JobRef, JobStatus } from '../contract/outcome.js';
import type { KubernetesOptionsInput } from '../contract/kubernetes.js';
import type { JobLabels } from '../contract/job-labels.js';

export interface SubmitJobInput {
  /** The pipeline's workflow id: the key of its run directory. */
  runKey: string;
  stage: 'preprocess' | 'train';
  name: string;
  runtime: Runtime;
  /** For runtime auto: the site placement chose; its backend runs the job. */
  site?: string;
  command?: string[];
  env?: Record<string, string>;
  resources: Resources;
  /** Stage parameters, passed to the program as TANDEM_<NAME> environment variables. */
  params: Record<string, string | number>;
  /** Options for the Kubernetes backend; other backends ignore them. */
  kubernetes?: KubernetesOptionsInput;
  /** Who the job belongs to: the run, stage, priority (how placement finds Tandem's own jobs). */
  labels?: JobLabels;
}

export interface AwaitJobInput {
  ref: JobRef;
  /** Upper bound of the polling backoff (it starts at 200 ms and doubles). */
  pollMaxMs?: number;
  /** What the training gauges label the job by (bounded names; absent in runs started before it was passed). */
  run?: { tenant: string; pipeline: string; stage: string };
}

export interface CatalogInput {
  runKey: string;
  verify: boolean;
  keep: number;
  keepEvery?: number;
}

export interface CatalogEntry {
  runKey: string;
  path: string;
  step: number;
  job: string;
  site: string;
  created: string;
  metrics?: Record<string, number>;
  /** Newer checkpoints that were not valid, and why. */
  skipped: { path: string; reason: string }[];
  /** Checkpoints removed by retention. */
  removed: string[];
}

export interface DeployInput {
  runKey: string;
  name: string;
  runtime: Runtime;
  model: string;
  checkpoint: string;
  command?: string[];
  env?: Record<string, string>;
}

export interface Deployment {
  runtime: 'local' | 'kubernetes';
  name: string;
  endpoint: string;
  model: string;
  checkpoint: string;
  adopted: boolean;
}

export interface ReadinessInput {
  deployment: Deployment;
  prompt: string;
  timeoutMs: number;
}

export interface ReadinessResult {
  completion: string;
  models: string[];
}

export type { JobRef, JobStatus };
