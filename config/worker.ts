// The one configuration boundary: the only module that reads TANDEM_* and TEMPORAL_* variables (and the
// standard KUBECONFIG / KUBERNETES_SERVICE_HOST the worker's cluster access follows). Everything else
// takes plain values through its options. Each loader validates its variables with zod, reads and
// checks the files they name, and throws one ConfigError that lists every problem.
//
// Not configuration in this sense: the job contract (TANDEM_DATA_DIR, TANDEM_CHECKPOINT_DIR, … that
// Tandem sets for the programs it runs; programs/env.ts reads them on the job side) and the environment
// workers pass on to child processes.
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { homedir } from 'node:os';
import { z } from 'zod';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/client';
import { InputError } from '../contract/input-error.js';
import { parseSitesFile, type SitesFile } from '../contract/sites.js';
import { endpointUrlProblem } from '../contract/endpoint-url.js';
import { parseQuotasFile, type QuotasFile } from '../contract/quotas.js';
import { parseTenantPolicy, type TenantPolicy } from '../contract/tenant-policy.js';
import { SUPPORTED_SLURMRESTD_VERSIONS } from '../backends/slurm/slurmrestd-mapping.js';
import type { SlurmApiSettings } from '../backends/slurm/index.js';
import type { ClientCredentials } from '../backends/oidc.js';
import { DEFAULTS, defaultsProblems } from './defaults.js';
import { decodeKey, keyIdProblem, parseKeyring, type CodecKeys } from '../codec/keys.js';
import { ConfigError, type ConfigIssue } from './errors.js';
import { bundleMismatch, readBundleFlavour, type BundleFlavour } from './workflow-bundle.js';
import { tandemVersion } from './version.js';

/** TANDEM_LOCAL_ISOLATION's values (backends/local-jobs.ts `chooseIsolation`). */
export const LOCAL_ISOLATION_MODES = ['auto', 'sandbox', 'none'] as const;
export type LocalIsolationMode = (typeof LOCAL_ISOLATION_MODES)[number];

/** TANDEM_LOCAL_ISOLATION alone, for code that starts local workloads outside a worker (`tandem deployments rollback`); a bad value is the workers' error to report, here `auto`. */
export function localIsolationMode(env: Env = process.env): LocalIsolationMode {
  const v = env.TANDEM_LOCAL_ISOLATION;
  return (LOCAL_ISOLATION_MODES as readonly string[]).includes(v ?? '') ? (v as LocalIsolationMode) : 'auto';
}

export type Env = Record<string, string | undefined>;

/**
 * How to reach Temporal: the frontend address, TLS (server CA, server name, mTLS client certificate),
 * an API key and extra gRPC metadata. The shape both `Connection.connect` (client) and
 * `NativeConnection.connect` (worker) take, so it is spread into either as it is.
 */
