// TandemClient: the typed entry point for data scientists. Specs are validated here, at the
// boundary, before any workflow starts.
import { tandemCommand } from './command-hint.js';
import { Client, Connection, WorkflowNotFoundError, type ClientPlugin, type TLSConfig, type WorkflowHandle } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { DEADLINE_COMPENSATION_MARGIN_MS, type PipelineSpec, type PipelineSpecInput, type StageName } from '../contract/pipeline.js';
import type { JobProgress } from '../contract/outcome.js';
import type { PipelineResult, PipelineStatus, TimelineEntry } from '../contract/status.js';
import { validateTuning, type PipelineTuning } from '../contract/tuning.js';
import type { ResumeInput } from '../workflows/pipeline.js';
import { SA_PIPELINE, SA_TENANT } from '../contract/search-attributes.js';
import { checkRunId } from '../contract/run-id.js';
import { TenantPolicyError, checkTenantPolicy, parseSpecUnderPolicy, validateSpecUnderPolicy, type TenantPolicy } from '../contract/tenant-policy.js';
import { loadTenantPolicyConfig } from '../config/worker.js';
import { chainMessages, isTransientGrpc } from '../contract/error-chain.js';
import { DEFAULTS } from '../config/defaults.js';
import { readInputAsync, readProblem } from '../config/input-file.js';
import { MAX_TEXT_BYTES } from '../contract/limits.js';
import { loadClientConfig, loadCodecConfig, type TemporalConnection } from '../config/worker.js';
import { clientDataConverter } from '../codec/index.js';
import type { DataConverter } from '@temporalio/common';
import { OidcApiKey, type ClientCredentials } from './oidc-token.js';
import { tracingClientInterceptors } from '../observe/tracing-active.js';
import { describeExecution } from './list.js';
import { registerSearchAttributes, SearchAttributesMissing, isMissingSearchAttribute, type SearchAttributesReport } from './search-attributes.js';

export const DEFAULT_TASK_QUEUE = DEFAULTS.taskQueue;
/** How many transient answers in a row `progress()` takes before it gives up (about a minute of polls under a loaded worker's query timeouts). */
export const PROGRESS_TRANSIENT_TRIES = 6;

/** Calls `query`, asking again after `waitMs` while the server's answer is transient, at most `PROGRESS_TRANSIENT_TRIES` times. */
export async function askAgainWhenTransient<T>(query: () => Promise<T>, waitMs: number, tries = PROGRESS_TRANSIENT_TRIES): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await query();
    } catch (e) {
      if (!isTransientGrpc(e) || i >= tries) throw e;
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}

export interface TandemClientOptions {
  /** Default: TEMPORAL_ADDRESS, or 127.0.0.1:7233 (config/worker.ts). */
  address?: string;
  /** Default: TEMPORAL_NAMESPACE, or default. */
  namespace?: string;
  /** Default: tandem (the SDK does not follow TANDEM_TASK_QUEUE; the CLI passes it in). */
  taskQueue?: string;
  /**
   * A temporal.toml profile (Temporal's environment configuration); default TEMPORAL_PROFILE, then
   * "default". The profile and TEMPORAL_* variables give the address, namespace, TLS, API key and
   * gRPC metadata; the options below override them.
   */
  profile?: string;
  /** The temporal.toml to read the profile from (default TEMPORAL_CONFIG_FILE, then ~/.config/temporalio/temporal.toml). */
  configFile?: string;
  /** TLS: `true` for the system's roots, or the server CA, server name and mTLS client certificate. */
  tls?: TLSConfig | boolean;
  /** An API key (Temporal Cloud, or a server with an authorizer): sent as a bearer token. */
  apiKey?: string;
  /**
   * OIDC client credentials (default TEMPORAL_OIDC_*): the API key is a token from this grant, refreshed
   * ahead of expiry while the client is open (docs/authorization.md). An explicit `apiKey` wins.
   */
  oidc?: ClientCredentials;
  /** Extra gRPC metadata on every call. */
  metadata?: Record<string, string>;
  /** Client plugins, e.g. the TandemPlugin (payload codec) shared with the worker. */
  plugins?: ClientPlugin[];
  /** Reuse an existing Temporal client instead of connecting. */
  client?: Client;
  /** Payload encryption (codec/): default the keys of TANDEM_CODEC_KEYS_FILE / TANDEM_CODEC_KEY, if any. */
  dataConverter?: DataConverter;
}

