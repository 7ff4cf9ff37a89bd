// Pure builders for the objects Tandem creates: a batch/v1 Job per job stage attempt, an apps/v1
// Deployment + v1 Service per model deployment. No I/O, so they are easy to read and to test.
import { createHash } from 'node:crypto';
import type { V1Container, V1Deployment, V1Job, V1PodSpec, V1Service, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { Resources } from '../../contract/pipeline.js';
import { KubernetesOptionsError, type KubernetesOptions, type VllmOptions } from '../../contract/kubernetes.js';

export const LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  name: 'app.kubernetes.io/name',
  job: 'tandem.dev/job',
  deployment: 'tandem.dev/deployment',
  pipeline: 'tandem.dev/pipeline',
  model: 'tandem.dev/model',
  checkpoint: 'tandem.dev/checkpoint',
  tenant: 'tandem.dev/tenant',
  run: 'tandem.dev/run',
  kueueQueue: 'kueue.x-k8s.io/queue-name',
} as const;

export const ANNOTATIONS = {
  model: 'tandem.dev/model',
  checkpoint: 'tandem.dev/checkpoint',
  /** Hash of the pod template Tandem asked for: tells "already applied" from "changed" on a retry. */
  templateHash: 'tandem.dev/template-hash',
  revision: 'deployment.kubernetes.io/revision',
  /** Exact values (labels are cut to 63 characters): which pipeline, tenant and run a revision came from. */
  pipeline: 'tandem.dev/pipeline',
  tenant: 'tandem.dev/tenant',
  run: 'tandem.dev/run',
  /** On the Deployment: the run (workflow id) that created it, the only one whose teardown may delete it. */
  createdBy: 'tandem.dev/created-by-run',
  /** On the Deployment: the template that served before the latest apply (what its rollback restores). */
  previousTemplateHash: 'tandem.dev/previous-template-hash',
} as const;

/** Label values are ≤ 63 of [A-Za-z0-9._-], alphanumeric at both ends; the exact value goes in an annotation. */
export function labelValue(s: string): string {
  const v = s.replace(/[^A-Za-z0-9._-]+/g, '.').slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return v;
}

/** A checkpoint path is long and has slashes: label it by a short digest (the path is in an annotation). */
export const checkpointLabel = (path: string) => createHash('sha256').update(path).digest('hex').slice(0, 16);

export const hashOf = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

function podCommon(opts: KubernetesOptions): Pick<V1PodSpec, 'nodeSelector' | 'tolerations' | 'serviceAccountName' | 'priorityClassName' | 'volumes'> & { mounts: V1VolumeMount[] } {
  const volumes: V1Volume[] = [];
  const mounts: V1VolumeMount[] = [];
  for (const v of opts.volumes ?? []) {
    // hostPath is refused by the schema; only the known volume sources are copied.
    const { name, mountPath, readOnly, persistentVolumeClaim, emptyDir, configMap, secret } = v;
    volumes.push({ name, persistentVolumeClaim, emptyDir, configMap, secret } as V1Volume);
    mounts.push({ name, mountPath, readOnly });
  }
  return {
    nodeSelector: opts.nodeSelector,
    tolerations: opts.tolerations,
    serviceAccountName: opts.serviceAccountName,
    priorityClassName: opts.priorityClassName,
    volumes: volumes.length ? volumes : undefined,
    mounts,
  };
}

function securityContext(opts: KubernetesOptions): V1Container['securityContext'] {
  // privileged is refused by the schema; never set it, even to false, so policies see a plain pod.
  const { allowPrivilegeEscalation = false, runAsNonRoot, runAsUser, runAsGroup, readOnlyRootFilesystem } = opts.securityContext ?? {};
  return { allowPrivilegeEscalation, runAsNonRoot, runAsUser, runAsGroup, readOnlyRootFilesystem };
}

export interface JobManifestInput {
  name: string;
  namespace: string;
  image: string;
  command: string[];
  env: Record<string, string>;
  resources: Resources;
  walltimeMs: number;
  options: KubernetesOptions;
  /** Pod retries inside one Job; Tandem's own job-level retries create a new Job (new name). */
  backoffLimit: number;
  ttlSecondsAfterFinished: number;
  podAnnotations?: Record<string, string>;
}

