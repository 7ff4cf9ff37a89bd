// Client side of `tandem argo`: lint → resolve → start the interpreter workflow; list, get, logs,
// retry, resubmit, resume, stop. Nothing starts when validation fails (ArgoValidationError).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection, ScheduleOverlapPolicy, type ClientPlugin, type WorkflowHandle } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { ArgoValidationError, type Json } from './lint/load.js';
import { Library, lintFile, lintText, type LintResult } from './lint/validate.js';
import { runInput, workflowName } from './resolve.js';
import type { ArgoRunInput, ArgoStatus } from './lang/types.js';
import { planRetry, type RetryPlan } from './retry.js';
import { mergeSlices, offloadedStatusFile } from './slices.js';
import { DEFAULTS } from '../config/defaults.js';
import { ARGO_WORKFLOW_TASK_TIMEOUT } from '../contract/tuning.js';
import type { TemporalConnection } from '../config/worker.js';
import { describeExecution, listExecutions } from '../sdk/list.js';

export const SHIPPED_TEMPLATES = fileURLToPath(new URL('../templates/argo', import.meta.url));
export const ARGO_WORKFLOW_TYPE = 'argoWorkflow';
/** Search attribute-free tagging: ids carry this prefix so `list` can find Argo runs. */
export const ID_PREFIX = 'argo-';

export function templateLibrary(dirs: string[] = []): Library {
  const lib = new Library();
  for (const d of [SHIPPED_TEMPLATES, ...dirs]) if (existsSync(d)) lib.addDirectory(d);
  return lib;
}

export interface Prepared {
  lint: LintResult;
  doc: Json;
  library: Library;
}

type PrepareOptions = { parameters?: Record<string, string>; templateDirs?: string[]; text?: string };

/**
 * Lints a file (or text) and returns every Workflow and CronWorkflow in it, in file order (as
 * `argo submit` submits each document of a file); throws ArgoValidationError, before anything starts,
 * when any document has an issue or there is nothing to submit.
 */
export function prepareAll(file: string, opts: PrepareOptions = {}): Prepared[] {
  const library = templateLibrary(opts.templateDirs);
  const lint = opts.text !== undefined ? lintText(opts.text, file, { library, parameters: opts.parameters, submit: true }) : lintFile(file, { library, parameters: opts.parameters, submit: true });
  if (lint.issues.length) throw new ArgoValidationError(lint.issues);
  const runnable = lint.documents.filter((d) => d.kind === 'Workflow' || d.kind === 'CronWorkflow');
  if (runnable.length === 0) {
    throw new ArgoValidationError([{ source: file, path: '', message: `expected a Workflow or CronWorkflow to submit, found none${lint.documents.length ? ` (${lint.documents.map((d) => d.kind).join(', ')})` : ''}` }]);
  }
  return runnable.map((d) => ({ lint, doc: d.value, library }));
}

/** Lints a file (or text) and returns its one runnable document; throws ArgoValidationError. */
export function prepare(file: string, opts: PrepareOptions = {}): Prepared {
  const all = prepareAll(file, opts);
  if (all.length !== 1) {
    throw new ArgoValidationError([{ source: file, path: '', message: `expected exactly one Workflow or CronWorkflow, found ${all.length} (${all.map((p) => p.doc.kind).join(', ')})` }]);
  }
  return all[0]!;
}

export class ArgoClient {
  private constructor(
    private readonly closer: () => Promise<void>,
    readonly client: Client,
    readonly taskQueue: string,
    /** The workers' home, where child workflows of large runs keep their status (argo/slices.ts); without it they are queried. */
    readonly home?: string,
  ) {}

  /**
   * Over a client someone else connected (the CLI hands it the SDK's: TLS, refreshed OIDC API key,
   * codec, tracing all set up once); `close` is how that owner closes it.
   */
  static over(client: Client, taskQueue: string, close: () => Promise<void>, opts: { home?: string } = {}): ArgoClient {
    return new ArgoClient(close, client, taskQueue, opts.home);
  }

  /** `connection` carries TLS, API key and metadata (config/worker.ts, from TEMPORAL_* and temporal.toml). */
  /** `plugins`: client plugins such as the TandemPlugin (its payload codec must match the workers'). */
  static async connect(opts: { address: string; namespace?: string; taskQueue: string; connection?: Omit<TemporalConnection, 'address'>; plugins?: ClientPlugin[]; dataConverter?: DataConverter; home?: string }): Promise<ArgoClient> {
    const connection = await Connection.connect({ ...opts.connection, address: opts.address });
    return new ArgoClient(() => connection.close(), new Client({ connection, namespace: opts.namespace ?? DEFAULTS.namespace, plugins: opts.plugins, dataConverter: opts.dataConverter }), opts.taskQueue, opts.home);
  }

  close(): Promise<void> {
    return this.closer();
  }