export interface TemporalConnection {
  address: string;
  /** true: TLS with the system's roots; an object: CA, server name, client certificate pair. */
  tls?: TLSConfig | boolean;
  /** A secret: sent as `authorization: Bearer …`, never printed. */
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** Where the CLI, the SDK and workers find Temporal. */
export interface ClientConfig {
  address: string;
  namespace: string;
  /** TANDEM_TASK_QUEUE (the SDK keeps its own default unless given one; see sdk/client.ts). */
  taskQueue: string;
  /** Temporal's own environment configuration (TEMPORAL_* and temporal.toml profiles), resolved. */
  connection: TemporalConnection;
  /** TEMPORAL_OIDC_*: the API key is a token from this client-credentials grant, refreshed (sdk/oidc-token.ts). */
  oidc?: ClientCredentials;
}

export interface ClientLoadOptions {
  /** A temporal.toml profile (`--profile`); default TEMPORAL_PROFILE, then "default". */
  profile?: string;
  /** The temporal.toml to read instead of TEMPORAL_CONFIG_FILE or ~/.config/temporalio/temporal.toml. */
  configFile?: string;
}

/** Kubernetes access of a worker: enabled when KUBECONFIG is set or the worker runs in a pod. */
export interface KubernetesConfig {
  /** KUBECONFIG, or in-cluster (KUBERNETES_SERVICE_HOST); undefined: no cluster. */
  cluster?: { kubeconfigPath?: string };
  namespace?: string;
  /**
   * TANDEM_K8S_SITE: the cluster's site name in placement, quotas, tenant policies and job records.
   * Undefined: the apiserver's host:port, as before the setting existed (quota files and policies
   * written against that name keep working).
   */
  site?: string;
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
  /** TANDEM_TENANT_POLICY: which sites, partitions, QoS, namespaces, GPUs and env overrides each tenant may use. */
  tenantPolicy?: TenantPolicyConfig;
  /** TANDEM_CODEC_*: payload encryption keys; undefined: payloads are not encrypted. */
  codec?: CodecKeys;
  /** TANDEM_AUDIT_*: where the audit log is and who the worker appends as. */
  audit: AuditConfig;
  /** TANDEM_METRICS_*, TANDEM_LOG_*: the /metrics endpoint and the log format (observe/). */
  observe: ObserveConfig;
  /** TANDEM_LOCAL_ISOLATION: how local pipeline jobs and model servers are isolated (backends/local-jobs.ts `chooseIsolation`). */
  localIsolation: LocalIsolationMode;
  /** TANDEM_WORKER_*: how much work the worker takes at once (its slots and workflow cache). */
  slots: WorkerSlots;
  /** TANDEM_WORKFLOW_BUNDLE: a prebuilt workflow bundle (`tandem bundle`), checked to fit this worker; undefined: the worker bundles at start. */
  workflowBundle?: string;
}

export interface ToolConfig {
  /** TEMPORAL_CLI: a `temporal` binary to use before PATH and .tools/. */
  temporalCli?: string;
  /**
   * The user's cache directory for tools Tandem builds (the Temporal CLI) when it runs from the
   * installed package: $XDG_CACHE_HOME/tandem, else ~/.cache/tandem (never inside node_modules, which
   * every `npm install` replaces). A checkout keeps its own .tools/.
   */
  cacheDir: string;
}

export interface LoadOptions extends ClientLoadOptions {
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
/** A site's API endpoint: the sites file's rule (contract/endpoint-url.ts: no credentials, no metadata or link-local host). */
const endpointUrl = z.string().superRefine((v, ctx) => {
  const problem = endpointUrlProblem(v);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
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

const bool = z.enum(['true', 'false', '1', '0'], 'must be true or false');
// Temporal's environment configuration (the variables `temporal` and every SDK read, through
// @temporalio/envconfig): checked here so a typo is named before a connection is tried.
const clientShape = {
  TEMPORAL_ADDRESS: optional(hostPort),
  TEMPORAL_NAMESPACE: optional(queueName),
  TANDEM_TASK_QUEUE: optional(queueName),
  TEMPORAL_PROFILE: optional(text),
  TEMPORAL_CONFIG_FILE: optional(existingFile()),
  // A header value: a newline or another control character would fail deep in the gRPC layer.
  TEMPORAL_API_KEY: optional(z.string().refine((v) => ![...v].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f), 'must not contain a newline or another control character (a key file read with its trailing newline?)')),
  TEMPORAL_TLS: optional(bool),
  TEMPORAL_TLS_CLIENT_CERT_PATH: optional(existingFile()),
  TEMPORAL_TLS_CLIENT_KEY_PATH: optional(existingFile()),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: optional(existingFile()),
  TEMPORAL_TLS_SERVER_NAME: optional(text),
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: optional(bool),
  // Tandem's own (docs/authorization.md): the API key from an OIDC client-credentials grant, refreshed.
  TEMPORAL_OIDC_TOKEN_URL: optional(httpUrl),
  TEMPORAL_OIDC_CLIENT_ID: optional(text),
  TEMPORAL_OIDC_CLIENT_SECRET_FILE: optional(existingFile()),
  TEMPORAL_OIDC_SCOPE: optional(text),
};

const cliShape = {
  ...clientShape,
  TANDEM_HOME: optional(text.refine((v) => !existsSync(v) || statSync(v).isDirectory(), 'is not a directory (Tandem keeps its runs, jobs and keys under it)')),
  TANDEM_ARGO_SCHEMA: optional(existingFile()),
};

const clusterShape = {
  KUBECONFIG: optional(text),
  KUBERNETES_SERVICE_HOST: optional(text),
  TANDEM_K8S_NAMESPACE: optional(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name (lower-case letters, digits, dashes)')),
  TANDEM_K8S_SITE: optional(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,62}$/, 'must be a site name (letters, digits, ".", "_", ":", "-"; at most 63 characters)')),
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
  TANDEM_FIRECREST_URL: optional(endpointUrl),
  TANDEM_FIRECREST_SYSTEM: optional(text),
  TANDEM_FIRECREST_TOKEN_URL: optional(endpointUrl),
  TANDEM_FIRECREST_CLIENT_ID: optional(text),
  TANDEM_FIRECREST_CLIENT_SECRET: optional(z.string()),
  TANDEM_SLURMRESTD_SOCKET: optional(text),
  TANDEM_SLURMRESTD_URL: optional(endpointUrl),
  TANDEM_SLURMRESTD_USER: optional(text),
  TANDEM_SLURMRESTD_TOKEN: optional(z.string()),
  TANDEM_SLURMRESTD_API_VERSION: optional(z.enum(SUPPORTED_SLURMRESTD_VERSIONS, `must be one of ${SUPPORTED_SLURMRESTD_VERSIONS.join(', ')}`)),
};

// Before workerShape, which spreads observeShape() (a const is not hoisted).
const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
/** OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs separated by commas, keys and values URL-encoded. */
const otlpHeaders = z.string().transform((v, ctx) => {
  const out: Record<string, string> = {};
  for (const pair of v.split(',')) {
    const at = pair.indexOf('=');
    if (!pair.trim()) continue;
    try {
      if (at <= 0) throw new Error();
      out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be key=value pairs separated by commas (URL-encoded)' });
      return z.NEVER;
    }
  }
  return out;
});
const workerShape = {
  ...cliShape,
  ...clusterShape,
  ...slurmShape,
  TANDEM_SITES_FILE: optional(existingFile()),
  TANDEM_QUOTAS_FILE: optional(existingFile()),
  ...tenantPolicyShape(),
  ...codecShape(),
  ...auditShape(),
  ...observeShape(),
  // auto (default): the bubblewrap sandbox where it works, else a plain process with a warning (never
  // with a tenant policy); sandbox: always (jobs fail, saying why, where it does not work); none: never.
  TANDEM_LOCAL_ISOLATION: optional(z.enum(LOCAL_ISOLATION_MODES, 'must be auto, sandbox or none')),
  ...slotsShape(),
  // A prebuilt workflow bundle (`tandem bundle <file>`): the worker starts polling without bundling.
  TANDEM_WORKFLOW_BUNDLE: optional(existingFile()),
};

const toolShape = { TEMPORAL_CLI: optional(existingFile(true)), XDG_CACHE_HOME: optional(text) };

/** Variables whose values are secrets: messages name them but never print them. */
const SECRET = new Set(['TANDEM_FIRECREST_CLIENT_SECRET', 'TANDEM_SLURMRESTD_TOKEN', 'TEMPORAL_API_KEY', 'TEMPORAL_TLS_CLIENT_KEY_DATA', 'TANDEM_CODEC_KEY', 'TANDEM_CODEC_SERVER_TOKEN', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']);

/** Every variable a loader reads, for the README and tests. */
export const CONFIG_VARIABLES = Object.keys({ ...workerShape, ...toolShape, ...codecServerShape() });

// ---- parsing ---------------------------------------------------------------------------------------

type Parsed<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

function source(env: Env, name: string): string {
  const v = env[name];
  if (v === undefined || v === '' || SECRET.has(name)) return name;
  // A URL's password (refused, but said as the refused value) is never echoed.
  return `${name}=${v.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, '$1:***@')}`;
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

/**
 * The connection as Temporal's own tools would make it: the temporal.toml profile (TEMPORAL_CONFIG_FILE,
 * or ~/.config/temporalio/temporal.toml), overridden by TEMPORAL_* variables. Problems of the file or
 * the profile become issues like any variable's; an API key never appears in a message.
 */
function client(v: Parsed<typeof clientShape>, env: Env, issue: (i: ConfigIssue) => void, opts: ClientLoadOptions = {}): ClientConfig {
  // envconfig reads the same variables; an empty one means unset here, as everywhere in Tandem
  // (except TEMPORAL_GRPC_META_X=, which removes a profile's header, as in Temporal's CLI).
  const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string' && (e[1] !== '' || e[0].startsWith('TEMPORAL_GRPC_META_'))));
  const profileName = opts.profile ?? v.TEMPORAL_PROFILE;
  const where = opts.configFile ?? (v.TEMPORAL_CONFIG_FILE ? source(env, 'TEMPORAL_CONFIG_FILE') : 'temporal.toml');
  let loaded: ReturnType<typeof loadClientConnectConfig> = { connectionOptions: {} };
  try {
    loaded = loadClientConnectConfig({ profile: profileName, overrideEnvVars: vars, configSource: opts.configFile ? { path: opts.configFile } : undefined });
  } catch (e) {
    const message = (e as Error).message.replace(vars.TEMPORAL_API_KEY || '\u0000', '***');
    issue({ source: profileName ? `${where} (profile ${profileName})` : where, path: '', message });
  }
  const c = loaded.connectionOptions;
  const address = c.address ?? DEFAULTS.temporalAddress;
  // TEMPORAL_ADDRESS itself was checked with the other variables; a profile's address is checked here.
  if (!env.TEMPORAL_ADDRESS && !hostPort.safeParse(address).success) issue({ source: `${where}${profileName ? ` (profile ${profileName})` : ''}`, path: 'address', message: `${JSON.stringify(address)} must be host:port` });
  const namespace = loaded.namespace ?? DEFAULTS.namespace;
  const connection: TemporalConnection = { address };
  if (c.tls) connection.tls = c.tls;
  if (c.apiKey !== undefined) connection.apiKey = c.apiKey as string;
  if (c.metadata && Object.keys(c.metadata).length) connection.metadata = c.metadata as Record<string, string>;
  const oidc = oidcCredentials(v, env, issue, connection.apiKey !== undefined);
  return { address, namespace, taskQueue: v.TANDEM_TASK_QUEUE ?? DEFAULTS.taskQueue, connection, ...(oidc ? { oidc } : {}) };
}

/**
 * TEMPORAL_OIDC_TOKEN_URL, _CLIENT_ID and _CLIENT_SECRET_FILE: all three or none. The secret is read
 * from its file here, once (never from a variable, so it is in no environment dump); the token URL
 * must be https unless it is on loopback, since the grant carries the secret.
 */
function oidcCredentials(v: Parsed<typeof clientShape>, env: Env, issue: (i: ConfigIssue) => void, hasApiKey: boolean): ClientCredentials | undefined {
  const names = ['TEMPORAL_OIDC_TOKEN_URL', 'TEMPORAL_OIDC_CLIENT_ID', 'TEMPORAL_OIDC_CLIENT_SECRET_FILE'] as const;
  const set = names.filter((n) => (env[n] ?? '') !== '');
  if (!set.length && !v.TEMPORAL_OIDC_SCOPE) return undefined;
  for (const n of names) if (!set.includes(n)) issue({ source: n, path: '', message: `must be set with ${set.length ? set.join(', ') : 'TEMPORAL_OIDC_SCOPE'} (OIDC client credentials for Temporal)` });
  if (hasApiKey) issue({ source: 'TEMPORAL_OIDC_TOKEN_URL', path: '', message: 'the API key comes from the OIDC grant: unset TEMPORAL_API_KEY (or the profile\'s api_key)' });
  const url = v.TEMPORAL_OIDC_TOKEN_URL;
  if (url && new URL(url).protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname)) {
    issue({ source: source(env, 'TEMPORAL_OIDC_TOKEN_URL'), path: '', message: 'must be https (the grant carries the client secret); http only on loopback' });
  }
  let clientSecret: string | undefined;
  if (v.TEMPORAL_OIDC_CLIENT_SECRET_FILE) {
    try {
      // One trailing newline is the file's, not the secret's.
      clientSecret = readFileSync(v.TEMPORAL_OIDC_CLIENT_SECRET_FILE, 'utf8').replace(/\r?\n$/, '');
    } catch (e) {
      issue({ source: source(env, 'TEMPORAL_OIDC_CLIENT_SECRET_FILE'), path: '', message: (e as NodeJS.ErrnoException).code ?? 'cannot be read' });
    }
    if (clientSecret === '') issue({ source: source(env, 'TEMPORAL_OIDC_CLIENT_SECRET_FILE'), path: '', message: 'is empty' });
  }
  if (!url || !v.TEMPORAL_OIDC_CLIENT_ID || !clientSecret) return undefined;
  return { tokenUrl: url, clientId: v.TEMPORAL_OIDC_CLIENT_ID, clientSecret, ...(v.TEMPORAL_OIDC_SCOPE ? { scope: v.TEMPORAL_OIDC_SCOPE } : {}) };
}

function cli(v: Parsed<typeof cliShape>, env: Env, issue: (i: ConfigIssue) => void, opts: LoadOptions): CliConfig {
  return { ...client(v, env, issue, opts), home: resolve(opts.cwd ?? process.cwd(), v.TANDEM_HOME ?? DEFAULTS.home), argoSchemaFile: v.TANDEM_ARGO_SCHEMA ?? DEFAULTS.argoSchemaFile };
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
      site: v.TANDEM_K8S_SITE,
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
export function loadClientConfig(env: Env = process.env, opts: ClientLoadOptions = {}): ClientConfig {
  let out!: ClientConfig;
  parse(clientShape, env, (v, issue) => (out = client(v, env, issue, opts)));
  return out;
}

/** The client's variables plus TANDEM_HOME and TANDEM_ARGO_SCHEMA (`tandem argo`, `tandem checkpoints`). */
export function loadCliConfig(env: Env = process.env, opts: LoadOptions = {}): CliConfig {
  let out!: CliConfig;
  parse(cliShape, env, (v, issue) => (out = cli(v, env, issue, opts)));
  return out;
}

/** Kubernetes access and migration sites: createTandemWorker's fallback when it is not given them. */
export function loadClusterConfig(env: Env = process.env): ClusterConfig {
  let out!: ClusterConfig;
  parse(clusterShape, env, (v, issue) => (out = cluster(v, env, issue)));
  return out;
}

/** TEMPORAL_CLI (workers/temporal-binary.ts). */
export function loadToolConfig(env: Env = process.env): ToolConfig {
  const v = parse(toolShape, env);
  // The XDG Base Directory rule: a relative XDG_CACHE_HOME is invalid and ignored.
  const xdg = v.XDG_CACHE_HOME && isAbsolute(v.XDG_CACHE_HOME) ? v.XDG_CACHE_HOME : undefined;
  return { temporalCli: v.TEMPORAL_CLI, cacheDir: join(xdg ?? join(homedir(), '.cache'), 'tandem') };
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
      ...cli(v, env, issue, opts),
      ...cluster(v, env, issue),
      slurm: slurm(v, env, issue),
      sites: sites && v.TANDEM_SITES_FILE ? { file: v.TANDEM_SITES_FILE, parsed: sites, secrets: siteSecrets(env, sites, issue) } : undefined,
      quotas: quotas && v.TANDEM_QUOTAS_FILE ? { file: v.TANDEM_QUOTAS_FILE, parsed: quotas } : undefined,
      tenantPolicy: tenantPolicyConfig(v, env, issue),
      codec: codecKeys(v, env, issue),
      audit: auditConfig(v, opts),
      observe: observeConfig(v, env, issue),
      localIsolation: v.TANDEM_LOCAL_ISOLATION ?? 'auto',
      slots: slotsConfig(v),
    };
    out.workflowBundle = workflowBundleConfig(v.TANDEM_WORKFLOW_BUNDLE, { tandem: tandemVersion(), encrypted: !!out.codec, tracing: !!out.observe.tracing }, env, issue);
  });
  return out;
}

/** TANDEM_WORKFLOW_BUNDLE, when the bundle's header (config/workflow-bundle.ts) fits the worker it is to run in. */
function workflowBundleConfig(file: string | undefined, wanted: BundleFlavour, env: Env, issue: (i: ConfigIssue) => void): string | undefined {
  if (!file) return undefined;
  const problem = bundleMismatch(readBundleFlavour(file), wanted);
  if (problem) issue({ source: source(env, 'TANDEM_WORKFLOW_BUNDLE'), path: '', message: problem });
  return problem ? undefined : file;
}

// ---- tenant policy (contract/tenant-policy.ts) -----------------------------------------------------
// TANDEM_TENANT_POLICY: the tenant policy file. The SDK and the CLI check launches against it, workers
// the runs they execute; unset: no policy (every tenant may use what the worker has).
// A function, not a constant: workerShape above spreads it before this block's line in the file.

function tenantPolicyShape() {
  return { TANDEM_TENANT_POLICY: optional(existingFile()) };
}

export interface TenantPolicyConfig {
  file: string;
  parsed: TenantPolicy;
}

function tenantPolicyConfig(v: { TANDEM_TENANT_POLICY?: string }, env: Env, issue: (i: ConfigIssue) => void): TenantPolicyConfig | undefined {
  const parsed = readConfigFile(env, 'TANDEM_TENANT_POLICY', v.TANDEM_TENANT_POLICY, parseTenantPolicy, issue);
  return parsed && v.TANDEM_TENANT_POLICY ? { file: v.TANDEM_TENANT_POLICY, parsed } : undefined;
}

/** The tenant policy alone (the SDK's `launch`, so the CLI too); undefined when TANDEM_TENANT_POLICY is unset. */
export function loadTenantPolicyConfig(env: Env = process.env): TenantPolicyConfig | undefined {
  let out: TenantPolicyConfig | undefined;
  parse(tenantPolicyShape(), env, (v, issue) => (out = tenantPolicyConfig(v, env, issue)));
  return out;
}

// ---- payload encryption (codec/) -------------------------------------------------------------------
// TANDEM_CODEC_KEYS_FILE: a keyring, one `id: base64key` a line (codec/keys.ts); TANDEM_CODEC_KEY +
// TANDEM_CODEC_KEY_ID: one key from the environment. Both may be set: the variable's key is then the
// newest and encrypts, the file's keys still decrypt (rotation). Keys never leave the worker, the
// client and the codec server: not in payloads (only the id is), not in messages.
// Functions, not constants: workerShape above spreads these before this block's line in the file.

function codecShape() {
  return {
    TANDEM_CODEC_KEYS_FILE: optional(existingFile()),
    TANDEM_CODEC_KEY: optional(z.string()),
    TANDEM_CODEC_KEY_ID: optional(z.string()),
    TANDEM_CODEC_PLAINTEXT: optional(z.enum(['refuse', 'accept'], 'must be refuse (the default: a keyed worker fails runs whose input is not encrypted with its keys) or accept')),
  };
}

/** `tandem codec-server`: the origins its CORS answers (the Web UI's) and an optional bearer token. */
function codecServerShape() {
  return {
    ...codecShape(),
    TANDEM_CODEC_SERVER_ORIGINS: optional(siteList.pipe(z.array(z.string().refine((o) => URL.canParse(o) && /^https?:$/.test(new URL(o).protocol) && new URL(o).origin === o, 'each entry must be an origin such as http://localhost:8233 (scheme, host and port; no path)')))),
    TANDEM_CODEC_SERVER_TOKEN: optional(z.string().min(16, 'must be at least 16 characters')),
    TANDEM_CODEC_SERVER_OIDC_ISSUER: optional(httpUrl),
    TANDEM_CODEC_SERVER_OIDC_JWKS_URL: optional(httpUrl),
    TANDEM_CODEC_SERVER_OIDC_AUDIENCE: optional(text),
    TANDEM_CODEC_SERVER_OIDC_CLAIM: optional(z.string().regex(/^[A-Za-z0-9_.:/-]{1,128}$/, 'must be a claim name')),
    TANDEM_CODEC_SERVER_TENANT_KEYS: optional(text),
    TANDEM_CODEC_SERVER_HOSTS: optional(siteList.pipe(z.array(z.string().regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/, 'each entry must be a host[:port] as a Host header carries it')))),
  };
}

/** `tenant=id id;tenant2=id`: each tenant (or namespace) and the key ids it may use. */
function tenantKeys(text: string, issue: (i: ConfigIssue) => void): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of text.split(';').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9._-]{1,128})\s*=\s*([A-Za-z0-9._\-\s,]+)$/.exec(part);
    if (!m) {
      issue({ source: 'TANDEM_CODEC_SERVER_TENANT_KEYS', path: '', message: `${JSON.stringify(part.slice(0, 80))} must look like tenant=keyid[,keyid…] (entries separated by ;)` });
      continue;
    }
    if (Object.hasOwn(out, m[1]!) || m[1] === '__proto__') issue({ source: 'TANDEM_CODEC_SERVER_TENANT_KEYS', path: '', message: `tenant ${m[1]} is listed twice` });
    out[m[1]!] = m[2]!.split(/[\s,]+/).filter(Boolean);
  }
  return out;
}