export interface LaunchOptions {
  /** Workflow id; defaults to <pipeline name>-<random>. */
  id?: string;
  tuning?: PipelineTuning;
  /** Continue another run (see Runs.resume). */
  resume?: ResumeInput;
  /** Launch once per id: a running run with this id is returned instead of starting another, and a
   *  closed one makes launch throw WorkflowExecutionAlreadyStartedError instead of running it again
   *  (Temporal's USE_EXISTING conflict and REJECT_DUPLICATE reuse policies; the Argo executor plugin). */
  once?: boolean;
  /** The tenant policy the launch must satisfy (contract/tenant-policy.ts); default TANDEM_TENANT_POLICY's file, if set; null: none. */
  tenantPolicy?: TenantPolicy | null;
}

export type ProgressEvent =
  | { type: 'timeline'; entry: TimelineEntry }
  | { type: 'progress'; stage: StageName; attempt: number; progress: JobProgress }
  | { type: 'done'; status: PipelineStatus };

/** Reads a pipeline spec file (YAML or JSON) and validates it; errors name the field and line. */
export async function loadPipelineSpec(path: string): Promise<PipelineSpec> {
  let text: string;
  try {
    text = (await readInputAsync(path, MAX_TEXT_BYTES)).toString('utf8');
  } catch (e) {
    throw new Error(`cannot read spec ${path}: ${readProblem(e)}`);
  }
  refuseArgoManifest(text, path);
  // Variables the spec's deny-list refuses pass when TANDEM_TENANT_POLICY lets the spec's tenant set them.
  return parseSpecUnderPolicy(text, loadTenantPolicyConfig()?.parsed, path);
}

/**
 * An Argo Workflows manifest is not a pipeline spec: say so, and where it goes, rather than list the
 * spec fields it lacks. Checked on the text already read, so a pipe (`<(...)`) is read once.
 */
