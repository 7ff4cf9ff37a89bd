// The Kubernetes options a stage may carry (stages.<stage>.kubernetes). Sandbox-safe (zod only): the
// SDK/CLI boundary and the activities both validate with it, so a bad option is reported naming the
// field before any object is created on the cluster.
import { z } from 'zod';
import { InputError, type InputIssue } from './input-error.js';

// Kubernetes' own grammars (apimachinery validation), so the API server never has to answer 422.
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
// registry[:port]/path[:tag][@digest]; no whitespace or shell metacharacters.
const IMAGE = /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$/;

const dnsLabel = z.string().max(63).regex(DNS_LABEL, 'must be a DNS label (lower-case letters, digits and "-")');
const dnsSubdomain = z.string().max(253).regex(DNS_SUBDOMAIN, 'must be a DNS subdomain (lower-case letters, digits, "-" and ".")');
const labelMap = z.record(z.string().regex(LABEL_NAME, 'must be a label key such as "nvidia.com/gpu.product"'), z.string().regex(LABEL_VALUE, 'must be a label value (≤ 63 letters, digits, "-", "_", ".")'));

export const TolerationSchema = z
  .object({
    key: z.string().regex(LABEL_NAME, 'must be a taint key').optional(),
    operator: z.enum(['Exists', 'Equal']).default('Equal'),
    value: z.string().regex(LABEL_VALUE, 'must be a taint value').optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().min(0).optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.operator === 'Exists' && t.value !== undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: 'must be empty when operator is "Exists"' });
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') ctx.addIssue({ code: 'custom', path: ['tolerationSeconds'], message: 'applies only to effect "NoExecute"' });
  });

// Fields Tandem refuses are still part of the schema, so the error says *why* instead of "unknown field".
const refused = (why: string) => z.unknown().optional().refine((v) => v === undefined || v === false || v === null, { message: why });

export const SecurityContextSchema = z
  .object({
    privileged: refused('privileged pods are not allowed: they get full access to the node; request devices (e.g. nvidia.com/gpu) through resources instead'),
    allowPrivilegeEscalation: z
      .boolean()
      .optional()
      .refine((v) => v !== true, { message: 'allowPrivilegeEscalation: true is not allowed: a process could gain more privileges than the pod was given (setuid binaries); Tandem sets it to false' }),
    runAsNonRoot: z.boolean().optional(),
    runAsUser: z.number().int().min(1, 'must not be 0: pods do not run as root; give the image\'s non-root user id (e.g. 1000)').optional(),
    runAsGroup: z.number().int().min(0).optional(),
    readOnlyRootFilesystem: z.boolean().optional(),
  })
  .strict();

// Mounting over these would replace the container's own system files (a Secret at /etc replaces
// passwd, hosts, resolv.conf) or its view of the kernel and devices, or shadow the service-account token.
const SYSTEM_MOUNTS = new Set(['/', '/bin', '/boot', '/etc', '/lib', '/lib32', '/lib64', '/libx32', '/root', '/run', '/sbin', '/usr', '/usr/bin', '/usr/lib', '/usr/local', '/usr/local/bin', '/usr/sbin', '/var', '/var/lib', '/var/run']);
const SYSTEM_MOUNT_TREES = ['/proc', '/sys', '/dev', '/var/run/secrets', '/run/secrets'];
const mountPath = z
  .string()
  .regex(/^\/[^\0]*$/, 'must be an absolute path')
  .superRefine((p, ctx) => {
    if (!p.startsWith('/')) return;
    if (p.split('/').some((seg) => seg === '..' || seg === '.')) ctx.addIssue({ code: 'custom', message: 'must not contain "." or ".." segments: give the normalised absolute path' });
    else if (/\/\/|.\/$/.test(p)) ctx.addIssue({ code: 'custom', message: 'must be a normalised absolute path (no "//", no trailing "/")' });
    else if (SYSTEM_MOUNTS.has(p) || SYSTEM_MOUNT_TREES.some((t) => p === t || p.startsWith(`${t}/`))) {
      ctx.addIssue({ code: 'custom', message: `must not be ${p}: a volume there would replace the container's system files; mount it at a directory of its own (e.g. /data, /models)` });
    }
  });