type CodecVars = Parsed<ReturnType<typeof codecShape>>;

function codecKeys(v: CodecVars, env: Env, issue: (i: ConfigIssue) => void): CodecKeys | undefined {
  const keys: CodecKeys['keys'] = [];
  if (v.TANDEM_CODEC_KEYS_FILE) {
    const file = v.TANDEM_CODEC_KEYS_FILE;
    // Like an ssh key: a keyring others can read is refused rather than used.
    if ((statSync(file).mode & 0o077) !== 0) issue({ source: source(env, 'TANDEM_CODEC_KEYS_FILE'), path: '', message: 'is readable or writable by group or others; make it private (chmod 600)' });
    const parsed = parseKeyring(readFileSync(file, 'utf8'));
    for (const i of parsed.issues) issue({ source: source(env, 'TANDEM_CODEC_KEYS_FILE'), path: '', line: i.line, message: i.message });
    if (!parsed.issues.length && !parsed.keys.length) issue({ source: source(env, 'TANDEM_CODEC_KEYS_FILE'), path: '', message: 'holds no key (lines `id: base64key`)' });
    keys.push(...parsed.keys);
  }
  if (v.TANDEM_CODEC_KEY !== undefined || v.TANDEM_CODEC_KEY_ID !== undefined) {
    if (v.TANDEM_CODEC_KEY === undefined) issue({ source: 'TANDEM_CODEC_KEY', path: '', message: 'must be set when TANDEM_CODEC_KEY_ID is' });
    const id = v.TANDEM_CODEC_KEY_ID;
    const idProblem = id === undefined ? 'must be set when TANDEM_CODEC_KEY is (the id payloads name their key by)' : keyIdProblem(id);
    if (idProblem) issue({ source: source(env, 'TANDEM_CODEC_KEY_ID'), path: '', message: idProblem });
    const key = v.TANDEM_CODEC_KEY === undefined ? undefined : decodeKey(v.TANDEM_CODEC_KEY);
    if (typeof key === 'string') issue({ source: 'TANDEM_CODEC_KEY', path: '', message: key });
    if (id !== undefined && !idProblem && key instanceof Buffer) {
      const same = keys.find((k) => k.id === id);
      if (same && !same.key.equals(key)) issue({ source: source(env, 'TANDEM_CODEC_KEY_ID'), path: '', message: `key id ${id} is also in TANDEM_CODEC_KEYS_FILE with a different key` });
      else if (!same) keys.push({ id, key });
      else keys.push(...keys.splice(keys.indexOf(same), 1)); // the same key: it is the newest
    }
  }
  return keys.length ? { keys, ...(v.TANDEM_CODEC_PLAINTEXT === 'accept' ? { acceptPlaintext: true } : {}) } : undefined;
}

