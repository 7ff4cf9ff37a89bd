// TandemClient: the typed entry point for data scientists. Specs are validated here, at the
// boundary, before any workflow starts.
import { Client, Connection, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { parsePipelineSpec, validatePipelineSpec } from '../contract/parse.js';
import { DEADLINE_COMPENSATION_MARGIN_MS, type PipelineSpec, type PipelineSpecInput, type StageName } from '../contract/pipeline.js';
import type { JobProgress } from '../contract/outcome.js';
import type { PipelineResult, PipelineStatus, TimelineEntry } from '../contract/status.js';
import { validateTuning, type PipelineTuning } from '../contract/tuning.js';
import type { ResumeInput } from '../workflows/pipeline.js';
import { SA_PIPELINE, SA_TENANT, TANDEM_SEARCH_ATTRIBUTES } from '../contract/search-attributes.js';
import { checkRunId } from '../contract/run-id.js';
import { DEFAULTS } from '../config/defaults.js';
import { loadClientConfig } from '../config/worker.js';

export const DEFAULT_TASK_QUEUE = DEFAULTS.taskQueue;

export interface TandemClientOptions {
  /** Default: TEMPORAL_ADDRESS, or 127.0.0.1:7233 (config/worker.ts). */
  address?: string;
  /** Default: TEMPORAL_NAMESPACE, or default. */
  namespace?: string;
  /** Default: tandem (the SDK does not follow TANDEM_TASK_QUEUE; the CLI passes it in). */
  taskQueue?: string;
  /** Reuse an existing Temporal client instead of connecting. */
  client?: Client;
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
}

export type ProgressEvent =
  | { type: 'timeline'; entry: TimelineEntry }
  | { type: 'progress'; stage: StageName; attempt: number; progress: JobProgress }
  | { type: 'done'; status: PipelineStatus };

/** Reads a pipeline spec file (YAML or JSON) and validates it; errors name the field and line. */
export async function loadPipelineSpec(path: string): Promise<PipelineSpec> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read spec ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  return parsePipelineSpec(text, path);
}

export class TandemClient {
  private searchAttributesReady = false;

  private constructor(
    readonly client: Client,
    readonly taskQueue: string,
    private readonly ownedConnection?: Connection,
  ) {}

  get namespace(): string {
    return this.client.options.namespace;
  }

  /** Registers Tandem's search attributes on servers that lack them (the dev server gets them at start). */
  async ensureSearchAttributes(): Promise<void> {
    if (this.searchAttributesReady) return;
    const { operatorService } = this.client.connection;
    const existing = await operatorService.listSearchAttributes({ namespace: this.namespace });
    const missing = TANDEM_SEARCH_ATTRIBUTES.filter((k) => !(k.name in (existing.customAttributes ?? {})));
    if (missing.length > 0) {
      await operatorService.addSearchAttributes({
        namespace: this.namespace,
        searchAttributes: Object.fromEntries(missing.map((k) => [k.name, 2 /* INDEXED_VALUE_TYPE_KEYWORD */])),
      });
    }
    this.searchAttributesReady = true;
  }

  static async connect(opts: TandemClientOptions = {}): Promise<TandemClient> {
    if (opts.client) return new TandemClient(opts.client, opts.taskQueue ?? DEFAULT_TASK_QUEUE);
    // The environment only fills in what the caller left out (a ConfigError names a bad variable).
    const env = opts.address !== undefined && opts.namespace !== undefined ? undefined : loadClientConfig();
    const address = opts.address ?? env!.address;
    let connection: Connection;
    try {
      connection = await Connection.connect({ address, connectTimeout: DEFAULTS.connectTimeoutMs });
    } catch (e) {
      throw new Error(`cannot reach the Temporal server at ${address} (${(e as Error).message}). Start one with \`npm run tandem -- dev\` or set TEMPORAL_ADDRESS.`);
    }
    const client = new Client({ connection, namespace: opts.namespace ?? env!.namespace });
    return new TandemClient(client, opts.taskQueue ?? DEFAULT_TASK_QUEUE, connection);
  }

  /** Validates and starts a pipeline. Nothing starts if the spec is invalid. */
  async launch(spec: PipelineSpecInput | PipelineSpec, opts: LaunchOptions = {}): Promise<PipelineHandle> {
    // The id names the run's directory under TANDEM_HOME: `--id ..` must not put it elsewhere.
    if (opts.id !== undefined) checkRunId(opts.id, 'id');
    const valid = validatePipelineSpec(spec);
    const trainRuntime = valid.stages.train.runtime;
    if (opts.tuning?.failover && trainRuntime !== 'slurm' && trainRuntime !== 'auto') {
      throw new Error(`failover moves training between Slurm sites, but stages.train.runtime is "${trainRuntime}"; set it to "slurm" (or "auto") or launch without failover`);
    }
    // The tuning's shape and timings (heartbeat timeout against the worker's heartbeat cadence, the
    // failover lease inside its grace window), checked before anything starts.
    if (opts.tuning !== undefined) validateTuning(opts.tuning, { heartbeatThrottleMs: DEFAULTS.heartbeatThrottleMs });
    const id = opts.id ?? `${valid.name}-${randomBytes(4).toString('hex')}`;
    let workflowExecutionTimeout: number | undefined;
    if (valid.deadline) {
      const left = Date.parse(valid.deadline) - Date.now();
      if (left <= 0) throw new Error(`deadline ${valid.deadline} is already in the past; set a later deadline or remove it`);
      // The run stops itself at the deadline and compensates; the server's timeout only backstops it.
      workflowExecutionTimeout = left + DEADLINE_COMPENSATION_MARGIN_MS;
    }
    await this.ensureSearchAttributes();
    const handle = await this.client.workflow.start('hybridPipeline', {
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
    return new PipelineHandle(handle);
  }

  /** A handle on an existing pipeline run; fails clearly when the id is unknown. */
  async get(id: string): Promise<PipelineHandle> {
    const handle = this.client.workflow.getHandle(id);
    try {
      await handle.describe();
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) throw new Error(`no pipeline run with id "${id}" in namespace ${this.client.options.namespace}`);
      throw e;
    }
    return new PipelineHandle(handle);
  }

  async close(): Promise<void> {
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

  /** Yields timeline entries as they happen, training progress as it changes, then the final status. */
  async *progress(pollMs = 500): AsyncGenerator<ProgressEvent> {
    let seen = 0;
    let lastStep = -1;
    for (;;) {
      const [status, timeline] = await Promise.all([this.status(), this.timeline()]);
      for (const entry of timeline.slice(seen)) yield { type: 'timeline', entry };
      seen = timeline.length;
      if (status.phase === 'completed' || status.phase === 'failed' || status.phase === 'cancelled') {
        // The query may run a moment before the workflow closes; wait for the close.
        await this.workflow.result().catch(() => undefined);
        yield { type: 'done', status: await this.status() };
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
