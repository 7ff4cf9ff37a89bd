// The one configuration boundary: the only module that reads TANDEM_* and TEMPORAL_* variables (and the
// standard KUBECONFIG / KUBERNETES_SERVICE_HOST the worker's cluster access follows). Everything else
// takes plain values through its options. Each loader validates its variables with zod, reads and
// checks the files they name, and throws one ConfigError that lists every problem.
//
// Not configuration in this sense: the job contract (TANDEM_DATA_DIR, TANDEM_CHECKPOINT_DIR, … that
// Tandem sets for the programs it runs; programs/env.ts reads them on the job side) and the environment
// workers pass on to child processes.
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { InputError } from '../contract/input-error.js';
import { parseSitesFile, type SitesFile } from '../contract/sites.js';
import { parseQuotasFile, type QuotasFile } from '../contract/quotas.js';
import { SUPPORTED_SLURMRESTD_VERSIONS } from '../backends/slurm/slurmrestd-mapping.js';
import type { SlurmApiSettings } from '../backends/slurm/index.js';
import { DEFAULTS, defaultsProblems } from './defaults.js';
import { ConfigError, type ConfigIssue } from './errors.js';

export type Env = Record<string, string | undefined>;

/** Where the CLI, the SDK and workers find Temporal. */
export interface ClientConfig {
  address: string;
  namespace: string;
  /** TANDEM_TASK_QUEUE (the SDK keeps its own default unless given one; see sdk/client.ts). */
  taskQueue: string;
}

/** Kubernetes access of a worker: enabled when KUBECONFIG is set or the worker runs in a pod. */
export interface KubernetesConfig {
  /** KUBECONFIG, or in-cluster (KUBERNETES_SERVICE_HOST); undefined: no cluster. */
  cluster?: { kubeconfigPath?: string };
  namespace?: string;
  /** Image of Tandem's built-in steps (stages with runtime kubernetes). */
  stepImage?: string;
  vllmImage?: string;
  serviceType: 'ClusterIP' | 'LoadBalancer';
}

/** Sites for staged migration (TANDEM_SLURM_SITES, TANDEM_K8S_SITES). */
export interface MigrationConfig {
  /** Site name → its slurm.conf. */
  slurmSites: Record<string, string>;
  kubernetesSites: Record<string, { kubeconfigPath?: string; namespace?: string; nodeSelector?: string }>;
}

export interface ClusterConfig {
  kubernetes: KubernetesConfig;
  migration: MigrationConfig;
}

export interface CliConfig extends ClientConfig {
  /** TANDEM_HOME, absolute. */
  home: string;
  argoSchemaFile: string;
}

export interface WorkerConfig extends CliConfig, ClusterConfig {
  /** The Slurm backend of TANDEM_SLURM_API; `auto` trains there. */
  slurm?: SlurmApiSettings;
  /** TANDEM_SITES_FILE: failover sites, with the secrets their entries name (already checked to be set). */
  sites?: { file: string; parsed: SitesFile; secrets: Record<string, string> };
  /** TANDEM_QUOTAS_FILE. */
  quotas?: { file: string; parsed: QuotasFile };
}

export interface ToolConfig {
  /** TEMPORAL_CLI: a `temporal` binary to use before PATH and .tools/. */
  temporalCli?: string;
}

export interface LoadOptions {
  /** Relative paths (TANDEM_HOME) resolve against this; default process.cwd(). */
  cwd?: string;
}

// ---- variable schemas -------------------------------------------------------------------------------

/** Unset and empty are the same: `VAR= cmd` is how shells clear a variable for one command. */
const optional = <T extends z.ZodType>(s: T) => z.preprocess((v) => (v === '' ? undefined : v), s.optional());
// Values are taken as given (no trimming): a path or an image name means exactly what the shell passed.
const text = z.string().min(1);
const hostPort = z.string().refine((v) => {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^\s:/[\]]+):(\d{1,5})$/.exec(v);
  return !!m && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}, 'must be host:port with a port of 1-65535, e.g. 127.0.0.1:7233');
const queueName = z.string().regex(/^\S+$/, 'must not contain whitespace');
const httpUrl = z.string().refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http(s) URL');
const positiveMs = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of milliseconds')
  .transform(Number)
  .pipe(z.number().int().min(1, 'must be at least 1 ms').max(2 ** 31 - 1, 'must be below 2^31 ms'));