/** The codec keys alone: the SDK's client, `tandem runs replay` and anything else that reads payloads. */
export function loadCodecConfig(env: Env = process.env): CodecKeys | undefined {
  let out: CodecKeys | undefined;
  parse(codecShape(), env, (v, issue) => (out = codecKeys(v, env, issue)));
  return out;
}

export interface CodecServerConfig {
  keys?: CodecKeys;
  /** Origins allowed by CORS (the Temporal Web UI's). */
  origins: string[];
  /** The operator's static bearer token (every key). */
  token?: string;
  /** The Web UI's forwarded access token: the issuer, its JWKS, the tenant claim and each tenant's key ids. */
  oidc?: { issuer: string; jwksUrl?: string; audience?: string; claim: string; tenantKeys: Record<string, string[]> };
  /** No authentication (`--no-auth`): loopback only. */
  none: boolean;
  /** Host names answered besides loopback (a proxy's). */
  hosts: string[];
}

const loopbackUrl = (u: string) => ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(u).hostname);

/**
 * `tandem codec-server`. Authenticated by default: TANDEM_CODEC_SERVER_TOKEN (the operator) and/or
 * TANDEM_CODEC_SERVER_OIDC_ISSUER with TANDEM_CODEC_SERVER_TENANT_KEYS (the Web UI's users);
 * `noAuth` (the `--no-auth` flag, never a variable) only while every Host answered is loopback.
 */