  /** Starts a Workflow (or a CronWorkflow's schedule); returns the run's id (its Argo name). */
  async submit(p: Prepared, opts: { parameters?: Record<string, string>; name?: string; artifactRoot?: string } = {}): Promise<{ id: string; schedule?: boolean }> {
    const suffix = randomBytes(3).toString('hex').slice(0, 5);
    const name = opts.name ?? workflowName(p.doc, suffix);
    const input = runInput(p.doc, p.library, { parameters: opts.parameters, name, artifactRoot: opts.artifactRoot });
    if (p.doc.kind === 'CronWorkflow') {
      await this.schedule(p.doc, input, name);
      return { id: name, schedule: true };
    }
    await this.client.workflow.start(ARGO_WORKFLOW_TYPE, { taskQueue: this.taskQueue, workflowTaskTimeout: ARGO_WORKFLOW_TASK_TIMEOUT, workflowId: `${ID_PREFIX}${name}`, args: [input], memo: { argoName: name, kind: 'Workflow' } });
    return { id: name };
  }

  /** CronWorkflow → a Temporal Schedule: cron strings, timezone, concurrencyPolicy, suspend. */
  private async schedule(doc: Json, input: ArgoRunInput, name: string): Promise<void> {
    const spec = doc.spec as Json;
    const schedules = [...(Array.isArray(spec.schedules) ? (spec.schedules as string[]) : []), ...(typeof spec.schedule === 'string' ? [spec.schedule] : [])];
    const overlap = spec.concurrencyPolicy === 'Forbid' ? ScheduleOverlapPolicy.SKIP : spec.concurrencyPolicy === 'Replace' ? ScheduleOverlapPolicy.CANCEL_OTHER : ScheduleOverlapPolicy.ALLOW_ALL;
    await this.client.schedule.create({
      scheduleId: `${ID_PREFIX}cron-${name}`,
      spec: { cronExpressions: schedules, timezone: typeof spec.timezone === 'string' ? spec.timezone : undefined },
      policies: { overlap },
      state: { paused: spec.suspend === true },
      action: { type: 'startWorkflow', workflowType: ARGO_WORKFLOW_TYPE, taskQueue: this.taskQueue, workflowTaskTimeout: ARGO_WORKFLOW_TASK_TIMEOUT, workflowId: `${ID_PREFIX}${name}`, args: [input], memo: { argoName: name, kind: 'CronWorkflow' } },
    });
  }

  handle(name: string): WorkflowHandle {
    return this.client.workflow.getHandle(name.startsWith(ID_PREFIX) ? name : `${ID_PREFIX}${name}`);
  }

  /** The run's node status, its child workflows' nodes merged in (argo/slices.ts). */
  async status(name: string): Promise<ArgoStatus> {
    return mergeSlices(await this.handle(name).query<ArgoStatus>('argo.status'), (id) => this.sliceStatus(id));
  }

  /** Waits for the run to end and returns its final status (the workflow's result, its children's nodes merged in). */
  async wait(name: string): Promise<ArgoStatus> {
    return mergeSlices((await this.handle(name).result()) as ArgoStatus, (id) => this.sliceStatus(id));
  }

  /** A child workflow's status: kept in the run store once it ended, else (running, or no shared home) its query. */
  private async sliceStatus(workflowId: string): Promise<ArgoStatus | undefined> {
    if (this.home) {
      const text = await readFile(offloadedStatusFile(this.home, workflowId), 'utf8').catch(() => undefined);
      if (text !== undefined) return JSON.parse(text) as ArgoStatus;
    }
    return this.client.workflow.getHandle(workflowId).query<ArgoStatus>('argo.status');
  }

  /**
   * The Argo workflows, newest first, each with Argo's phase: a run that completed in Temporal may have
   * Failed or Errored in Argo (the interpreter returns the final status rather than failing), so a
   * completed run's phase is read from its result; a running one is Running; otherwise Temporal's
   * close status (TERMINATED, CANCELED, TIMED_OUT, FAILED) is shown as it is.
   */
  async list(): Promise<{ name: string; status: string; startTime: Date; closeTime?: Date }[]> {
    const out: { name: string; runId: string; status: string; startTime: Date; closeTime?: Date }[] = [];
    for await (const w of listExecutions(this.client, `WorkflowType = '${ARGO_WORKFLOW_TYPE}'`)) {
      out.push({ name: w.workflowId.replace(ID_PREFIX, ''), runId: w.runId, status: w.status, startTime: w.startTime, closeTime: w.closeTime });
      if (out.length >= 200) break;
    }
    // Each row's own execution (a retried workflow's older run shares its id with the newer one, whose
    // result may still be pending), a few at a time.
    const completed = out.filter((w) => w.status === 'COMPLETED');
    for (const w of out) if (w.status === 'RUNNING') w.status = 'Running';
    for (let i = 0; i < completed.length; i += 16) {
      await Promise.all(
        completed.slice(i, i + 16).map(async (w) => {
          const phase = await this.client.workflow
            .getHandle(`${ID_PREFIX}${w.name}`, w.runId, { followRuns: false })
            .result()
            .then((r) => (r as ArgoStatus | undefined)?.phase)
            .catch(() => undefined);
          if (phase) w.status = phase;
        }),
      );
    }
    return out.map(({ runId: _runId, ...w }) => w);
    return out;
  }