export const VolumeSchema = z
  .object({
    name: dnsLabel,
    mountPath,
    readOnly: z.boolean().optional(),
    persistentVolumeClaim: z.object({ claimName: dnsSubdomain, readOnly: z.boolean().optional() }).strict().optional(),
    emptyDir: z.object({ medium: z.enum(['', 'Memory']).optional(), sizeLimit: z.string().optional() }).strict().optional(),
    configMap: z.object({ name: dnsSubdomain }).strict().optional(),
    secret: z.object({ secretName: dnsSubdomain }).strict().optional(),
    hostPath: refused('hostPath volumes are not allowed: they expose the node\'s filesystem to the pod; use a persistentVolumeClaim instead'),
  })
  .strict()
  .superRefine((v, ctx) => {
    const sources = ['persistentVolumeClaim', 'emptyDir', 'configMap', 'secret'].filter((k) => v[k as keyof typeof v] !== undefined);
    if (v.hostPath === undefined && sources.length !== 1) ctx.addIssue({ code: 'custom', path: [], message: `must have exactly one source (persistentVolumeClaim, emptyDir, configMap or secret), has ${sources.length}` });
  });

// A Hugging Face repository id ("org/name" or "name"), what vLLM downloads when --model is not a path.
const HF_MODEL_ID = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\/[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)?$/;
const podPath = z.string().max(1024).regex(/^\/[A-Za-z0-9._/-]*$/, 'must be an absolute path of letters, digits, ".", "_", "-" and "/"').refine((p) => !p.split('/').some((s) => s === '..' || s === '.'), { message: 'must not contain "." or ".." segments' });

export const VllmOptionsSchema = z
  .object({
    /**
     * What vLLM loads (--model) instead of the stage's checkpoint: a Hugging Face model id
     * ("org/name", downloaded into --download-dir) or an absolute path inside the pod, which must lie
     * under one of the pod's volumes (`volumes[].mountPath` or `modelVolume.mountPath`).
     */
    model: z.union([z.string().max(256).regex(HF_MODEL_ID, 'must be a Hugging Face model id such as "Qwen/Qwen2.5-0.5B-Instruct", or an absolute path inside the pod'), podPath]).optional(),
    tensorParallelSize: z.number().int().min(1).max(64).default(1),
    gpuMemoryUtilization: z.number().gt(0, 'must be greater than 0').max(1).default(0.9),
    maxNumSeqs: z.number().int().min(1).max(65_536).optional(),
    maxModelLen: z.number().int().min(16).optional(),
    /** --download-dir: where weights are cached; put it on a volume to survive pod restarts. */
    downloadDir: z.string().regex(/^\/[A-Za-z0-9._/-]*$/, 'must be an absolute path').optional(),
    port: z.number().int().min(1).max(65_535).default(8000),
    replicas: z.number().int().min(1).max(64).default(1),
    /** Seconds a rollout may make no progress before it counts as failed (Deployment progressDeadlineSeconds). */
    progressDeadlineSeconds: z.number().int().min(5).max(86_400).default(600),
    /** Old revisions (ReplicaSets) kept for rollback: `tandem deployments rollback --to-revision` reaches this far back. */
    revisionHistoryLimit: z.number().int().min(1, 'must be at least 1: a failed rollout rolls back to the previous revision').max(100).default(5),
  })
  .strict();

/**
 * Where the pod reads the checkpoint: a PersistentVolumeClaim holding the same shared filesystem the
 * worker wrote it to (KServe's `pvc://<claim>/<path>`), mounted read-only. A checkpoint at
 * `<workerPath>/x/y` is served from `<mountPath>/x/y`.
 */