export function jobManifest(i: JobManifestInput): V1Job {
  const r = i.resources;
  const labels = {
    ...i.options.labels,
    [LABELS.managedBy]: 'tandem',
    [LABELS.job]: i.name,
    ...(i.options.queueName ? { [LABELS.kueueQueue]: i.options.queueName } : {}),
  };
  const common = podCommon(i.options);
  const { mounts, ...pod } = common;
  const limits: Record<string, string> = { memory: `${r.memoryMB}Mi` };
  if (r.gpusPerNode > 0) limits['nvidia.com/gpu'] = String(r.gpusPerNode);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: i.name, namespace: i.namespace, labels },
    spec: {
      // One pod per Slurm-style "node"; Indexed gives each a stable JOB_COMPLETION_INDEX (its rank).
      parallelism: r.nodes,
      completions: r.nodes,
      completionMode: r.nodes > 1 ? 'Indexed' : 'NonIndexed',
      backoffLimit: i.backoffLimit,
      activeDeadlineSeconds: Math.max(1, Math.ceil(i.walltimeMs / 1000)),
      ttlSecondsAfterFinished: i.ttlSecondsAfterFinished,
      template: {
        metadata: { labels, annotations: i.podAnnotations || i.options.annotations ? { ...i.podAnnotations, ...i.options.annotations } : undefined },
        spec: {
          restartPolicy: 'Never',
          ...pod,
          containers: [
            {
              name: 'main',
              image: i.image,
              imagePullPolicy: i.options.imagePullPolicy,
              command: i.command,
              env: Object.entries(i.env).map(([name, value]) => ({ name, value })),
              resources: { requests: { cpu: String(r.tasksPerNode * r.cpusPerTask), ...limits }, limits },
              securityContext: securityContext(i.options),
              volumeMounts: mounts.length ? mounts : undefined,
            },
          ],
        },
      },
    },
  };
}

export interface ServingManifestInput {
  name: string;
  namespace: string;
  pipeline: string;
  /** The tenant and run (workflow id) of the revision: labels and annotations say where it came from. */
  tenant?: string;
  run?: string;
  /** Served model id (what /v1/models lists). */
  model: string;
  checkpoint: string;
  image: string;
  options: KubernetesOptions;
  env?: Record<string, string>;
  serviceType: 'ClusterIP' | 'LoadBalancer';
  podAnnotations?: Record<string, string>;
  /** Where the options came from, for errors (`stages.deploy.kubernetes`). */
  field?: string;
}

const VLLM_DEFAULTS: VllmOptions = { tensorParallelSize: 1, gpuMemoryUtilization: 0.9, port: 8000, replicas: 1, progressDeadlineSeconds: 600, revisionHistoryLimit: 5 };

/** What vLLM is told to load, and the read-only volume it is on (if it comes from one). */
export interface ServableModel {
  /** --model: a Hugging Face id or a path inside the pod. */
  model: string;
  volume?: V1Volume;
  mount?: V1VolumeMount;
}

/**
 * The model location a pod can read: `vllm.model` when given (validated by the schema: a Hugging Face
 * id, or a path under one of the pod's volumes), else the checkpoint mapped from the worker's shared
 * filesystem (`modelVolume.workerPath`) to the claim mounted read-only at `modelVolume.mountPath`.
 * Refuses a worker-local checkpoint: no pod could load it.
 */
export function servableModel(options: KubernetesOptions, checkpoint: string, field = 'kubernetes'): ServableModel {
  const mv = options.modelVolume;
  const volumeParts = () =>
    mv ? { volume: { name: 'model', persistentVolumeClaim: { claimName: mv.claimName, readOnly: true } } as V1Volume, mount: { name: 'model', mountPath: mv.mountPath, readOnly: true, ...(mv.subPath ? { subPath: mv.subPath } : {}) } as V1VolumeMount } : {};
  if (options.vllm?.model) return { model: options.vllm.model, ...volumeParts() };
  if (!mv) {
    throw new KubernetesOptionsError([{ path: `${field}.modelVolume`, message: `is required: the checkpoint ${checkpoint} is on the worker's disk, which no vLLM pod can read; give the PersistentVolumeClaim of the shared filesystem it is on ({claimName, workerPath, subPath?}) or name the model in ${field}.vllm.model` }]);
  }
  const root = mv.workerPath.length > 1 ? mv.workerPath.replace(/\/+$/, '') : '';
  if (!checkpoint.startsWith(`${root}/`) || checkpoint.split('/').some((seg) => seg === '..')) {
    throw new KubernetesOptionsError([{ path: `${field}.modelVolume.workerPath`, message: `the checkpoint ${checkpoint} is not under ${mv.workerPath}: the claim ${mv.claimName} does not hold it, so no pod could read it; give the directory of the shared filesystem it is on` }]);
  }
  return { model: `${mv.mountPath}${checkpoint.slice(root.length)}`, ...volumeParts() };
}

/** vLLM's OpenAI-compatible server flags (vllm serve / vllm.entrypoints.openai.api_server). */
export function vllmArgs(i: ServingManifestInput, model = servableModel(i.options, i.checkpoint, i.field).model): string[] {
  const v = { ...VLLM_DEFAULTS, ...i.options.vllm };
  const args = ['--model', model, '--served-model-name', i.model, '--host', '0.0.0.0', '--port', String(v.port)];
  args.push('--tensor-parallel-size', String(v.tensorParallelSize), '--gpu-memory-utilization', String(v.gpuMemoryUtilization));
  if (v.maxNumSeqs !== undefined) args.push('--max-num-seqs', String(v.maxNumSeqs));
  if (v.maxModelLen !== undefined) args.push('--max-model-len', String(v.maxModelLen));
  if (v.downloadDir !== undefined) args.push('--download-dir', v.downloadDir);
  return args;
}