function refuseArgoManifest(text: string, path: string): void {
  const api = /^apiVersion:\s*["']?(argoproj\.io\/[^\s"']+)/m.exec(text)?.[1];
  if (!api) return;
  const kind = /^kind:\s*["']?(\w+)/m.exec(text)?.[1] ?? 'Workflow';
  throw new Error(`${path} is an Argo Workflows manifest (apiVersion ${api}, kind ${kind}), not a Tandem pipeline spec: check it with \`tandem argo lint ${path}\` and run it with \`tandem argo submit ${path}\``);
}


export class TandemClient {
  private constructor(
    readonly client: Client,
    readonly taskQueue: string,
    private readonly ownedConnection?: Connection,
    private readonly tokens?: OidcApiKey,
  ) {}

  get namespace(): string {
    return this.client.options.namespace;
  }

  /**
   * Registers Tandem's search attributes in this namespace (`tandem setup`). Servers that refuse it
   * (Temporal Cloud manages them in its own console and API) get a SearchAttributesMissing error
   * that says what to register there.
   */
  async setup(): Promise<SearchAttributesReport> {
    return registerSearchAttributes(this.client, this.namespace);
  }

  static async connect(opts: TandemClientOptions = {}): Promise<TandemClient> {
    if (opts.client) return new TandemClient(opts.client, opts.taskQueue ?? DEFAULT_TASK_QUEUE);
    // The environment and the profile fill in what the caller left out (a ConfigError names a bad
    // variable or profile); explicit options win.
    const env = loadClientConfig(undefined, { profile: opts.profile, configFile: opts.configFile });
    const conn: TemporalConnection = { ...env.connection, ...(opts.address !== undefined ? { address: opts.address } : {}) };
    if (opts.tls !== undefined) conn.tls = opts.tls;
    if (opts.apiKey !== undefined) conn.apiKey = opts.apiKey;
    if (opts.metadata !== undefined) conn.metadata = { ...conn.metadata, ...opts.metadata };
    const oidc = opts.apiKey === undefined ? (opts.oidc ?? env.oidc) : undefined;
    const tokens = oidc ? new OidcApiKey(oidc) : undefined;
    // The first token before connecting; the connection then reads the current one on every call.
    if (tokens) await tokens.start().catch((e: Error) => {
      // Origin and path only: a URL's user-info or query would be credentials.
      const u = new URL(oidc!.tokenUrl);
      throw new Error(`cannot get a Temporal API key from the OIDC token endpoint ${u.origin}${u.pathname} (${e.message})`);
    });
    let connection: Connection;
    try {
      connection = await Connection.connect({ ...conn, ...(tokens ? { apiKey: () => tokens.current() } : {}), connectTimeout: DEFAULTS.connectTimeoutMs });
    } catch (e) {
      tokens?.stop();
      throw new Error(`cannot reach the Temporal server at ${conn.address}${conn.tls ? ' (TLS)' : ''} (${chainMessages(e)}). Start one with \`${tandemCommand('dev')}\`, or set TEMPORAL_ADDRESS (and TEMPORAL_TLS_*, TEMPORAL_API_KEY) or a temporal.toml profile.`);
    }
    // Tracing (observe/tracing.ts), when this process started it: a StartWorkflow span parents the run's
    // spans. The TandemPlugin adds the same interceptor itself.
    const interceptors = opts.plugins?.some((p) => p.name === 'tandem') ? undefined : { workflow: tracingClientInterceptors() };
    const client = new Client({ connection, namespace: opts.namespace ?? env.namespace, plugins: opts.plugins, interceptors, dataConverter: opts.dataConverter ?? clientDataConverter(loadCodecConfig()) });
    return new TandemClient(client, opts.taskQueue ?? DEFAULT_TASK_QUEUE, connection, tokens);
  }

  /** Validates and starts a pipeline. Nothing starts if the spec is invalid. */
  async launch(spec: PipelineSpecInput | PipelineSpec, opts: LaunchOptions = {}): Promise<PipelineHandle> {
    // The id names the run's directory under TANDEM_HOME: `--id ..` must not put it elsewhere.
    if (opts.id !== undefined) checkRunId(opts.id, 'id');
    // The tenant policy (TANDEM_TENANT_POLICY) refuses before anything starts, naming every field; the
    // worker checks again (activities/tenant-policy.ts) for runs started without the SDK.
    const policy = opts.tenantPolicy === undefined ? loadTenantPolicyConfig()?.parsed : (opts.tenantPolicy ?? undefined);
    const valid = validateSpecUnderPolicy(spec, policy);
    const refused = policy ? checkTenantPolicy(valid, policy, { tuning: opts.tuning }) : [];
    if (refused.length) throw new TenantPolicyError(refused);
    const trainRuntime = valid.stages.train.runtime;
    if (opts.tuning?.failover && trainRuntime !== 'slurm' && trainRuntime !== 'auto') {
      throw new Error(`failover moves training between Slurm sites, but stages.train.runtime is "${trainRuntime}"; set it to "slurm" (or "auto") or launch without failover`);
    }
    // The tuning's shape and timings (heartbeat timeout against the worker's heartbeat cadence, the
    // failover lease inside its grace window), checked before anything starts.
    if (opts.tuning !== undefined) validateTuning(opts.tuning, { heartbeatThrottleMs: DEFAULTS.heartbeatThrottleMs });
    // A resumed run reuses another run's data set and checkpoints: only its own tenant's.
    if (opts.resume) await this.checkResumeOwner(valid.tenant, opts.resume);
    const id = opts.id ?? `${valid.name}-${randomBytes(4).toString('hex')}`;
    let workflowExecutionTimeout: number | undefined;
    if (valid.deadline) {
      const left = Date.parse(valid.deadline) - Date.now();
      if (left <= 0) throw new Error(`deadline ${valid.deadline} is already in the past; set a later deadline or remove it`);
      // The run stops itself at the deadline and compensates; the server's timeout only backstops it.
      workflowExecutionTimeout = left + DEADLINE_COMPENSATION_MARGIN_MS;
    }
    const start = () => this.client.workflow.start('hybridPipeline', {
      taskQueue: this.taskQueue,
      workflowId: id,
      args: [{ spec: valid, tuning: opts.tuning, resume: opts.resume }],
      workflowExecutionTimeout,
      typedSearchAttributes: [
        { key: SA_TENANT, value: valid.tenant },
        { key: SA_PIPELINE, value: valid.name },
      ],
      memo: { tenant: valid.tenant, pipeline: valid.name, qos: valid.qos, ...(opts.resume ? { resumedFrom: opts.resume.from } : {}) },
      ...(opts.once ? { workflowIdConflictPolicy: 'USE_EXISTING' as const, workflowIdReusePolicy: 'REJECT_DUPLICATE' as const } : {}),
    });
    // Search attributes are registered once per namespace (`tandem setup`), not on every launch. A
    // namespace that lacks them gets them here once, where the server permits; otherwise the error
    // says how to register them.
    try {
      return new PipelineHandle(await start());
    } catch (e) {
      if (!isMissingSearchAttribute(e)) throw e;
      try {
        await this.setup();
      } catch (setupError) {
        if (setupError instanceof SearchAttributesMissing) throw setupError;
        throw new SearchAttributesMissing(this.namespace, (setupError as Error).message);
      }
      return new PipelineHandle(await start());
    }
  }

  /**
   * The run resumed from, and the run whose directory (run key) is reused, must belong to `tenant`:
   * their tenant is the TandemTenant search attribute the server recorded at their start.
   */
  private async checkResumeOwner(tenant: string, resume: ResumeInput): Promise<void> {
    checkRunId(resume.runKey, 'resume.runKey');
    for (const id of new Set([resume.from, resume.runKey])) {
      let owner: string | undefined;
      try {
        owner = (await describeExecution(this.client, id)).typedSearchAttributes.get(SA_TENANT);
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) throw new Error(`resume: no run with id "${id}" in namespace ${this.namespace}`);
        throw e;
      }
      if (owner !== tenant) throw new Error(`resume: run ${id} belongs to tenant ${owner ?? '(none recorded)'}, not ${tenant}; a run resumes only its own tenant's data and checkpoints`);
    }
  }

  /** A handle on an existing pipeline run; fails clearly when the id is unknown. */
  async get(id: string): Promise<PipelineHandle> {
    const handle = this.client.workflow.getHandle(id);
    try {
      await describeExecution(this.client, id); // (not handle.describe(): it decodes the memo, which a client without the key cannot)
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) throw new Error(`no pipeline run with id "${id}" in namespace ${this.client.options.namespace}`);
      throw e;
    }
    return new PipelineHandle(handle);
  }

  async close(): Promise<void> {
    this.tokens?.stop();
    await this.ownedConnection?.close();
  }
}