const fileProblem = (path: string, executable = false): string | undefined => {
  try {
    if (!statSync(path).isFile()) return 'not a file';
    accessSync(path, executable ? constants.X_OK : constants.R_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? (executable ? 'not executable' : 'not readable') : (e as Error).message;
  }
};
const existingFile = (executable = false) => z.string().superRefine((v, ctx) => {
  const p = fileProblem(v, executable);
  if (p) ctx.addIssue({ code: 'custom', message: p });
});
/** "a=x,b=y" lists of sites; cluster() checks the shape of each entry. */
const siteList = z.string().transform((v) => v.split(',').map((e) => e.trim()).filter(Boolean));

const clientShape = {
  TEMPORAL_ADDRESS: optional(hostPort),
  TEMPORAL_NAMESPACE: optional(queueName),
  TANDEM_TASK_QUEUE: optional(queueName),
};

const cliShape = {
  ...clientShape,
  TANDEM_HOME: optional(text),
  TANDEM_ARGO_SCHEMA: optional(existingFile()),
};

const clusterShape = {
  KUBECONFIG: optional(text),
  KUBERNETES_SERVICE_HOST: optional(text),
  TANDEM_K8S_NAMESPACE: optional(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name (lower-case letters, digits, dashes)')),
  TANDEM_K8S_STEP_IMAGE: optional(text),
  TANDEM_K8S_VLLM_IMAGE: optional(text),
  TANDEM_K8S_SERVICE_TYPE: optional(z.enum(['ClusterIP', 'LoadBalancer'], 'must be ClusterIP or LoadBalancer')),
  TANDEM_K8S_MIGRATION_NODE_SELECTOR: optional(text),
  TANDEM_SLURM_SITES: optional(siteList),
  TANDEM_K8S_SITES: optional(siteList),
};

const slurmShape = {
  TANDEM_SLURM_API: optional(z.enum(['firecrest', 'slurmrestd'], 'must be "firecrest" or "slurmrestd"')),
  TANDEM_SLURM_SITE: optional(text),
  TANDEM_SLURM_WORKDIR: optional(text),
  TANDEM_SLURM_STATUS_INTERVAL_MS: optional(positiveMs),
  TANDEM_FIRECREST_URL: optional(httpUrl),
  TANDEM_FIRECREST_SYSTEM: optional(text),
  TANDEM_FIRECREST_TOKEN_URL: optional(httpUrl),
  TANDEM_FIRECREST_CLIENT_ID: optional(text),
  TANDEM_FIRECREST_CLIENT_SECRET: optional(z.string()),
  TANDEM_SLURMRESTD_SOCKET: optional(text),
  TANDEM_SLURMRESTD_URL: optional(httpUrl),
  TANDEM_SLURMRESTD_USER: optional(text),
  TANDEM_SLURMRESTD_TOKEN: optional(z.string()),
  TANDEM_SLURMRESTD_API_VERSION: optional(z.enum(SUPPORTED_SLURMRESTD_VERSIONS, `must be one of ${SUPPORTED_SLURMRESTD_VERSIONS.join(', ')}`)),
};

const workerShape = {
  ...cliShape,
  ...clusterShape,
  ...slurmShape,
  TANDEM_SITES_FILE: optional(existingFile()),
  TANDEM_QUOTAS_FILE: optional(existingFile()),
};

const toolShape = { TEMPORAL_CLI: optional(existingFile(true)) };

/** Variables whose values are secrets: messages name them but never print them. */
const SECRET = new Set(['TANDEM_FIRECREST_CLIENT_SECRET', 'TANDEM_SLURMRESTD_TOKEN']);

/** Every variable a loader reads, for the README and tests. */
export const CONFIG_VARIABLES = Object.keys({ ...workerShape, ...toolShape });

// ---- parsing ---------------------------------------------------------------------------------------

type Parsed<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

function source(env: Env, name: string): string {
  const v = env[name];
  return v === undefined || v === '' || SECRET.has(name) ? name : `${name}=${v}`;
}

/** Parses `env` against `shape`; `extra` adds the checks that span variables or read files. */
function parse<S extends z.ZodRawShape>(shape: S, env: Env, extra?: (v: Parsed<S>, issue: (i: ConfigIssue) => void) => void): Parsed<S> {
  const issues: ConfigIssue[] = [];
  // Only the variables of this shape: an SDK user's broken TANDEM_SITES_FILE is not the SDK's business.
  const result = z.object(shape).safeParse(Object.fromEntries(Object.keys(shape).map((k) => [k, env[k]])));
  if (!result.success) {
    for (const i of result.error.issues) issues.push({ source: source(env, String(i.path[0])), path: '', message: i.message });
  }
  // Cross-variable checks still run for the variables that parsed, so one message lists everything.
  if (extra) extra((result.success ? result.data : partial(shape, env)) as Parsed<S>, (i) => issues.push(i));
  if (issues.length) throw new ConfigError(issues);
  return result.data!;
}

/** The variables of `shape` that parse on their own (the failing ones count as unset). */
function partial(shape: z.ZodRawShape, env: Env): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(shape)) {
    const r = z.safeParse(s, env[k]);
    if (r.success) out[k] = r.data;
  }
  return out;
}

