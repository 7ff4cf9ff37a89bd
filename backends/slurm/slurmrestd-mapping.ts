// slurmrestd's OpenAPI plugins differ per version in paths and JSON shapes; this module is the only
// place that knows them. Implemented: v0.0.38 (Debian's Slurm 22.05). Its quirks, observed on 22.05.8:
// #SBATCH lines in the script are NOT applied (every resource must be a job property), exit_code is the
// raw wait status, requeue:false is stored as Requeue=1 (so it is never sent), and an unknown job id answers 500 with error_number 2017.
import type { BatchJob } from './script.js';
import { gpusFromGres, type SiteJob, type SlurmNode } from './site-api.js';
import { decodeWaitStatus } from './states.js';

export const SUPPORTED_SLURMRESTD_VERSIONS = ['0.0.38'] as const;
export type SlurmrestdVersion = (typeof SUPPORTED_SLURMRESTD_VERSIONS)[number];

export interface SlurmrestdError {
  error?: string;
  description?: string;
  error_number?: number;
  /** 22.05 uses error_code in submit answers and error_number elsewhere. */
  error_code?: number;
  errno?: number;
}

export interface SlurmrestdMapping {
  paths: {
    ping: string;
    jobs: string;
    job: (id: string) => string;
    submit: string;
    nodes: string;
    partitions: string;
    reservations: string;
  };
  submitBody(job: BatchJob): unknown;
  submittedJobId(body: unknown): string;
  jobs(body: unknown): SiteJob[];
  nodes(body: unknown): SlurmNode[];
  errors(body: unknown): SlurmrestdError[];
}

interface V0038Node {
  name: string;
  cpus: number;
  real_memory: number;
  alloc_cpus?: number;
  alloc_memory?: number;
  gres?: string;
  /** e.g. "gpu:a100:2(IDX:0-1)": what running jobs hold. */
  gres_used?: string;
  partitions?: string[];
  state: string;
  state_flags?: string[];
  features?: string;
}

interface V0038Job {
  job_id: number;
  name: string;
  job_state: string;
  exit_code?: number | null;
  state_reason?: string;
  state_description?: string;
  standard_output?: string;
  standard_error?: string;
  user_name?: string;
  comment?: string;
  /** Hostlist of the nodes it runs on, e.g. "c[1-2]". */
  nodes?: string;
  node_count?: number;
  /** e.g. "cpu=2,mem=512M,node=1,billing=2,gres/gpu=1": what it holds while it runs. */
  tres_alloc_str?: string;
  start_time?: number;
  /** Minutes. */
  time_limit?: number;
}

function v0038(): SlurmrestdMapping {
  const base = '/slurm/v0.0.38';
  return {
    paths: {
      ping: `${base}/ping`,
      jobs: `${base}/jobs`,
      job: (id) => `${base}/job/${encodeURIComponent(id)}`,
      submit: `${base}/job/submit`,
      nodes: `${base}/nodes`,
      partitions: `${base}/partitions`,
      reservations: `${base}/reservations`,
    },
    nodes(body) {
      return ((body as { nodes?: V0038Node[] }).nodes ?? []).map((n) => {
        const g = gpusFromGres(n.gres);
        return {
          name: n.name,
          cpus: n.cpus,
          memoryMB: n.real_memory,
          allocCpus: n.alloc_cpus ?? 0,
          allocMemoryMB: n.alloc_memory ?? 0,
          gpus: g.count,
          allocGpus: gpusFromGres(n.gres_used).count,
          gpuModel: g.model,
          partitions: n.partitions ?? [],
          state: [n.state, ...(n.state_flags ?? [])].map((x) => x.toLowerCase()),
          features: (n.features ?? '').split(',').map((f) => f.trim()).filter(Boolean),
        };
      });
    },
    submitBody({ script, directives: d, env }: BatchJob) {
      // PATH and HOME are not inherited through the REST API; a job without PATH cannot find `bash`.
      const environment = { PATH: '/usr/local/bin:/usr/bin:/bin', ...env };
      return {
        script,
        job: {
          name: d.jobName,
          nodes: [d.nodes, d.nodes],
          tasks_per_node: d.tasksPerNode,
          tasks: d.nodes * d.tasksPerNode,
          cpus_per_task: d.cpusPerTask,
          ...(d.gpusPerNode > 0 ? { gpus_per_node: `gpu:${d.gpusPerNode}` } : {}),
          memory_per_node: d.memoryMB,
          time_limit: d.timeLimitMinutes,
          ...(d.partition ? { partition: d.partition } : {}),
          ...(d.account ? { account: d.account } : {}),
          ...(d.constraint ? { constraints: d.constraint } : {}),
          ...(d.reservation ? { reservation: d.reservation } : {}),
          ...(d.comment ? { comment: d.comment } : {}),
          // `requeue` is deliberately absent: 22.05.8's v0.0.38 parser turns requeue:false into Requeue=1.
          // The site's JobRequeue default applies instead.
          current_working_directory: d.workingDirectory,
          standard_output: d.standardOutput,
          standard_error: d.standardError,
          environment,
        },
      };
    },
    submittedJobId(body) {
      const id = (body as { job_id?: number }).job_id;
      if (typeof id !== 'number') throw new Error('slurmrestd accepted the job but returned no job_id');
      return String(id);
    },
    jobs(body) {
      return ((body as { jobs?: V0038Job[] }).jobs ?? []).map((j) => ({
        jobId: String(j.job_id),
        name: j.name,
        state: j.job_state,
        exitCode: decodeWaitStatus(j.exit_code).exitCode,
        stateReason: j.state_description || j.state_reason,
        standardOutput: j.standard_output || undefined,
        standardError: j.standard_error || undefined,
        comment: j.comment || undefined,
        nodes: j.nodes || undefined,
        nodeCount: j.node_count,
        tres: j.tres_alloc_str || undefined,
        startTime: j.start_time,
        timeLimitMinutes: j.time_limit,
      }));
    },
    errors(body) {
      return ((body as { errors?: SlurmrestdError[] } | undefined)?.errors ?? []).filter((e) => e && (e.error || e.error_number || e.error_code));
    },
  };
}

export function slurmrestdMapping(version: string): SlurmrestdMapping {
  if (version === '0.0.38') return v0038();
  throw new Error(`slurmrestd API v${version} is not supported (supported: ${SUPPORTED_SLURMRESTD_VERSIONS.join(', ')})`);
}