export const ModelVolumeSchema = z
  .object({
    claimName: dnsSubdomain,
    /** The directory inside the claim that `workerPath` is (volumeMounts[].subPath); the claim's root when omitted. */
    subPath: z.string().max(1024).regex(/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/, 'must be a relative path inside the claim (no leading "/")').refine((p) => !p.split('/').some((s) => s === '..' || s === '.'), { message: 'must not contain "." or ".." segments' }).optional(),
    /** The same directory as the worker sees it (its shared-filesystem mount): checkpoints must lie under it. */
    workerPath: podPath,
    /** Where the pod mounts it (read-only); default /mnt/models, as KServe does. */
    mountPath: mountPath.default('/mnt/models'),
  })
  .strict();
export type ModelVolume = z.output<typeof ModelVolumeSchema>;

/**
 * Which namespaces, service accounts and priority classes stages may name. A list given by a site's or
 * tenant's policy is the complete set allowed there (it may name ones the defaults refuse); without one,
 * the defaults refuse Kubernetes' own namespaces (kube-*) and controllers' (*-system), administrator
 * service accounts, and the system-* priority classes, which would let a stage's pod act with the
 * cluster's privileges or preempt the cluster's own components.
 */
export interface KubernetesPolicy {
  namespaces?: readonly string[];
  serviceAccounts?: readonly string[];
  priorityClasses?: readonly string[];
}

const defaultRefusals: Record<keyof KubernetesPolicy, (v: string) => string | undefined> = {
  namespaces: (v) =>
    v.startsWith('kube-') ? `namespace "${v}" belongs to Kubernetes itself (kube-system, kube-public, kube-node-lease …); run stages in a namespace of their own`
    : v.endsWith('-system') ? `namespace "${v}" belongs to a cluster component; run stages in a namespace of their own (a site policy may allow it)`
    : undefined,
  serviceAccounts: (v) => (/(^|[-.])(cluster-admin|admin|administrator|root|superuser)([-.]|$)/.test(v) ? `service account "${v}" looks like an administrator's; stages run with an account of least privilege (a site policy may allow it)` : undefined),
  priorityClasses: (v) => (v.startsWith('system-') ? `priority class "${v}" is reserved for the cluster's own critical components (system-cluster-critical, system-node-critical)` : undefined),
};

function policyProblem(kind: keyof KubernetesPolicy, value: string, policy: KubernetesPolicy): string | undefined {
  const allowed = policy[kind];
  if (allowed) return allowed.includes(value) ? undefined : `"${value}" is not allowed here; allowed: ${allowed.map((a) => `"${a}"`).join(', ') || 'none'}`;
  return defaultRefusals[kind](value);
}

// Pod annotations that switch off the kernel's confinement (the pre-1.30 spellings of seccompProfile
// and appArmorProfile, which the API server still honours).
const CONFINEMENT_ANNOTATION = /^(seccomp\.security\.alpha\.kubernetes\.io\/pod|container\.seccomp\.security\.alpha\.kubernetes\.io\/.+|container\.apparmor\.security\.beta\.kubernetes\.io\/.+)$/;

const KubernetesOptionsShape = z
  .object({
    namespace: dnsLabel.optional(),
    image: z.string().max(512).regex(IMAGE, 'must be a container image reference such as "registry.example/org/image:tag"').optional(),
    imagePullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).optional(),
    serviceAccountName: dnsSubdomain.optional(),
    priorityClassName: dnsSubdomain.optional(),
    nodeSelector: labelMap.optional(),
    tolerations: z.array(TolerationSchema).max(32).optional(),
    /** Kueue LocalQueue: sets the kueue.x-k8s.io/queue-name label, and Kueue admits the Job. */
    queueName: dnsSubdomain.optional(),
    /** Extra labels on the Job/Deployment and their pods. */
    labels: labelMap.optional(),
    /** Extra pod annotations (e.g. metrics scraping, sidecar opt-outs). */
    annotations: z.record(z.string().max(317).regex(LABEL_NAME, 'must be an annotation key such as "prometheus.io/scrape"'), z.string().max(65_536)).optional(),
    securityContext: SecurityContextSchema.optional(),
    volumes: z.array(VolumeSchema).max(32).optional(),
    hostNetwork: refused('hostNetwork is not allowed: the pod would share the node\'s network namespace'),
    hostPID: refused('hostPID is not allowed: the pod would see every process on the node'),
    vllm: VllmOptionsSchema.optional(),
    /** The shared volume a serving pod reads the stage's checkpoint from (deploy stage). */
    modelVolume: ModelVolumeSchema.optional(),
  })
  .strict();