function client(v: Parsed<typeof clientShape>): ClientConfig {
  return { address: v.TEMPORAL_ADDRESS ?? DEFAULTS.temporalAddress, namespace: v.TEMPORAL_NAMESPACE ?? DEFAULTS.namespace, taskQueue: v.TANDEM_TASK_QUEUE ?? DEFAULTS.taskQueue };
}

function cli(v: Parsed<typeof cliShape>, opts: LoadOptions): CliConfig {
  return { ...client(v), home: resolve(opts.cwd ?? process.cwd(), v.TANDEM_HOME ?? DEFAULTS.home), argoSchemaFile: v.TANDEM_ARGO_SCHEMA ?? DEFAULTS.argoSchemaFile };
}

function cluster(v: Parsed<typeof clusterShape>, env: Env, issue: (i: ConfigIssue) => void): ClusterConfig {
  const slurmSites: Record<string, string> = {};
  for (const entry of v.TANDEM_SLURM_SITES ?? []) {
    const [name, conf] = entry.split('=');
    if (!name || !conf) issue({ source: source(env, 'TANDEM_SLURM_SITES'), path: '', message: `entry ${JSON.stringify(entry)} must look like site=/path/to/slurm.conf` });
    else slurmSites[name] = conf;
  }
  const kubernetesSites: MigrationConfig['kubernetesSites'] = {};
  for (const entry of v.TANDEM_K8S_SITES ?? []) {
    const [name, path] = entry.split('=');
    if (!name) issue({ source: source(env, 'TANDEM_K8S_SITES'), path: '', message: `entry ${JSON.stringify(entry)} must look like site[=/path/to/kubeconfig]` });
    else kubernetesSites[name] = { kubeconfigPath: path || v.KUBECONFIG, namespace: v.TANDEM_K8S_NAMESPACE, nodeSelector: v.TANDEM_K8S_MIGRATION_NODE_SELECTOR };
  }
  return {
    kubernetes: {
      cluster: v.KUBECONFIG || v.KUBERNETES_SERVICE_HOST ? { kubeconfigPath: v.KUBECONFIG } : undefined,
      namespace: v.TANDEM_K8S_NAMESPACE,
      stepImage: v.TANDEM_K8S_STEP_IMAGE,
      vllmImage: v.TANDEM_K8S_VLLM_IMAGE,
      serviceType: v.TANDEM_K8S_SERVICE_TYPE ?? DEFAULTS.k8sServiceType,
    },
    migration: { slurmSites, kubernetesSites },
  };
}

function slurm(v: Parsed<typeof slurmShape>, env: Env, issue: (i: ConfigIssue) => void): SlurmApiSettings | undefined {
  const api = v.TANDEM_SLURM_API;
  if (!api) return undefined;
  const missing: string[] = [];
  const need = <K extends keyof typeof v>(k: K): NonNullable<(typeof v)[K]> => {
    if (v[k] === undefined && !(env[k] ?? '')) missing.push(k);
    return v[k] as NonNullable<(typeof v)[K]>;
  };
  const common = { site: v.TANDEM_SLURM_SITE ?? DEFAULTS.slurmSite, workDir: need('TANDEM_SLURM_WORKDIR'), statusIntervalMs: v.TANDEM_SLURM_STATUS_INTERVAL_MS };
  let out: SlurmApiSettings;
  if (api === 'firecrest') {
    out = { api, ...common, url: need('TANDEM_FIRECREST_URL'), system: need('TANDEM_FIRECREST_SYSTEM'), tokenUrl: need('TANDEM_FIRECREST_TOKEN_URL'), clientId: need('TANDEM_FIRECREST_CLIENT_ID'), clientSecret: need('TANDEM_FIRECREST_CLIENT_SECRET') };
  } else {
    if (!v.TANDEM_SLURMRESTD_SOCKET && !v.TANDEM_SLURMRESTD_URL && !env.TANDEM_SLURMRESTD_URL) missing.push('TANDEM_SLURMRESTD_SOCKET or TANDEM_SLURMRESTD_URL');
    out = { api, ...common, socket: v.TANDEM_SLURMRESTD_SOCKET, url: v.TANDEM_SLURMRESTD_URL, user: v.TANDEM_SLURMRESTD_USER, token: v.TANDEM_SLURMRESTD_TOKEN, apiVersion: v.TANDEM_SLURMRESTD_API_VERSION ?? DEFAULTS.slurmrestdApiVersion };
  }
  for (const m of missing) issue({ source: m, path: '', message: `must be set when TANDEM_SLURM_API=${api}` });
  return out;
}