export function loadCodecServerConfig(env: Env = process.env, opts: { noAuth?: boolean } = {}): CodecServerConfig {
  let out!: CodecServerConfig;
  parse(codecServerShape(), env, (v, issue) => {
    const keys = codecKeys(v, env, issue);
    if (!keys && !v.TANDEM_CODEC_KEYS_FILE && v.TANDEM_CODEC_KEY === undefined) issue({ source: 'TANDEM_CODEC_KEYS_FILE or TANDEM_CODEC_KEY', path: '', message: 'must be set: the codec server decrypts with the keys the workers encrypt with' });
    const hosts = v.TANDEM_CODEC_SERVER_HOSTS ?? [];
    const issuer = v.TANDEM_CODEC_SERVER_OIDC_ISSUER;
    let oidc: CodecServerConfig['oidc'];
    if (issuer !== undefined) {
      for (const [name, url] of [['TANDEM_CODEC_SERVER_OIDC_ISSUER', issuer], ['TANDEM_CODEC_SERVER_OIDC_JWKS_URL', v.TANDEM_CODEC_SERVER_OIDC_JWKS_URL]] as const) {
        if (url !== undefined && new URL(url).protocol !== 'https:' && !loopbackUrl(url)) issue({ source: name, path: '', message: 'must be an https URL (http only on loopback): its keys decide who reads payloads' });
      }
      if (v.TANDEM_CODEC_SERVER_TENANT_KEYS === undefined) issue({ source: 'TANDEM_CODEC_SERVER_TENANT_KEYS', path: '', message: 'must be set with TANDEM_CODEC_SERVER_OIDC_ISSUER: which key ids each tenant may use (tenant=keyid,keyid;other=keyid)' });
      const map = tenantKeys(v.TANDEM_CODEC_SERVER_TENANT_KEYS ?? '', issue);
      const known = new Set(keys?.keys.map((k) => k.id) ?? []);
      for (const [t, ids] of Object.entries(map)) {
        const unknown = ids.filter((id) => !known.has(id));
        if (keys && unknown.length) issue({ source: 'TANDEM_CODEC_SERVER_TENANT_KEYS', path: '', message: `tenant ${t}: key id(s) ${unknown.join(', ')} are not in the keyring` });
      }
      oidc = { issuer, jwksUrl: v.TANDEM_CODEC_SERVER_OIDC_JWKS_URL, audience: v.TANDEM_CODEC_SERVER_OIDC_AUDIENCE, claim: v.TANDEM_CODEC_SERVER_OIDC_CLAIM ?? 'permissions', tenantKeys: map };
    } else {
      for (const name of ['TANDEM_CODEC_SERVER_OIDC_JWKS_URL', 'TANDEM_CODEC_SERVER_OIDC_AUDIENCE', 'TANDEM_CODEC_SERVER_OIDC_CLAIM', 'TANDEM_CODEC_SERVER_TENANT_KEYS'] as const) {
        if (v[name] !== undefined) issue({ source: name, path: '', message: 'is set but TANDEM_CODEC_SERVER_OIDC_ISSUER is not' });
      }
    }
    const none = opts.noAuth === true;
    if (!none && v.TANDEM_CODEC_SERVER_TOKEN === undefined && issuer === undefined) {
      issue({ source: 'TANDEM_CODEC_SERVER_TOKEN or TANDEM_CODEC_SERVER_OIDC_ISSUER', path: '', message: 'must be set: the codec server decrypts every payload for whoever calls it (--no-auth serves loopback without authentication)' });
    }
    const remote = hosts.filter((h) => !/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/i.test(h));
    if (none && remote.length) issue({ source: 'TANDEM_CODEC_SERVER_HOSTS', path: '', message: `names ${remote.join(', ')}: --no-auth is for loopback only` });
    out = { keys, origins: v.TANDEM_CODEC_SERVER_ORIGINS ?? [...DEFAULTS_CODEC_ORIGINS], token: v.TANDEM_CODEC_SERVER_TOKEN, oidc, none, hosts };
  });
  return out;
}

