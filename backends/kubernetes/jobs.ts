// Job stages on Kubernetes: one batch/v1 Job per attempt, named deterministically so a retried
// submit adopts the Job it already created (409 AlreadyExists → read it back).
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { JobRef, JobState, JobStatus } from '../../contract/outcome.js';
import { parseKubernetesOptions, type KubernetesOptionsInput } from '../../contract/kubernetes.js';
import type { JobBackend, JobRequest } from '../types.js';
import { call, callOrMissing, isConflict, kubeError, type KubeClients } from './client.js';
import { jobManifest } from './manifests.js';
import { watchObject } from './watch.js';

export interface KubernetesJobRequest extends JobRequest {
  /** stages.<stage>.kubernetes; validated again here so nothing invalid reaches the cluster. */
  kubernetes?: KubernetesOptionsInput;
}

export interface KubernetesJobBackendOptions {
  clients: KubeClients;
  /** Image for stages whose options name none (Tandem's own steps). */
  defaultImage: string;
  /** Shown as the job's site in timelines; default the API server's host. */
  site?: string;
  /** Pod-level retries inside one Job (default 0: Tandem retries with a new Job, visible in history). */
  backoffLimit?: number;
  /** Finished Jobs are garbage-collected after this (default one day), long enough to be observed. */
  ttlSecondsAfterFinished?: number;
  /** Annotations for every pod (e.g. sidecar injection opt-outs). */
  podAnnotations?: Record<string, string>;
  /** Options applied under each stage's own (e.g. a cluster-wide nodeSelector). */
  defaults?: KubernetesOptionsInput;
}

const TAIL_LINES = 15;

export function parseJobId(jobId: string): { namespace: string; name: string } {
  const m = /^([a-z0-9-]{1,63})\/([a-z0-9.-]{1,253})$/.exec(jobId);
  if (!m) throw new Error(`invalid Kubernetes job id ${JSON.stringify(jobId)} (expected <namespace>/<name>)`);
  return { namespace: m[1]!, name: m[2]! };
}

