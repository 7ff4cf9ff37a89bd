// The Slurm execution target for Argo templates: a `plugin: { slurm: … }` template (or a container
// annotated for Slurm) becomes a batch job on the worker's Slurm backend (FirecREST or slurmrestd),
// with its resources from the template and #SBATCH lines, a deterministic job name, and its stdout as
// the step's `result`. Output files and artifacts stay on the site's filesystem.
import type { SlurmJobBackend } from '../../backends/slurm/job-backend.js';
import { ResourcesSchema } from '../../contract/pipeline.js';
import { parseDuration } from '../../contract/duration.js';
import type { RunPodInput, RunPodResult } from '../../argo/lang/types.js';
import { slurmJobSpec } from './slurm-job.js';
import type { ExecutionTarget } from './target.js';
import { watchToResult } from './backend-target.js';

export class SlurmTarget implements ExecutionTarget {
  readonly name = 'slurm' as const;

  constructor(
    private readonly backend: SlurmJobBackend,
    private readonly pollMs = 500,
  ) {}

  async run(input: RunPodInput, ctx: { heartbeat(d?: unknown): void; sleep(ms: number): Promise<void> }): Promise<RunPodResult> {
    const spec = input.slurm ? slurmJobSpec(input.slurm) : undefined;
    // The script runs under bash on the site: a batch script's own interpreter line is not honoured by
    // the backend's wrapper, and bash is what every Slurm site has.
    const command = spec ? ['/bin/bash', '-c', spec.script] : input.source !== undefined ? [...input.command, '-c', input.source] : [...input.command, ...input.args];
    if (command.length === 0) throw new Error(`template ${input.templateName} has no command to run on Slurm`);
    const walltimeMs = (spec?.walltime ? slurmMinutes(spec.walltime) ?? parseDuration(spec.walltime) : undefined) ?? input.timeoutMs ?? 3_600_000;
    const resources = ResourcesSchema.parse({
      nodes: spec?.nodes ?? 1,
      tasksPerNode: spec?.tasksPerNode ?? 1,
      cpusPerTask: spec?.cpusPerTask ?? 1,
      gpusPerNode: spec?.gpusPerNode ?? 0,
      memoryMB: spec?.memoryMB ?? 1024,
      walltime: Math.ceil(walltimeMs / 1000),
      partition: spec?.partition,
      account: spec?.account,
      constraint: spec?.constraint,
      reservation: spec?.reservation,
    });
    const name = input.jobName.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 120);
    const ref = (await this.backend.findByName(name)) ?? (await this.backend.submit({ name, command, env: { ...input.env, ...spec?.env }, resources, walltimeMs }));
    return watchToResult(this.backend, ref, input, ctx, { pollMs: this.pollMs, target: `slurm:${ref.site}:${ref.jobId}`, output: () => this.backend.output(ref.jobId), describe: `Slurm job ${ref.jobId}` });
  }
}

/** Slurm's own time formats (minutes, MM:SS, HH:MM:SS, D-HH:MM:SS) in ms. */
export function slurmMinutes(t: string): number | undefined {
  const m = /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(t.trim());
  if (!m) return undefined;
  const [d, a, b, c] = [Number(m[1] ?? 0), Number(m[2]), m[3] === undefined ? undefined : Number(m[3]), m[4] === undefined ? undefined : Number(m[4])];
  const secs = c !== undefined ? a * 3600 + b! * 60 + c : b !== undefined ? (m[1] ? a * 3600 + b * 60 : a * 60 + b) : a * 60;
  return (d * 86400 + secs) * 1000;
}
