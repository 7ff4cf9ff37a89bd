// The Kubernetes execution target for Argo templates: a container or script template annotated
// `tandem.io/target: kubernetes` runs as a batch/v1 Job with the template's image, command and
// annotations; the pod's log is the step's `result`. Output files stay in the pod.
import { createHash } from 'node:crypto';
import type { KubernetesJobBackend } from '../../backends/kubernetes/jobs.js';
import { ResourcesSchema } from '../../contract/pipeline.js';
import type { RunPodInput, RunPodResult } from '../../argo/lang/types.js';
import type { ExecutionTarget } from './target.js';
import { watchToResult } from './backend-target.js';

/** A DNS-1123 name of at most 63 characters (Job names become pod label values), stable per input. */
export function kubeName(jobName: string): string {
  const clean = jobName.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
  if (clean.length <= 63) return clean;
  return `${clean.slice(0, 54).replace(/-+$/, '')}-${createHash('sha256').update(jobName).digest('hex').slice(0, 8)}`;
}

export class KubernetesTarget implements ExecutionTarget {
  readonly name = 'kubernetes' as const;

  constructor(
    private readonly backend: KubernetesJobBackend,
    private readonly pollMs = 500,
  ) {}

  async run(input: RunPodInput, ctx: { heartbeat(d?: unknown): void; sleep(ms: number): Promise<void> }): Promise<RunPodResult> {
    if (!input.image) throw new Error(`template ${input.templateName} names no image, which a Kubernetes pod needs`);
    const command = input.source !== undefined ? [...input.command, '-c', input.source] : [...input.command, ...input.args];
    if (command.length === 0) throw new Error(`template ${input.templateName} has no command: Tandem passes the command explicitly, it does not read the image's entrypoint`);
    const name = kubeName(input.jobName);
    const walltimeMs = input.timeoutMs ?? 3_600_000;
    const ref =
      (await this.backend.findByName(name)) ??
      (await this.backend.submit({ name, command, env: input.env, resources: ResourcesSchema.parse({ walltime: Math.ceil(walltimeMs / 1000) }), walltimeMs, kubernetes: { image: input.image, annotations: input.annotations } }));
    return watchToResult(this.backend, ref, input, ctx, { pollMs: this.pollMs, target: `kubernetes:${ref.jobId}`, output: () => this.backend.output(ref.jobId), describe: `Job ${ref.jobId}` });
  }
}