  async input(name: string): Promise<ArgoRunInput> {
    const h = this.handle(name);
    const history = await h.fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const payload = started?.input?.payloads?.[0];
    if (!payload?.data) throw new Error(`cannot read the input of ${name}`);
    return JSON.parse(Buffer.from(payload.data).toString('utf8')) as ArgoRunInput;
  }

  /** Runs the same resolved workflow again under a new name (Argo's resubmit). */
  async resubmit(name: string): Promise<string> {
    const input = await this.input(name);
    const base = input.name.replace(/-[a-z0-9]{5}$/, '');
    const next = `${base}-${randomBytes(3).toString('hex').slice(0, 5)}`;
    await this.client.workflow.start(ARGO_WORKFLOW_TYPE, { taskQueue: this.taskQueue, workflowTaskTimeout: ARGO_WORKFLOW_TASK_TIMEOUT, workflowId: `${ID_PREFIX}${next}`, args: [{ ...input, name: next }], memo: { argoName: next, kind: 'Workflow' } });
    return next;
  }

  /**
   * Argo's retry: the same name again once the previous attempt has ended; its successful nodes are
   * reused and only failed ones (plus, with restartSuccessful, the selected nodes, their DAG
   * dependencies and what follows them) run again.
   */
  async retry(name: string, opts: { restartSuccessful?: boolean; selector?: string } = {}): Promise<{ name: string; plan: RetryPlan }> {
    const input = await this.input(name);
    const desc = await describeExecution(this.client, this.handle(name).workflowId);
    if (desc.status === 'RUNNING') throw new Error(`${name} is still running; retry applies to finished runs (stop it with \`tandem argo stop ${name}\`)`);
    const prev = await this.wait(name).catch(() => undefined);
    if (!prev) throw new Error(`${name} ended ${desc.status} without a final status; resubmit it instead (\`tandem argo resubmit ${name}\`)`);
    if (prev.phase === 'Succeeded' && !opts.restartSuccessful) throw new Error(`${name} succeeded; nothing failed to retry (use --restart-successful --selector displayName=<node>)`);
    const plan = planRetry(prev, input.spec as Record<string, unknown>, opts);
    await this.client.workflow.start(ARGO_WORKFLOW_TYPE, { taskQueue: this.taskQueue, workflowTaskTimeout: ARGO_WORKFLOW_TASK_TIMEOUT, workflowId: `${ID_PREFIX}${name}`, args: [{ ...input, reuse: plan.reuse }], workflowIdReusePolicy: 'ALLOW_DUPLICATE', memo: { argoName: name, kind: 'Workflow' } });
    return { name, plan };
  }

  /**
   * Resumes the run's suspended nodes (those whose name contains `node`), as Argo's ResumeWorkflow and
   * `argo node set` do: refused when a node would resume with a `valueFrom.supplied` output that has
   * neither a value here nor a default, or when a parameter names an output the node does not supply.
   */
  async resume(name: string, node?: string, parameters?: Record<string, string>): Promise<void> {
    const [st, input] = await Promise.all([this.status(name), this.input(name)]);
    const templates = new Map(((input.spec.templates ?? []) as Record<string, unknown>[]).map((t) => [String(t.name), t]));
    for (const n of Object.values(st.nodes)) {
      if (n.type !== 'Suspend' || n.phase !== 'Running' || (node && !n.name.includes(node))) continue;
      const outs = (((templates.get(n.templateName ?? '')?.outputs ?? {}) as Record<string, unknown>).parameters ?? []) as { name?: unknown; valueFrom?: { supplied?: unknown; default?: unknown } }[];
      const supplied = outs.filter((p) => p.valueFrom?.supplied !== undefined);
      for (const k of Object.keys(parameters ?? {})) if (!supplied.some((p) => String(p.name) === k)) throw new Error(`node is not expecting output parameter '${k}'`);
      const missing = supplied.find((p) => parameters?.[String(p.name)] === undefined && p.valueFrom?.default === undefined);
      if (missing) throw new Error(`raw output parameter '${String(missing.name)}' has not been set and does not have a default value`);
    }
    await this.handle(name).signal('argo.resume', { node, parameters });
  }

  async stop(name: string, message?: string): Promise<void> {
    await this.handle(name).signal('argo.stop', { message });
  }
}

/** Where a pod's output lives on a local worker (`tandem argo logs`). */
export function localJobDir(home: string, jobName: string): string {
  return join(home, 'jobs', jobName);
}