/** Reads a file named by a variable with `read`; its problems (with their lines) become issues. */
function readConfigFile<T>(env: Env, variable: string, file: string | undefined, read: (text: string, path: string) => T, issue: (i: ConfigIssue) => void): T | undefined {
  if (!file) return undefined;
  try {
    return read(readFileSync(file, 'utf8'), file);
  } catch (e) {
    if (e instanceof InputError) for (const i of e.issues) issue({ source: source(env, variable), path: i.path, line: i.line, message: i.message });
    else issue({ source: source(env, variable), path: '', message: (e as Error).message });
    return undefined;
  }
}

/** The secrets a sites file names must be set; they are looked up here, once, like every other variable. */
function siteSecrets(env: Env, sites: SitesFile, issue: (i: ConfigIssue) => void): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of sites.sites) {
    const named = s.api === 'firecrest' ? [['clientSecretEnv', s.clientSecretEnv]] : s.tokenEnv ? [['tokenEnv', s.tokenEnv]] : [];
    for (const [field, variable] of named) {
      const v = env[variable!];
      if (v) out[variable!] = v;
      else issue({ source: source(env, 'TANDEM_SITES_FILE'), path: '', message: `site ${s.name}: ${field} names the environment variable ${variable}, which is not set` });
    }
  }
  return out;
}

// ---- loaders ---------------------------------------------------------------------------------------

/** TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TANDEM_TASK_QUEUE: what the SDK and every CLI command need. */
export function loadClientConfig(env: Env = process.env): ClientConfig {
  return client(parse(clientShape, env));
}

/** The client's variables plus TANDEM_HOME and TANDEM_ARGO_SCHEMA (`tandem argo`, `tandem checkpoints`). */
export function loadCliConfig(env: Env = process.env, opts: LoadOptions = {}): CliConfig {
  return cli(parse(cliShape, env), opts);
}

/** Kubernetes access and migration sites: createTandemWorker's fallback when it is not given them. */
export function loadClusterConfig(env: Env = process.env): ClusterConfig {
  let out!: ClusterConfig;
  parse(clusterShape, env, (v, issue) => (out = cluster(v, env, issue)));
  return out;
}

/** TEMPORAL_CLI (workers/temporal-binary.ts). */
export function loadToolConfig(env: Env = process.env): ToolConfig {
  return { temporalCli: parse(toolShape, env).TEMPORAL_CLI };
}

/**
 * Everything a worker (`npm run worker`, `tandem dev`) is configured with, checked at once: variables,
 * the sites and quotas files (errors name the file's line) and the secrets the sites file names.
 */
export function loadWorkerConfig(env: Env = process.env, opts: LoadOptions = {}): WorkerConfig {
  let out!: WorkerConfig;
  parse(workerShape, env, (v, issue) => {
    for (const p of defaultsProblems()) issue({ source: 'config/defaults.ts', path: '', message: p });
    const sites = readConfigFile(env, 'TANDEM_SITES_FILE', v.TANDEM_SITES_FILE, parseSitesFile, issue);
    const quotas = readConfigFile(env, 'TANDEM_QUOTAS_FILE', v.TANDEM_QUOTAS_FILE, parseQuotasFile, issue);
    out = {
      ...cli(v, opts),
      ...cluster(v, env, issue),
      slurm: slurm(v, env, issue),
      sites: sites && v.TANDEM_SITES_FILE ? { file: v.TANDEM_SITES_FILE, parsed: sites, secrets: siteSecrets(env, sites, issue) } : undefined,
      quotas: quotas && v.TANDEM_QUOTAS_FILE ? { file: v.TANDEM_QUOTAS_FILE, parsed: quotas } : undefined,
    };
  });
  return out;
}