export class PipelineHandle {
  constructor(readonly workflow: WorkflowHandle) {}

  get id(): string {
    return this.workflow.workflowId;
  }

  status(): Promise<PipelineStatus> {
    return this.workflow.query<PipelineStatus>('status');
  }

  timeline(): Promise<TimelineEntry[]> {
    return this.workflow.query<TimelineEntry[]>('timeline');
  }

  result(): Promise<PipelineResult> {
    return this.workflow.result() as Promise<PipelineResult>;
  }

  async cancel(): Promise<void> {
    await this.workflow.cancel();
  }

  /** Live training progress: the heartbeat of the job-watching activity, read from the server. */
  async liveProgress(): Promise<{ attempt: number; progress: JobProgress } | undefined> {
    const desc = await this.workflow.describe();
    const converter = this.workflow.client.options.loadedDataConverter.payloadConverter;
    for (const act of desc.raw.pendingActivities ?? []) {
      if (act.activityType?.name !== 'awaitJob') continue;
      const payload = act.heartbeatDetails?.payloads?.[0];
      if (!payload) continue;
      const details = converter.fromPayload(payload) as { progress?: JobProgress };
      if (details.progress) return { attempt: act.attempt ?? 1, progress: details.progress };
    }
    return undefined;
  }

  /**
   * Yields timeline entries as they happen, training progress as it changes, then the final status.
   * A query that no worker answered in time, or a frontend that is briefly away, is asked again on the
   * next poll: a busy worker is not the end of the run. Past `PROGRESS_TRANSIENT_TRIES` such answers in
   * a row the last one is thrown, so a stream never waits silently on a server that is gone.
   */
  async *progress(pollMs = 500): AsyncGenerator<ProgressEvent> {
    const ask = <T>(query: () => Promise<T>) => askAgainWhenTransient(query, pollMs);
    let seen = 0;
    let lastStep = -1;
    for (;;) {
      const [status, timeline] = await ask(() => Promise.all([this.status(), this.timeline()]));
      for (const entry of timeline.slice(seen)) yield { type: 'timeline', entry };
      seen = timeline.length;
      if (status.phase === 'completed' || status.phase === 'failed' || status.phase === 'cancelled') {
        // The query may run a moment before the workflow closes; wait for the close.
        await this.workflow.result().catch(() => undefined);
        yield { type: 'done', status: await ask(() => this.status()) };
        return;
      }
      if (status.stage === 'train') {
        const live = await this.liveProgress().catch(() => undefined);
        if (live && live.progress.step !== lastStep) {
          lastStep = live.progress.step;
          yield { type: 'progress', stage: 'train', attempt: status.stages.train.attempts, progress: live.progress };
        }
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}