const condition = (job: V1Job, type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');

export class KubernetesJobBackend implements JobBackend {
  readonly runtime = 'kubernetes' as const;
  private readonly k: KubeClients;
  readonly site: string;

  constructor(private readonly opts: KubernetesJobBackendOptions) {
    this.k = opts.clients;
    this.site = opts.site ?? new URL(this.k.server).host;
  }

  private ref(job: V1Job, adopted: boolean): JobRef {
    const { name, namespace } = job.metadata!;
    return { runtime: 'kubernetes', jobId: `${namespace}/${name}`, name: name!, site: this.site, adopted };
  }

  private options(input?: KubernetesOptionsInput) {
    return parseKubernetesOptions({ ...this.opts.defaults, ...input }, 'kubernetes');
  }

  async findByName(name: string, kubernetes?: KubernetesOptionsInput): Promise<JobRef | undefined> {
    const namespace = this.options(kubernetes).namespace ?? this.k.namespace;
    const job = await callOrMissing(`read Job ${namespace}/${name}`, () => this.k.batch.readNamespacedJob({ name, namespace }));
    return job ? this.ref(job, true) : undefined;
  }

  async submit(req: KubernetesJobRequest): Promise<JobRef> {
    const options = this.options(req.kubernetes); // throws naming the field: nothing is created
    const namespace = options.namespace ?? this.k.namespace;
    const body = jobManifest({
      name: req.name,
      namespace,
      image: options.image ?? this.opts.defaultImage,
      command: req.command,
      env: req.env,
      resources: req.resources,
      walltimeMs: req.walltimeMs,
      options,
      backoffLimit: this.opts.backoffLimit ?? 0,
      ttlSecondsAfterFinished: this.opts.ttlSecondsAfterFinished ?? 86_400,
      podAnnotations: this.opts.podAnnotations,
    });
    try {
      return this.ref(await this.k.batch.createNamespacedJob({ namespace, body }), false);
    } catch (e) {
      const err = kubeError(e, `create Job ${namespace}/${req.name}`);
      if (!isConflict(err)) throw err;
      // Someone (a previous attempt of this activity) created it first: adopt that Job.
      const existing = await call(`read Job ${namespace}/${req.name}`, () => this.k.batch.readNamespacedJob({ name: req.name, namespace }));
      return this.ref(existing, true);
    }
  }

  async status(jobId: string): Promise<JobStatus> {
    const { namespace, name } = parseJobId(jobId);
    const job = await callOrMissing(`read Job ${jobId}`, () => this.k.batch.readNamespacedJob({ name, namespace }));
    return this.statusOf(jobId, job);
  }

  /** Maps a Job (or its absence) to Tandem's job states; fetches pod details only for failures. */
  async statusOf(jobId: string, job: V1Job | undefined): Promise<JobStatus> {
    // Finished Jobs live for ttlSecondsAfterFinished, so a missing one was deleted: by us or by someone.
    if (!job) return { jobId, state: 'CANCELLED', reason: 'the Job no longer exists (deleted)' };
    if (job.metadata?.deletionTimestamp) return { jobId, state: 'CANCELLED', reason: 'the Job is being deleted' };
    const s = job.status ?? {};
    const progress = { step: s.succeeded ?? 0, total: job.spec?.completions ?? 1 };
    if (condition(job, 'Complete')) return { jobId, state: 'COMPLETED', exitCode: 0, progress };
    const failed = condition(job, 'Failed');
    if (failed) {
      const pod = await this.lastFailedPod(job);
      const term = pod?.status?.containerStatuses?.find((c) => c.name === 'main')?.state?.terminated;
      let state: JobState = 'FAILED';
      if (failed.reason === 'DeadlineExceeded') state = 'TIMEOUT';
      else if (term?.reason === 'OOMKilled') state = 'OUT_OF_MEMORY';
      // A pod evicted or preempted (DisruptionTarget) lost its node: an infrastructure failure.
      else if (pod?.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True')) state = 'PREEMPTED';
      const reason = [failed.reason, failed.message, term ? `container exited ${term.exitCode}${term.reason ? ` (${term.reason})` : ''}` : undefined].filter(Boolean).join(': ');
      return { jobId, state, exitCode: term?.exitCode, reason, tail: pod ? await this.tail(pod) : undefined, progress };
    }
    if (condition(job, 'Suspended')) return { jobId, state: 'PENDING', reason: 'suspended (waiting for admission, e.g. by Kueue)', progress };
    // A Job whose pods passed success/failure but whose pods still terminate is finishing.
    if (condition(job, 'SuccessCriteriaMet') || condition(job, 'FailureTarget')) return { jobId, state: 'COMPLETING', progress };
    if ((s.active ?? 0) > 0 && (s.ready ?? 0) > 0) return { jobId, state: 'RUNNING', progress };
    return { jobId, state: 'PENDING', progress };
  }

  /** The log of the Job's succeeded pod (its output), e.g. an Argo step's result. */
  async output(jobId: string): Promise<string | undefined> {
    const { namespace, name } = parseJobId(jobId);
    const pods = await call(`list pods of Job ${jobId}`, () => this.k.core.listNamespacedPod({ namespace, labelSelector: `job-name=${name}` }));
    const pod = pods.items.find((p) => p.status?.phase === 'Succeeded') ?? pods.items.at(-1);
    if (!pod) return undefined;
    const log = await call(`read log of ${pod.metadata!.name}`, () => this.k.core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace, container: 'main' }));
    return String(log);
  }

  private async lastFailedPod(job: V1Job): Promise<V1Pod | undefined> {
    const { namespace, name } = job.metadata!;
    try {
      const pods = await this.k.core.listNamespacedPod({ namespace: namespace!, labelSelector: `job-name=${name}` });
      const failed = pods.items.filter((p) => p.status?.phase === 'Failed');
      const finishedAt = (p: V1Pod) => new Date(p.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt ?? 0).getTime();
      return failed.sort((a, b) => finishedAt(b) - finishedAt(a))[0];
    } catch {
      return undefined; // details are a courtesy; the Job's own condition is the verdict
    }
  }

  private async tail(pod: V1Pod): Promise<string | undefined> {
    try {
      const log = await this.k.core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, container: 'main', tailLines: TAIL_LINES });
      return String(log).trimEnd() || undefined;
    } catch {
      return undefined; // the node (and its logs) may be gone
    }
  }

  /**
   * Watches the Job until it ends (or `signal` aborts); `onChange` sees every observed state. Used
   * instead of polling where the caller can hold a stream open.
   */
  async awaitFinished(jobId: string, opts: { signal?: AbortSignal; onChange?: (s: JobStatus) => void } = {}): Promise<JobStatus> {
    const { namespace, name } = parseJobId(jobId);
    let latest: V1Job | undefined;
    let seen: string | undefined;
    const done = await watchObject<V1Job, true>({
      clients: this.k,
      path: `/apis/batch/v1/namespaces/${namespace}/jobs`,
      name,
      signal: opts.signal,
      read: () => callOrMissing(`read Job ${jobId}`, () => this.k.batch.readNamespacedJob({ name, namespace })),
      until: (job) => {
        latest = job;
        const finished = !job || job.metadata?.deletionTimestamp || condition(job, 'Complete') || condition(job, 'Failed');
        if (opts.onChange && job && !finished) {
          const key = JSON.stringify([job.status?.active, job.status?.ready, job.status?.succeeded, job.status?.failed]);
          if (key !== seen) {
            seen = key;
            void this.statusOf(jobId, job).then(opts.onChange);
          }
        }
        return finished ? true : undefined;
      },
    });
    const st = await this.statusOf(jobId, done ? latest : undefined);
    opts.onChange?.(st);
    return st;
  }

  /** Idempotent: deleting a missing Job is fine. Background propagation removes its pods too. */
  async cancel(jobId: string): Promise<void> {
    const { namespace, name } = parseJobId(jobId);
    await callOrMissing(`delete Job ${jobId}`, () => this.k.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' }));
  }
}
