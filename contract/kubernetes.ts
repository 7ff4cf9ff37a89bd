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
    allowPrivilegeEscalation: z.boolean().optional(),
    runAsNonRoot: z.boolean().optional(),
    runAsUser: z.number().int().min(0).optional(),
    runAsGroup: z.number().int().min(0).optional(),
    readOnlyRootFilesystem: z.boolean().optional(),
  })
  .strict();

export const VolumeSchema = z
  .object({
    name: dnsLabel,
    mountPath: z.string().regex(/^\/[^\0]*$/, 'must be an absolute path'),
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

export const VllmOptionsSchema = z
  .object({
    /** What vLLM loads (--model): a Hugging Face id or a path inside the pod; defaults to the stage's checkpoint. */
    model: z.string().regex(/^[A-Za-z0-9._/:-]+$/, 'must be a model id or path').max(512).optional(),
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
  })
  .strict();

export const KubernetesOptionsSchema = z
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
  })
  .strict()
  .superRefine((o, ctx) => {
    const names = new Set<string>();
    o.volumes?.forEach((v, i) => {
      if (names.has(v.name)) ctx.addIssue({ code: 'custom', path: ['volumes', i, 'name'], message: `duplicate volume name "${v.name}"` });
      names.add(v.name);
    });
  });

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

/** Validates and defaults; errors name the full field path, e.g. `stages.deploy.kubernetes.volumes[0].hostPath`. */
export function parseKubernetesOptions(input: unknown, prefix = 'kubernetes'): KubernetesOptions {
  const r = KubernetesOptionsSchema.safeParse(input ?? {});
  if (r.success) return r.data;
  throw new KubernetesOptionsError(
    r.error.issues.map((issue) =>
      issue.code === 'unrecognized_keys'
        ? { path: formatPath(prefix, [...issue.path, issue.keys[0]!]), message: `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}` }
        : { path: formatPath(prefix, issue.path), message: issue.message },
    ),
  );
}