/** The Web UI of `tandem dev` / `temporal server start-dev` (port 8233). */
const DEFAULTS_CODEC_ORIGINS = [`http://localhost:${DEFAULTS.devUiPort}`, `http://127.0.0.1:${DEFAULTS.devUiPort}`];

// ---- worker slots (workers/worker.ts) --------------------------------------------------------------
// How much work one worker takes at once, so that it refuses more (the server keeps the tasks queued for
// another worker or for later) rather than run out of memory: TANDEM_WORKER_MAX_ACTIVITIES activity
// executions (Temporal's default 100), TANDEM_WORKER_MAX_WATCHES long waits beside them (a job watched to
// its end, a rollout, a readiness gate: workers/slots.ts; default DEFAULTS.workerMaxWatches), TANDEM_WORKER_MAX_WORKFLOW_TASKS workflow tasks (default 40),
// TANDEM_WORKER_MAX_CACHED_WORKFLOWS workflows kept in memory between their tasks (default
// DEFAULTS.workerMaxCachedWorkflows; one beyond it is evicted and replayed from its history when its next
// task comes). docs/scale.md has the memory each costs.

function slotsShape() {
  const count = z.string().regex(/^\d+$/, 'must be a whole number of 2 or more (digits only)').transform(Number).pipe(z.number().int().min(2, 'must be at least 2').max(100_000, 'must be at most 100000'));
  return {
    TANDEM_WORKER_MAX_ACTIVITIES: optional(count),
    TANDEM_WORKER_MAX_WATCHES: optional(count),
    TANDEM_WORKER_MAX_WORKFLOW_TASKS: optional(count),
    TANDEM_WORKER_MAX_CACHED_WORKFLOWS: optional(count),
  };
}