/** The options schema under a policy; `KubernetesOptionsSchema` is the one with the safe defaults. */
export function kubernetesOptionsSchema(policy: KubernetesPolicy = {}) {
  return KubernetesOptionsShape.superRefine((o, ctx) => {
    const names = new Set<string>();
    o.volumes?.forEach((v, i) => {
      if (names.has(v.name)) ctx.addIssue({ code: 'custom', path: ['volumes', i, 'name'], message: `duplicate volume name "${v.name}"` });
      names.add(v.name);
    });
    const checks: [keyof KubernetesPolicy, keyof typeof o][] = [['namespaces', 'namespace'], ['serviceAccounts', 'serviceAccountName'], ['priorityClasses', 'priorityClassName']];
    for (const [kind, field] of checks) {
      const value = o[field];
      const why = typeof value === 'string' ? policyProblem(kind, value, policy) : undefined;
      if (why) ctx.addIssue({ code: 'custom', path: [field], message: why });
    }
    if (o.modelVolume && names.has('model')) ctx.addIssue({ code: 'custom', path: ['volumes'], message: 'a volume named "model" clashes with modelVolume (which Tandem mounts under that name); rename it' });
    const model = o.vllm?.model;
    if (model?.startsWith('/')) {
      const mounts = [...(o.volumes ?? []).map((v) => v.mountPath), ...(o.modelVolume ? [o.modelVolume.mountPath] : [])];
      if (!mounts.some((m) => model === m || model.startsWith(`${m}/`))) ctx.addIssue({ code: 'custom', path: ['vllm', 'model'], message: `${model} is not under any volume of the pod${mounts.length ? ` (${mounts.join(', ')})` : ''}: no pod could read it; mount a volume there (volumes or modelVolume) or give a Hugging Face model id` });
    }
    for (const [key, value] of Object.entries(o.annotations ?? {})) {
      if (CONFINEMENT_ANNOTATION.test(key) && /unconfined/i.test(value)) ctx.addIssue({ code: 'custom', path: ['annotations', key], message: 'must not be "unconfined": pods keep the runtime\'s default seccomp and AppArmor confinement' });
    }
  });
}

export const KubernetesOptionsSchema = kubernetesOptionsSchema();

export type KubernetesOptionsInput = z.input<typeof KubernetesOptionsSchema>;
export type KubernetesOptions = z.output<typeof KubernetesOptionsSchema>;
export type VllmOptions = z.output<typeof VllmOptionsSchema>;

export type KubernetesOptionIssue = InputIssue;

export class KubernetesOptionsError extends InputError {
  constructor(issues: KubernetesOptionIssue[]) {
    super('Kubernetes options', issues);
    this.name = 'KubernetesOptionsError';
  }
}

function formatPath(prefix: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)), prefix);
}

/**
 * Validates and defaults; errors name the full field path, e.g. `stages.deploy.kubernetes.volumes[0].hostPath`.
 * `policy`: the namespaces, service accounts and priority classes allowed where the stage runs.
 */
export function parseKubernetesOptions(input: unknown, prefix = 'kubernetes', policy?: KubernetesPolicy): KubernetesOptions {
  const r = (policy ? kubernetesOptionsSchema(policy) : KubernetesOptionsSchema).safeParse(input ?? {});
  if (r.success) return r.data;
  throw new KubernetesOptionsError(
    r.error.issues.map((issue) =>
      issue.code === 'unrecognized_keys'
        ? { path: formatPath(prefix, [...issue.path, issue.keys[0]!]), message: `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}` }
        : { path: formatPath(prefix, issue.path), message: issue.message },
    ),
  );
}
