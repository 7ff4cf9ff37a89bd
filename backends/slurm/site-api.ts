// What a Slurm job backend needs from a site, whichever API reaches it (FirecREST v2 or slurmrestd).
import type { BatchJob } from './script.js';

/** One job as the site reports it, already normalised by the API's mapping module. */
export interface SiteJob {
  jobId: string;
  name: string;
  /** The site's state string, mapped by states.ts. */
  state: string | string[];
  exitCode?: number;
  stateReason?: string;
  standardOutput?: string;
  standardError?: string;
  /** The job's comment: Tandem's label (backends/labels.ts) on the jobs it submitted. */
  comment?: string;
  /** Where and with what it runs, where the API reports it (placement's inventory). */
  nodes?: string;
  nodeCount?: number;
  /** Allocated TRES, "cpu=2,mem=512M,node=1,gres/gpu=1". */
  tres?: string;
  /** Epoch seconds. */
  startTime?: number;
  timeLimitMinutes?: number;
}

export interface SiteApi {
  /** Every job of the calling user that the site still knows; one request. */
  listJobs(): Promise<SiteJob[]>;
  /** One job; undefined when the site does not know it (404). */
  getJob(jobId: string): Promise<SiteJob | undefined>;
  /** Submits and returns the new job id. Not retried by the API: the backend looks up by name first. */
  submit(job: BatchJob): Promise<string>;
  /** Cancels; "no such job" is reported as a SlurmApiError of kind not-found. */
  cancel(jobId: string): Promise<void>;
  /** The last `lines` lines of a file on the site; undefined when absent. */
  tail(path: string, lines: number): Promise<string | undefined>;
  /** A small file's content (progress), or undefined. */
  readSmall?(path: string): Promise<string | undefined>;
}

/** One node as the site reports it, normalised across APIs (placement's inventory is built from it). */
export interface SlurmNode {
  name: string;
  cpus: number;
  memoryMB: number;
  allocCpus: number;
  allocMemoryMB: number;
  gpus: number;
  /** GPUs allocated to running jobs now. */
  allocGpus: number;
  gpuModel?: string;
  partitions: string[];
  /** Lower-case Slurm state words, e.g. ["idle"], ["mixed", "drain"]. */
  state: string[];
  features: string[];
}

/** GPUs from a GRES string such as "gpu:a100:4(S:0-1),nic:2" or "gpu:8". */
export function gpusFromGres(gres: string | undefined | null): { count: number; model?: string } {
  let count = 0;
  let model: string | undefined;
  for (const part of (gres ?? '').split(',')) {
    const m = /^gpu(?::([A-Za-z][\w.-]*))?:(\d+)/.exec(part.trim());
    if (m) {
      count += Number(m[2]);
      model ??= m[1];
    }
  }
  return { count, model };
}