export interface WorkerSlots {
  maxActivities: number;
  /** Long waits beside the short activities (workers/slots.ts): they never take a short slot. */
  maxWatches: number;
  maxWorkflowTasks: number;
  maxCachedWorkflows: number;
}

function slotsConfig(v: Partial<Parsed<ReturnType<typeof slotsShape>>>): WorkerSlots {
  const maxCachedWorkflows = v.TANDEM_WORKER_MAX_CACHED_WORKFLOWS ?? DEFAULTS.workerMaxCachedWorkflows;
  // Temporal refuses more concurrent workflow tasks than cached workflows.
  return { maxActivities: v.TANDEM_WORKER_MAX_ACTIVITIES ?? DEFAULTS.workerMaxActivities, maxWatches: v.TANDEM_WORKER_MAX_WATCHES ?? DEFAULTS.workerMaxWatches, maxWorkflowTasks: Math.min(v.TANDEM_WORKER_MAX_WORKFLOW_TASKS ?? DEFAULTS.workerMaxWorkflowTasks, maxCachedWorkflows), maxCachedWorkflows };
}

// ---- audit log (audit/) ----------------------------------------------------------------------------
// TANDEM_AUDIT_LOG: the hash-chained JSONL file every external side effect is appended to (default
// <TANDEM_HOME>/audit.jsonl); TANDEM_AUDIT_OPERATOR: who the worker appends as (default user@host);
// TANDEM_AUDIT_KEY_FILE: the HMAC key the log is authenticated with, and beside it the log's anchor
// (default <TANDEM_HOME>/keys/audit.key, generated on a worker's first append). Keep it where those who
// can write the log cannot (audit/log.ts, docs/security.md).

function auditShape() {
  return {
    TANDEM_AUDIT_LOG: optional(text),
    TANDEM_AUDIT_KEY_FILE: optional(text),
    TANDEM_AUDIT_OPERATOR: optional(z.string().regex(/^[\x21-\x7e]{1,128}$/, 'must be 1-128 printable ASCII characters without spaces')),
  };
}

export interface AuditConfig {
  /** Absolute path of the log file. */
  file: string;
  operator?: string;
  /** Absolute path of the log's HMAC key (its anchor lives beside it). */
  keyFile: string;
}

function auditConfig(v: Parsed<ReturnType<typeof auditShape>> & { TANDEM_HOME?: string }, opts: LoadOptions): AuditConfig {
  const home = resolve(opts.cwd ?? process.cwd(), v.TANDEM_HOME ?? DEFAULTS.home);
  return { file: resolve(home, v.TANDEM_AUDIT_LOG ?? 'audit.jsonl'), operator: v.TANDEM_AUDIT_OPERATOR, keyFile: resolve(home, v.TANDEM_AUDIT_KEY_FILE ?? join('keys', 'audit.key')) };
}

/** `tandem audit` and workers: the log's path (TANDEM_AUDIT_LOG, relative to TANDEM_HOME or to `home`, a worker's own). */
export function loadAuditConfig(env: Env = process.env, opts: LoadOptions & { home?: string } = {}): AuditConfig {
  let out!: AuditConfig;
  parse({ TANDEM_HOME: cliShape.TANDEM_HOME, ...auditShape() }, env, (v) => (out = auditConfig(opts.home === undefined ? v : { ...v, TANDEM_HOME: opts.home }, opts)));
  return out;
}

// ---- observability (observe/) ----------------------------------------------------------------------
// TANDEM_METRICS_PORT: serve Prometheus metrics at http://TANDEM_METRICS_HOST:PORT/metrics (off when
// unset; TANDEM_METRICS_HOST defaults to 127.0.0.1, loopback). TANDEM_METRICS_SDK_PORT: the Temporal
// SDK's own metrics (Core's Prometheus exporter, a second endpoint because it is a server of its own;
// default PORT+1). TANDEM_LOG_FORMAT: text (default) or json; TANDEM_LOG_LEVEL: the lowest level logged.
// Tracing (observe/tracing.ts) takes OpenTelemetry's standard variables and is off unless one of
// OTEL_TRACES_EXPORTER=otlp, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set
// (OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true turn it off whatever else is set). Spans go as
// OTLP/HTTP JSON to the traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else
// OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else http://localhost:4318/v1/traces (the spec's default).
// OTEL_EXPORTER_OTLP_(TRACES_)HEADERS (key=value,… URL-encoded; secret), OTEL_SERVICE_NAME (default
// the entry point's: tandem-worker, tandem-cli); OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL, if set, must be
// http/json, the only encoding Tandem's exporter sends.


function observeShape() {
  const port = z.string().regex(/^\d{1,5}$/, 'must be a port number').transform(Number).pipe(z.number().int().min(1, 'must be 1-65535').max(65535, 'must be 1-65535'));
  return {
    TANDEM_METRICS_PORT: optional(port),
    TANDEM_METRICS_SDK_PORT: optional(port),
    // A host name or an IP literal (IPv6 without brackets), as node's listen() takes it.
    TANDEM_METRICS_HOST: optional(z.string().regex(/^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*|[0-9A-Fa-f:.]+)$/, 'must be a host name or an IP address, e.g. 127.0.0.1')),
    TANDEM_LOG_FORMAT: optional(z.enum(['text', 'json'], 'must be text or json')),
    TANDEM_LOG_LEVEL: optional(z.string().transform((l) => l.toUpperCase()).pipe(z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ').toLowerCase()}`))),
    OTEL_SDK_DISABLED: optional(z.string().transform((b) => b.toLowerCase()).pipe(z.enum(['true', 'false'], 'must be true or false'))),
    OTEL_TRACES_EXPORTER: optional(z.string().transform((l) => l.split(',').map((e) => e.trim().toLowerCase())).pipe(z.array(z.enum(['otlp', 'none'], 'must be otlp or none (the only trace exporter Tandem has)')))),
    OTEL_EXPORTER_OTLP_ENDPOINT: optional(httpUrl),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional(httpUrl),
    OTEL_EXPORTER_OTLP_PROTOCOL: optional(z.enum(['http/json'], 'must be http/json (Tandem exports OTLP over HTTP as JSON)')),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optional(z.enum(['http/json'], 'must be http/json (Tandem exports OTLP over HTTP as JSON)')),
    OTEL_EXPORTER_OTLP_HEADERS: optional(otlpHeaders),
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: optional(otlpHeaders),
    OTEL_SERVICE_NAME: optional(text),
  };
}

/** Where and as what spans are exported (observe/tracing.ts); set only when tracing is on. */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  endpoint: string;
  headers: Record<string, string>;
  /** OTEL_SERVICE_NAME; undefined: the entry point's own name. */
  serviceName?: string;
}

