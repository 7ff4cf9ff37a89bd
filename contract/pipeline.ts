// The PipelineSpec: the one description of a hybrid pipeline shared by the SDK, CLI, workflows and
// activities. Sandbox-safe (zod only) because workflows import it.
import { z } from 'zod';
import { parseDuration } from './duration.js';
import { KubernetesOptionsSchema } from './kubernetes.js';

export const RUNTIMES = ['auto', 'local', 'slurm', 'kubernetes'] as const;
export const QOS_CLASSES = ['gold', 'silver', 'bronze'] as const;
export const STAGES = ['preprocess', 'train', 'checkpoint', 'deploy'] as const;
export type StageName = (typeof STAGES)[number];

/** How long after spec.deadline the server times a run out: the run itself stops at the deadline
 *  (its deadline timer cancels the stage and runs the saga), and this margin is for that saga to
 *  cancel the job and release its holds. The server's timeout is only a backstop for a run whose
 *  workers are gone. */
export const DEADLINE_COMPENSATION_MARGIN_MS = 10 * 60_000;

const dnsLabel = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be lower-case letters, digits and "-" (a DNS label)');

const duration = z
  .union([z.string(), z.number()])
  .refine((v) => parseDuration(v) !== undefined, { message: 'must be a duration such as "90s", "5m", "1h30m" or a number of seconds' });

// Slurm and Kubernetes names both reject shell metacharacters; refusing them here keeps every backend safe.
const safeName = z.string().regex(/^[A-Za-z0-9._:+-]+$/, 'may contain only letters, digits and . _ : + -');

export const RetrySchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(50),
    initialInterval: duration,
    backoffCoefficient: z.number().min(1).max(10),
    maximumInterval: duration,
  })
  .partial()
  .strict();

export const ResourcesSchema = z
  .object({
    nodes: z.number().int().min(1).max(10_000).default(1),
    tasksPerNode: z.number().int().min(1).max(1024).default(1),
    cpusPerTask: z.number().int().min(1).max(1024).default(1),
    gpusPerNode: z.number().int().min(0).max(64).default(0),
    memoryMB: z.number().int().min(16).max(16 * 1024 * 1024).default(1024),
    walltime: duration.default('1h'),
    partition: safeName.optional(),
    account: safeName.optional(),
    constraint: z.string().regex(/^[A-Za-z0-9_&|()[\]*:,-]+$/, 'must be a Slurm constraint expression').optional(),
    reservation: safeName.optional(),
  })
  .strict();

// What a job receives from its spec goes to exec(2) as C strings: a NUL byte cannot be passed at all
// (spawn refuses it after the job's directory exists, and the run waited for a job that never
// started), and other control characters are a mistake or an attack. Tab and newline stay allowed in
// arguments and values (`sh -c` scripts, PEM blocks); a program name has none.
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const TEXT = /^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$/;
const TEXT_MESSAGE = 'must not contain a NUL byte or control characters other than tab and newline';
// eslint-disable-next-line no-control-regex -- as above
const PROGRAM = /^[^\x00-\x1f\x7f]*$/;
const command = z
  .array(z.string().min(1).regex(TEXT, TEXT_MESSAGE))
  .min(1, 'must name a program')
  .superRefine((c, ctx) => {
    // (A control character the element check refused already is not reported twice.)
    if (c[0] !== undefined && TEXT.test(c[0]) && !PROGRAM.test(c[0])) ctx.addIssue({ code: 'custom', path: [0], message: 'a program name must not contain control characters' });
  })
  .optional();

/** At most this many `env` entries per stage: enough for any real job, and far below what would make
 *  validation, the workflow history or a Slurm submission (which carries them all) slow. */
export const MAX_ENV_ENTRIES = 4096;
/**
 * Variables a spec's `env` may not set: they change how the programs Tandem itself runs around the
 * job behave (the job supervisor shell, the lease wrapper, the built-in Node programs), not just the
 * user's program: the dynamic loader (LD_*, and DYLD_* on macOS), NODE_OPTIONS, and the start-up files
 * of a non-interactive sh/bash (ENV, BASH_ENV). PYTHONPATH and PATH stay allowed: they only change
 * what the user's own program finds. The worker's environment never reaches a job at all
 * (backends/job-env.ts).
 */
export const DENIED_ENV = ['NODE_OPTIONS', 'BASH_ENV', 'ENV'] as const;
export const DENIED_ENV_PREFIXES = ['LD_', 'DYLD_'] as const;
export function deniedEnvName(name: string): boolean {
  return (DENIED_ENV as readonly string[]).includes(name) || DENIED_ENV_PREFIXES.some((p) => name.startsWith(p));
}
const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
  .refine((k) => !deniedEnvName(k), { message: `may not be set by a pipeline spec (${DENIED_ENV_PREFIXES.map((p) => `${p}*`).join(', ')}, ${DENIED_ENV.join(', ')} change the programs Tandem runs around the job)` });
const env = z
  .record(envName, z.string().regex(TEXT, TEXT_MESSAGE))
  .refine((e) => Object.keys(e).length <= MAX_ENV_ENTRIES, { message: `must have at most ${MAX_ENV_ENTRIES} entries` })
  .optional();

