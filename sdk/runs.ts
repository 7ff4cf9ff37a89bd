// Operators' verbs over pipeline runs: list, show, retry in place, resume as a new run, export.
// (Replay lives in workers/replay.ts: it needs the worker's replayer.)
import { randomUUID, randomBytes } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { historyToJSON } from './history-json.js';
import type { temporal } from '@temporalio/proto';
import Long from 'long';
import { validatePipelineSpec } from '../contract/parse.js';
import { STAGES, type PipelineSpecInput, type StageName } from '../contract/pipeline.js';
import { SA_PIPELINE, SA_STAGE, SA_TENANT } from '../contract/search-attributes.js';
import { parseDuration } from '../contract/duration.js';
import { checkRunId } from '../contract/run-id.js';
import type { HybridPipelineInput } from '../workflows/pipeline.js';
import { describeExecution, listExecutions, listExecutionsPage, type ListedExecution } from './list.js';
import { analyseHistory, decodeHistoryPayloads, type RunReport } from './history.js';
import { codecProblem } from '../codec/problem.js';
import type { PipelineHandle, TandemClient } from './client.js';

export const RUN_STATUSES = { failed: 'Failed', running: 'Running', completed: 'Completed', cancelled: 'Canceled', terminated: 'Terminated', 'timed-out': 'TimedOut' } as const;
export type RunStatusFilter = keyof typeof RUN_STATUSES;
const PIPELINE = 'hybridPipeline';
const ARGO = 'argoWorkflow';
const WORKFLOW_TYPES = [PIPELINE, ARGO];

export interface RunSummary {
  id: string;
  runId: string;
  type: string;
  tenant?: string;
  pipeline?: string;
  status: string;
  stage?: string;
  startedAt: Date;
  closedAt?: Date;
  durationMs: number;
}

export interface RunFilter {
  status?: RunStatusFilter;
  tenant?: string;
  pipeline?: string;
  since?: string;
}

export class RunError extends Error {
  override name = 'RunError';
}

const quote = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** `since` is a duration back from now ("24h", "7d") or an ISO date. */
export function sinceToDate(since: string, now = Date.now()): Date {
  const ms = parseDuration(since);
  if (ms !== undefined) return new Date(now - ms);
  const d = new Date(since);
  if (Number.isNaN(d.getTime())) throw new RunError(`--since ${JSON.stringify(since)} is neither a duration (24h, 7d) nor a date (2026-11-01)`);
  return d;
}

export class Runs {
  constructor(private readonly tandem: TandemClient) {}

  private get client() {
    return this.tandem.client;
  }

  async list(opts: RunFilter & { limit?: number } = {}): Promise<RunSummary[]> {
    const out: RunSummary[] = [];
    for await (const info of listExecutions(this.client, this.query(opts))) {
      out.push(summary(info));
      if (out.length >= (opts.limit ?? 100)) break;
    }
    return out;
  }

  /**
   * One page of the listing, newest first, and an opaque token for the next page (the server's own
   * cursor, base64url: safe in a URL). A token the server cannot read is a RunError.
   */
  async listPage(opts: RunFilter & { pageSize?: number; pageToken?: string } = {}): Promise<{ runs: RunSummary[]; nextPageToken?: string }> {
    let token: Uint8Array | undefined;
    if (opts.pageToken) {
      if (!/^[A-Za-z0-9_-]+$/.test(opts.pageToken)) throw new RunError('the page token is malformed (it must be the one a listing gave)');
      token = Buffer.from(opts.pageToken, 'base64url');
    }
    try {
      const page = await listExecutionsPage(this.client, this.query(opts), { pageSize: opts.pageSize ?? 50, nextPageToken: token });
      return { runs: page.executions.map(summary), nextPageToken: page.nextPageToken ? Buffer.from(page.nextPageToken).toString('base64url') : undefined };
    } catch (e) {
      if (token && /token|cursor|invalid/i.test((e as Error).message)) throw new RunError(`the page token was refused by the server: ${(e as Error).message}`);
      throw e;
    }
  }