export interface ObserveConfig {
  /** Where /metrics is served; undefined: not served (`tandem dev` may still pick a free port). */
  metrics?: { host: string; port: number; sdkPort: number };
  /** The host a metrics endpoint binds to, configured or not (`tandem dev` uses it for its own). */
  metricsHost: string;
  logFormat: 'text' | 'json';
  /** TANDEM_LOG_LEVEL; undefined: the entry point's default (INFO for the worker, WARN for `tandem dev`). */
  logLevel?: (typeof LOG_LEVELS)[number];
  /** OpenTelemetry tracing; undefined: off (the default). */
  tracing?: TracingConfig;
}

function observeConfig(v: Partial<Parsed<ReturnType<typeof observeShape>>>, env: Env, issue: (i: ConfigIssue) => void): ObserveConfig {
  const host = v.TANDEM_METRICS_HOST ?? '127.0.0.1';
  let metrics: ObserveConfig['metrics'];
  if (v.TANDEM_METRICS_PORT !== undefined) {
    const sdkPort = v.TANDEM_METRICS_SDK_PORT ?? v.TANDEM_METRICS_PORT + 1;
    if (sdkPort === v.TANDEM_METRICS_PORT) issue({ source: source(env, 'TANDEM_METRICS_SDK_PORT'), path: '', message: `must differ from TANDEM_METRICS_PORT (both ${sdkPort})` });
    else if (sdkPort > 65535) issue({ source: source(env, 'TANDEM_METRICS_PORT'), path: '', message: 'is 65535: set TANDEM_METRICS_SDK_PORT too (the SDK\'s metrics default to the next port)' });
    metrics = { host, port: v.TANDEM_METRICS_PORT, sdkPort };
  } else if (v.TANDEM_METRICS_SDK_PORT !== undefined) {
    issue({ source: source(env, 'TANDEM_METRICS_SDK_PORT'), path: '', message: 'needs TANDEM_METRICS_PORT (the SDK\'s metrics are served beside Tandem\'s)' });
  }
  return { metrics, metricsHost: host, logFormat: v.TANDEM_LOG_FORMAT ?? 'text', logLevel: v.TANDEM_LOG_LEVEL, tracing: tracingConfig(v) };
}

function tracingConfig(v: Partial<Parsed<ReturnType<typeof observeShape>>>): TracingConfig | undefined {
  const exporters = v.OTEL_TRACES_EXPORTER ?? [];
  const on = exporters.includes('otlp') || v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined || v.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined;
  if (!on || exporters.includes('none') || v.OTEL_SDK_DISABLED === 'true') return undefined;
  const base = v.OTEL_EXPORTER_OTLP_ENDPOINT;
  const endpoint = v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : 'http://localhost:4318/v1/traces');
  return { endpoint, headers: { ...v.OTEL_EXPORTER_OTLP_HEADERS, ...v.OTEL_EXPORTER_OTLP_TRACES_HEADERS }, serviceName: v.OTEL_SERVICE_NAME };
}

/** The observability variables alone (the CLI's `--log-format` default; tests). */
export function loadObserveConfig(env: Env = process.env): ObserveConfig {
  let out!: ObserveConfig;
  parse(observeShape(), env, (v, issue) => (out = observeConfig(v, env, issue)));
  return out;
}

/**
 * Every secret value this process knows, for the logger to redact (observe/log.ts): the variables
 * marked secret above, the secrets a sites file names, the Slurm API credentials and the codec keys.
 */
export function secretValues(env: Env = process.env, config?: Pick<WorkerConfig, 'sites' | 'slurm' | 'codec' | 'connection' | 'oidc'>): string[] {
  const out = new Set<string>();
  for (const name of SECRET) if (env[name]) out.add(env[name]!);
  // A collector's API key is one header value among others: each value is redacted on its own too (and
  // a bearer token without its scheme). Not short ones ("gzip", a team name): keys are long, and a short
  // common word redacted would blank it in every line.
  for (const name of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    const headers = otlpHeaders.safeParse(env[name] ?? '');
    for (const v of headers.success ? Object.values(headers.data) : []) {
      const credential = /^(?:bearer|basic)\s+(\S+)$/i.exec(v)?.[1];
      for (const s of [v, credential]) if (s && s.length >= 8) out.add(s);
    }
  }
  for (const v of Object.values(config?.sites?.secrets ?? {})) out.add(v);
  const slurm = config?.slurm as { clientSecret?: string; token?: string } | undefined;
  if (slurm?.clientSecret) out.add(slurm.clientSecret);
  if (slurm?.token) out.add(slurm.token);
  if (config?.connection?.apiKey) out.add(config.connection.apiKey);
  if (config?.oidc?.clientSecret) out.add(config.oidc.clientSecret);
  for (const k of config?.codec?.keys ?? []) out.add(k.key.toString('base64'));
  return [...out];
}