/**
 * The Deployment and Service of one served model endpoint, in the shape of vLLM's production stack
 * (one Deployment per model, a Service in front, probes on /health): the selector is the endpoint's
 * name alone, so every run's pod template is a new revision of the same Deployment; the pod template
 * names the pipeline, tenant, run and checkpoint it came from, so each ReplicaSet does too.
 */
export function servingManifests(i: ServingManifestInput): { deployment: V1Deployment; service: V1Service; templateHash: string } {
  const v = { ...VLLM_DEFAULTS, ...i.options.vllm };
  const served = servableModel(i.options, i.checkpoint, i.field);
  const selector = { [LABELS.deployment]: i.name };
  const owner = { [LABELS.pipeline]: labelValue(i.pipeline), ...(i.tenant ? { [LABELS.tenant]: labelValue(i.tenant) } : {}) };
  const labels = { ...i.options.labels, [LABELS.managedBy]: 'tandem', [LABELS.name]: 'vllm', ...owner, ...selector };
  const podLabels = { ...labels, [LABELS.model]: labelValue(i.model), [LABELS.checkpoint]: checkpointLabel(i.checkpoint), ...(i.run ? { [LABELS.run]: labelValue(i.run) } : {}) };
  const origin = { [ANNOTATIONS.model]: i.model, [ANNOTATIONS.checkpoint]: i.checkpoint, ...(i.tenant ? { [ANNOTATIONS.pipeline]: i.pipeline, [ANNOTATIONS.tenant]: i.tenant } : {}), ...(i.run ? { [ANNOTATIONS.run]: i.run } : {}) };
  const { mounts, ...pod } = podCommon(i.options);
  const volumes = [...(pod.volumes ?? [])];
  if (served.volume) {
    volumes.push(served.volume);
    mounts.push(served.mount!);
  }
  // Weights are downloaded once per pod; give --download-dir a volume unless the user mounted one there.
  if (v.downloadDir && !mounts.some((m) => v.downloadDir === m.mountPath || v.downloadDir!.startsWith(`${m.mountPath}/`))) {
    volumes.push({ name: 'model-cache', emptyDir: {} });
    mounts.push({ name: 'model-cache', mountPath: v.downloadDir });
  }
  const gpus = String(v.tensorParallelSize); // one GPU per tensor-parallel rank
  const probe = { httpGet: { path: '/health', port: 'http' } };
  const template = {
    metadata: { labels: podLabels, annotations: { ...i.podAnnotations, ...i.options.annotations, ...origin } as Record<string, string> },
    spec: {
      ...pod,
      volumes: volumes.length ? volumes : undefined,
      containers: [
        {
          name: 'vllm',
          image: i.image,
          imagePullPolicy: i.options.imagePullPolicy,
          args: vllmArgs({ ...i, options: { ...i.options, vllm: v } }, served.model),
          env: i.env ? Object.entries(i.env).map(([name, value]) => ({ name, value })) : undefined,
          ports: [{ name: 'http', containerPort: v.port, protocol: 'TCP' }],
          resources: { requests: { 'nvidia.com/gpu': gpus }, limits: { 'nvidia.com/gpu': gpus } },
          // Loading weights takes minutes: the startup probe allows 10 min before readiness counts.
          startupProbe: { ...probe, periodSeconds: 5, failureThreshold: 120, timeoutSeconds: 3 },
          readinessProbe: { ...probe, periodSeconds: 5, failureThreshold: 3, timeoutSeconds: 3 },
          securityContext: securityContext(i.options),
          volumeMounts: mounts.length ? mounts : undefined,
        },
      ],
    },
  };
  const templateHash = hashOf(template);
  template.metadata.annotations[ANNOTATIONS.templateHash] = templateHash;
  const deployment: V1Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: i.name, namespace: i.namespace, labels, annotations: { ...origin, [ANNOTATIONS.templateHash]: templateHash, ...(i.run ? { [ANNOTATIONS.createdBy]: i.run } : {}) } },
    spec: {
      replicas: v.replicas,
      selector: { matchLabels: selector },
      revisionHistoryLimit: v.revisionHistoryLimit,
      progressDeadlineSeconds: v.progressDeadlineSeconds,
      // The previous revision keeps serving until the new pods are ready.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template,
    },
  };
  const service: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: i.name, namespace: i.namespace, labels, annotations: i.tenant ? { [ANNOTATIONS.pipeline]: i.pipeline, [ANNOTATIONS.tenant]: i.tenant } : undefined },
    spec: { type: i.serviceType, selector, ports: [{ name: 'http', port: v.port, targetPort: 'http', protocol: 'TCP' }] },
  };
  return { deployment, service, templateHash };
}