const jobStage = {
  runtime: z.enum(RUNTIMES).default('auto'),
  resources: ResourcesSchema.prefault({}),
  /** Program and arguments; defaults to Tandem's built-in step for the stage. */
  command,
  env,
  retry: RetrySchema.optional(),
  /** Used when the stage runs on Kubernetes: image, scheduling, Kueue queue (privileged pods refused). */
  kubernetes: KubernetesOptionsSchema.optional(),
};

export const PreprocessSchema = z
  .object({
    ...jobStage,
    samples: z.number().int().min(10).max(10_000_000).default(2000),
    features: z.number().int().min(1).max(4096).default(8),
    seed: z.number().int().default(42),
  })
  .strict();

export const TrainSchema = z
  .object({
    ...jobStage,
    steps: z.number().int().min(1).max(10_000_000).default(200),
    checkpointEvery: z.number().int().min(1).default(20),
    learningRate: z.number().positive().max(100).default(0.5),
    /** Slows the built-in trainer so that progress is visible (and crashes testable); 0 in production. */
    stepDelayMs: z.number().int().min(0).max(60_000).default(0),
  })
  .strict();

export const CheckpointSchema = z
  .object({
    verify: z.boolean().default(true),
    /** Retention: keep the newest K checkpoints of the run. */
    keep: z.number().int().min(1).max(1000).default(3),
    /** … and, beyond those, every checkpoint whose step is a multiple of N (long-term restore points). */
    keepEvery: z.number().int().min(1).optional(),
  })
  .strict();

export const DeploySchema = z
  .object({
    runtime: z.enum(RUNTIMES).default('auto'),
    resources: ResourcesSchema.prefault({}),
    command,
    env,
    retry: RetrySchema.optional(),
    /** Used when the model is served on Kubernetes: vLLM options, image, scheduling. */
    kubernetes: KubernetesOptionsSchema.optional(),
    /**
     * The served model endpoint: the Kubernetes Deployment and Service that every run of this pipeline
     * rolls a new revision out to (default: the pipeline name; "m-<name>" when that starts with a digit).
     */
    name: z
      .string()
      .max(63, 'must be at most 63 characters (a DNS-1035 label: it names the Deployment and Service)')
      .regex(/^[a-z]([a-z0-9-]*[a-z0-9])?$/, 'must be a DNS-1035 label: lower-case letters, digits and "-", starting with a letter and ending with a letter or digit (it names the Deployment and Service)')
      .optional(),
    /** Model id served at /v1/models; defaults to the pipeline name. */
    model: z.string().regex(/^[A-Za-z0-9._/:-]+$/, 'must be a model id such as "org/model-name"').max(128).optional(),
    smokePrompt: z.string().min(1).max(2000).default('Tandem says hello'),
    readinessTimeout: duration.default('120s'),
  })
  .strict();

export const PipelineSpecSchema = z
  .object({
    apiVersion: z.literal('tandem.dev/v1alpha1').default('tandem.dev/v1alpha1'),
    kind: z.literal('Pipeline').default('Pipeline'),
    name: dnsLabel,
    tenant: dnsLabel.default('default'),
    qos: z.enum(QOS_CLASSES).default('silver'),
    priority: z.number().int().min(0).max(1000).default(100),
    deadline: z.iso.datetime({ offset: true }).optional(),
    /** Defaults for every stage's job retries; a stage's own `retry` overrides field by field. */
    retry: RetrySchema.optional(),
    stages: z
      .object({
        preprocess: PreprocessSchema.prefault({}),
        train: TrainSchema.prefault({}),
        checkpoint: CheckpointSchema.prefault({}),
        deploy: DeploySchema.prefault({}),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((spec, ctx) => {
    const t = spec.stages.train;
    if (t.checkpointEvery > t.steps) {
      ctx.addIssue({ code: 'custom', path: ['stages', 'train', 'checkpointEvery'], message: `must not exceed stages.train.steps (${t.steps})` });
    }
    const d = spec.stages.deploy;
    // The checkpoint is written to the worker's disk: a pod reads it only through a shared volume.
    if (d.runtime === 'kubernetes' && !d.kubernetes?.modelVolume && !d.kubernetes?.vllm?.model) {
      ctx.addIssue({ code: 'custom', path: ['stages', 'deploy', 'kubernetes', 'modelVolume'], message: "is required on Kubernetes unless stages.deploy.kubernetes.vllm.model names the model: the checkpoint is on the worker's disk, which no vLLM pod can read; give the PersistentVolumeClaim of the shared filesystem it is on ({claimName, workerPath, subPath?})" });
    }
  });

/** What users write (defaults optional). */
export type PipelineSpecInput = z.input<typeof PipelineSpecSchema>;
/** What the workflow receives (defaults filled in). */
export type PipelineSpec = z.output<typeof PipelineSpecSchema>;
export type Resources = z.output<typeof ResourcesSchema>;
export type RetryOverride = z.output<typeof RetrySchema>;
export type Runtime = (typeof RUNTIMES)[number];