  private query(opts: RunFilter): string {
    const clauses = [`WorkflowType IN (${WORKFLOW_TYPES.map(quote).join(', ')})`];
    if (opts.status) {
      if (!(opts.status in RUN_STATUSES)) throw new RunError(`--status must be one of ${Object.keys(RUN_STATUSES).join(', ')}`);
      clauses.push(`ExecutionStatus = ${quote(RUN_STATUSES[opts.status])}`);
    }
    if (opts.tenant) clauses.push(`${SA_TENANT.name} = ${quote(opts.tenant)}`);
    if (opts.pipeline) clauses.push(`${SA_PIPELINE.name} = ${quote(opts.pipeline)}`);
    if (opts.since) clauses.push(`StartTime >= ${quote(sinceToDate(opts.since).toISOString())}`);
    return clauses.join(' AND ');
  }

  private async fetch(id: string): Promise<{ report: RunReport; history: temporal.api.history.v1.IHistory; runId: string; status: string }> {
    let desc;
    try {
      desc = await describeExecution(this.client, id); // (not handle.describe(): it decodes the memo)
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) throw new RunError(`no run with id "${id}" in namespace ${this.tandem.namespace} (see \`tandem runs list\`)`);
      throw e;
    }
    const history = await this.client.workflow.getHandle(id, desc.runId).fetchHistory();
    // Encrypted payloads (TANDEM_CODEC_*) are decoded with the client's codec before they are read.
    const { payloadConverter, payloadCodecs } = this.client.options.loadedDataConverter;
    const decoded = await decodeHistoryPayloads(history, payloadCodecs).catch((e: unknown) => {
      throw new RunError(`${id}: ${codecProblem(e) ?? (e as Error).message}`);
    });
    // The report reads what it can; a run whose input this client cannot read at all (encrypted, no
    // key) would come out as a skeleton of pending stages: said instead.
    const input = decoded.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    try {
      if (input) payloadConverter.fromPayload(input as never);
    } catch (e) {
      const problem = codecProblem(e);
      if (problem) throw new RunError(`${id}: ${problem}`);
    }
    const report = analyseHistory(id, decoded, payloadConverter);
    return { report, history, runId: desc.runId, status: desc.status };
  }

  /** The workflow type of a run, or a clear error for an unknown id. */
  async typeOf(id: string): Promise<string> {
    try {
      return (await describeExecution(this.client, id)).type;
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) throw new RunError(`no run with id "${id}" in namespace ${this.tandem.namespace} (see \`tandem runs list\`)`);
      throw e;
    }
  }

  /** The run's story from its history: stages, attempts, jobs, errors, compensations. */
  async show(id: string): Promise<RunReport & { runId: string }> {
    const { report, runId } = await this.fetch(id);
    return { ...report, runId };
  }

  /**
   * The run's history as the server stores it (payloads still encoded), as decoded proto objects: what
   * the replayer takes, with no JSON round trip in between.
   */
  async history(id: string): Promise<{ history: temporal.api.history.v1.IHistory; runId: string }> {
    let desc;
    try {
      desc = await describeExecution(this.client, id);
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) throw new RunError(`no run with id "${id}" in namespace ${this.tandem.namespace} (see \`tandem runs list\`)`);
      throw e;
    }
    return { history: await this.client.workflow.getHandle(id, desc.runId).fetchHistory(), runId: desc.runId };
  }

  /** The history in the JSON form of `temporal workflow show --output json` and the Web UI's export. */
  async export(id: string): Promise<string> {
    // As stored: encrypted payloads stay encrypted (replaying the file needs the keys, exporting does not).
    const { history } = await this.history(id);
    return JSON.stringify(JSON.parse(historyToJSON(history)), null, 1) + '\n';
  }

  /**
   * Retry in place: reset the run to just before the failed (or chosen) stage; stages before it keep
   * their recorded results and are not re-run. A stage whose completed effect the failure's saga undid
   * (a withdrawn checkpoint) is re-run too, since the reset run would otherwise count on it.
   */
  async retry(id: string, opts: { node?: string } = {}): Promise<{ id: string; runId: string; from: StageName; requested: StageName; resetEventId: number }> {
    const { report, runId, status } = await this.fetch(id);
    if (report.type === ARGO) throw new RunError(`${id} is an Argo run: retry it with \`tandem runs retry ${id}\` from the CLI or ArgoClient.retry (nodes, not stages)`);
    if (report.type !== PIPELINE) throw new RunError(`${id} is a ${report.type} workflow, not a Tandem pipeline run`);
    if (status === 'RUNNING') throw new RunError(`${id} is still running; retry applies to closed runs (cancel it first with \`tandem cancel ${id}\`)`);
    if (opts.node !== undefined && !(STAGES as readonly string[]).includes(opts.node)) throw new RunError(`--node must be one of ${STAGES.join(', ')} (got ${JSON.stringify(opts.node)})`);
    let requested = opts.node as StageName | undefined;
    if (!requested) {
      if (report.status === 'Completed') throw new RunError(`${id} completed successfully; nothing failed to retry (use --node <stage> to re-run from a stage)`);
      const failed = report.stages.find((s) => s.status === 'failed');
      if (!failed) throw new RunError(`${id} ended ${report.status} before any stage failed; start it again with \`tandem runs resume ${id}\``);
      requested = failed.name;
    }
    const undone = report.stages.filter((s) => s.status === 'compensated').map((s) => s.name);
    const from = STAGES.find((s) => s === requested || undone.includes(s)) as StageName;
    const first = report.activities.find((a) => a.stage === from && !a.compensation);
    if (!first) throw new RunError(`stage ${requested} never ran in ${id}; retry from a stage that ran (${report.stages.filter((s) => s.status !== 'pending').map((s) => s.name).join(', ') || 'none'})`);
    const res = await this.client.connection.workflowService.resetWorkflowExecution({
      namespace: this.tandem.namespace,
      workflowExecution: { workflowId: id, runId },
      workflowTaskFinishEventId: Long.fromNumber(first.workflowTaskCompletedEventId),
      reason: `tandem runs retry --node ${from}`,
      requestId: randomUUID(),
    });
    return { id, runId: res.runId ?? '', from, requested, resetEventId: first.workflowTaskCompletedEventId };
  }

  /**
   * Resume: a new run, linked to the original, that reuses the outputs of the stages that completed
   * (data set, trained checkpoints) and restores training from the newest valid checkpoint. A corrected
   * spec may be given (same pipeline name).
   */
  async resume(id: string, opts: { spec?: PipelineSpecInput; newId?: string } = {}): Promise<PipelineHandle> {
    // Before anything is read or started: the new id names a directory under TANDEM_HOME.
    if (opts.newId !== undefined) checkRunId(opts.newId, 'newId');
    const { report, status } = await this.fetch(id);
    if (report.type !== PIPELINE || !report.input) throw new RunError(`${id} is a ${report.type} workflow, not a Tandem pipeline run${report.type === ARGO ? ' (Argo runs: `tandem argo resubmit`)' : ''}`);
    if (status === 'RUNNING') throw new RunError(`${id} is still running; resume applies to closed runs`);
    if (report.status === 'Completed') throw new RunError(`${id} completed successfully; there is nothing to resume`);
    const original = report.input as HybridPipelineInput;
    const spec = opts.spec ? validatePipelineSpec(opts.spec, 'resume spec') : original.spec;
    if (spec.name !== original.spec.name) throw new RunError(`the resume spec is for pipeline "${spec.name}", but ${id} ran "${original.spec.name}"`);
    if (spec.tenant !== original.spec.tenant) throw new RunError(`the resume spec is for tenant "${spec.tenant}", but ${id} belongs to tenant "${original.spec.tenant}"; a run resumes only its own tenant's data and checkpoints`);
    const reuse = report.stages.filter((s) => (s.name === 'preprocess' || s.name === 'train') && (s.status === 'completed' || s.status === 'reused')).map((s) => s.name as 'preprocess' | 'train');
    return this.tandem.launch(spec, {
      id: opts.newId ?? `${id.replace(/-r[0-9a-f]{4}$/, '')}-r${randomBytes(2).toString('hex')}`,
      tuning: original.tuning,
      resume: { from: id, runKey: original.resume?.runKey ?? id, reuse },
    });
  }
}

function summary(info: ListedExecution): RunSummary {
  const started = info.startTime;
  const end = info.closeTime ?? new Date();
  return {
    id: info.workflowId,
    runId: info.runId,
    type: info.type,
    tenant: info.typedSearchAttributes.get(SA_TENANT),
    pipeline: info.typedSearchAttributes.get(SA_PIPELINE),
    status: info.status,
    stage: info.typedSearchAttributes.get(SA_STAGE),
    startedAt: started,
    closedAt: info.closeTime,
    durationMs: end.getTime() - started.getTime(),
  };
}
