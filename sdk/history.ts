// Reads a pipeline run's story from its Temporal history: which stage ran which activity, with what
// inputs, results and failures. History is authoritative and needs no worker, so operators can
// inspect runs whose workers are gone.
import type { Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { PayloadCodec, PayloadConverter } from '@temporalio/common';
import type { JobRef, JobStatus } from '../contract/outcome.js';
import type { StageName } from '../contract/pipeline.js';
import type { HybridPipelineInput } from '../workflows/pipeline.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type History = temporal.api.history.v1.IHistory;

/**
 * The history with every payload decoded by `codecs` (the client's, e.g. the AES-GCM codec), for
 * reading it: `fetchHistory()` returns payloads as the server stores them. Payloads a codec does not
 * recognise pass through it unchanged; the argument is not modified.
 */
export async function decodeHistoryPayloads(history: History, codecs: readonly PayloadCodec[]): Promise<History> {
  if (!codecs.length) return history;
  const isPayload = (v: unknown): v is Payload => !!v && typeof v === 'object' && 'metadata' in v && ('data' in v || Object.keys(v).length === 1);
  const walk = async (v: unknown): Promise<unknown> => {
    if (Array.isArray(v)) return Promise.all(v.map(walk));
    if (!v || typeof v !== 'object' || v instanceof Uint8Array) return v;
    // int64 fields (event times, ids) are Long objects: copied field by field they would lose their
    // prototype, and Number() of them would be NaN (every date in `runs show` "Invalid time value").
    if (typeof (v as { toNumber?: unknown }).toNumber === 'function') return v;
    if (isPayload(v)) {
      let out: Payload[] = [v];
      for (const c of [...codecs].reverse()) out = await c.decode(out);
      return out[0];
    }
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = await walk(x);
    return o;
  };
  return (await walk(history)) as History;
}

/** Activities that exist only to undo a stage's effects. */
const COMPENSATIONS: Record<string, StageName | undefined> = { withdrawCheckpoint: 'checkpoint', undeployModel: 'deploy' };
const STAGE_OF_ACTIVITY: Record<string, StageName> = { catalogCheckpoint: 'checkpoint', withdrawCheckpoint: 'checkpoint', deployModel: 'deploy', awaitReadiness: 'deploy', undeployModel: 'deploy' };

export interface ActivityRecord {
  type: string;
  stage?: StageName;
  scheduledEventId: number;
  /** The workflow-task-completed event that scheduled it: the reset point to re-run from here. */
  workflowTaskCompletedEventId: number;
  scheduledAt?: Date;
  closedAt?: Date;
  attempt: number;
  outcome: 'running' | 'completed' | 'failed' | 'timed-out' | 'cancelled';
  input?: unknown;
  result?: unknown;
  error?: string;
  errorType?: string;
  compensation: boolean;
}

export interface StageReport {
  name: StageName;
  status: 'pending' | 'running' | 'completed' | 'failed' | 'compensated' | 'reused';
  attempts: number;
  jobs: { jobId: string; runtime: string; site: string; state?: string; reason?: string }[];
  startedAt?: Date;
  finishedAt?: Date;
  error?: string;
}

export interface RunReport {
  workflowId: string;
  type: string;
  status: string;
  startedAt?: Date;
  closedAt?: Date;
  input?: HybridPipelineInput;
  stages: StageReport[];
  activities: ActivityRecord[];
  failure?: string;
  result?: unknown;
  events: number;
}

const toDate = (t: temporal.api.history.v1.IHistoryEvent['eventTime']) => (t?.seconds != null ? new Date(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)) : undefined);
const num = (v: unknown) => Number(v ?? 0);

function failureMessage(f: temporal.api.failure.v1.IFailure | null | undefined, converter: PayloadConverter): { message: string; type?: string } {
  // An activity failure's interesting part is its innermost application failure.
  let cur = f;
  let type: string | undefined;
  let message = f?.message ?? 'unknown failure';
  while (cur) {
    if (cur.applicationFailureInfo?.type) type = cur.applicationFailureInfo.type;
    const own = encodedMessage(cur, converter) ?? cur.message;
    if (own) message = own;
    cur = cur.cause;
  }
  return { message, type };
}

/** With the codec on, the message is in the failure's encoded attributes (codec/failure-converter.ts). */
function encodedMessage(f: temporal.api.failure.v1.IFailure, converter: PayloadConverter): string | undefined {
  if (!f.encodedAttributes) return undefined;
  try {
    const attrs = converter.fromPayload(f.encodedAttributes as Payload) as { message?: unknown } | null;
    return typeof attrs?.message === 'string' ? attrs.message : undefined;
  } catch {
    return `${f.message || 'Encoded failure'} (encrypted: this client has no codec key to read it)`;
  }
}

export function analyseHistory(workflowId: string, history: History, converter: PayloadConverter): RunReport {
  const events: HistoryEvent[] = history.events ?? [];
  const decode = (payloads: { payloads?: Payload[] | null } | null | undefined) => {
    const p = payloads?.payloads?.[0];
    if (!p) return undefined;
    // A payload this converter cannot read (damaged, or encrypted with a codec this process lacks)
    // is left out of the report rather than failing all of it.
    try {
      return converter.fromPayload(p);
    } catch {
      return undefined;
    }
  };
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  const report: RunReport = {
    workflowId,
    type: started?.workflowType?.name ?? 'unknown',
    status: 'Running',
    startedAt: toDate(events[0]?.eventTime),
    input: decode(started?.input) as HybridPipelineInput | undefined,
    stages: [],
    activities: [],
    events: events.length,
  };
  const byScheduled = new Map<number, ActivityRecord>();
  for (const e of events) {
    const id = num(e.eventId);
    const sched = e.activityTaskScheduledEventAttributes;
    if (sched) {
      const type = sched.activityType?.name ?? '?';
      const input = decode(sched.input) as Record<string, unknown> | undefined;
      const placed = type === 'placeJob' ? stageOfRef({ name: (input?.job as { id?: string } | undefined)?.id } as JobRef) : undefined;
      const stage = placed ?? (input?.stage as StageName | undefined) ?? stageOfRef(input?.ref as JobRef | undefined) ?? stageOfRef(type === 'cancelJob' ? (input as unknown as JobRef) : undefined) ?? STAGE_OF_ACTIVITY[type];
      const rec: ActivityRecord = { type, stage, scheduledEventId: id, workflowTaskCompletedEventId: num(sched.workflowTaskCompletedEventId), scheduledAt: toDate(e.eventTime), attempt: 1, outcome: 'running', input, compensation: type === 'cancelJob' || type in COMPENSATIONS };
      byScheduled.set(id, rec);
      report.activities.push(rec);
      continue;
    }
    const st = e.activityTaskStartedEventAttributes;
    if (st) {
      const rec = byScheduled.get(num(st.scheduledEventId));
      if (rec) rec.attempt = st.attempt ?? 1;
      continue;
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const rec = byScheduled.get(num(done.scheduledEventId));
      if (rec) Object.assign(rec, { outcome: 'completed', closedAt: toDate(e.eventTime), result: decode(done.result) });
      continue;
    }
    const failed = e.activityTaskFailedEventAttributes;
    if (failed) {
      const rec = byScheduled.get(num(failed.scheduledEventId));
      const f = failureMessage(failed.failure, converter);
      if (rec) Object.assign(rec, { outcome: 'failed', closedAt: toDate(e.eventTime), error: f.message, errorType: f.type });
      continue;
    }
    const to = e.activityTaskTimedOutEventAttributes;
    if (to) {
      const rec = byScheduled.get(num(to.scheduledEventId));
      if (rec) Object.assign(rec, { outcome: 'timed-out', closedAt: toDate(e.eventTime), error: failureMessage(to.failure, converter).message });
      continue;
    }
    const cancelled = e.activityTaskCanceledEventAttributes;
    if (cancelled) {
      const rec = byScheduled.get(num(cancelled.scheduledEventId));
      if (rec) Object.assign(rec, { outcome: 'cancelled', closedAt: toDate(e.eventTime) });
      continue;
    }
    if (e.workflowExecutionCompletedEventAttributes) {
      report.status = 'Completed';
      report.result = decode(e.workflowExecutionCompletedEventAttributes.result);
    } else if (e.workflowExecutionFailedEventAttributes) {
      report.status = 'Failed';
      report.failure = failureMessage(e.workflowExecutionFailedEventAttributes.failure, converter).message;
    } else if (e.workflowExecutionCanceledEventAttributes) report.status = 'Canceled';
    else if (e.workflowExecutionTerminatedEventAttributes) report.status = 'Terminated';
    else if (e.workflowExecutionTimedOutEventAttributes) report.status = 'TimedOut';
    else if (e.workflowExecutionContinuedAsNewEventAttributes) report.status = 'ContinuedAsNew';
    if (report.status !== 'Running' && !report.closedAt) report.closedAt = toDate(e.eventTime);
  }
  report.stages = summariseStages(report);
  return report;
}

function stageOfRef(ref: JobRef | undefined): StageName | undefined {
  const m = ref?.name ? /-(preprocess|train)-\d+$/.exec(ref.name) : null;
  return (m?.[1] as StageName | undefined) ?? undefined;
}

function summariseStages(report: RunReport): StageReport[] {
  const reused = new Set(report.input?.resume?.reuse ?? []);
  const order: StageName[] = ['preprocess', 'train', 'checkpoint', 'deploy'];
  return order.map((name) => {
    const acts = report.activities.filter((a) => a.stage === name);
    const work = acts.filter((a) => !a.compensation);
    const stage: StageReport = { name, status: 'pending', attempts: 0, jobs: [] };
    if (reused.has(name as 'preprocess' | 'train')) return { ...stage, status: 'reused' };
    if (work.length === 0) return stage;
    stage.startedAt = work[0]!.scheduledAt;
    for (const a of work) {
      if (a.type === 'submitJob' && a.result) {
        const ref = a.result as JobRef;
        stage.jobs.push({ jobId: ref.jobId, runtime: ref.runtime, site: ref.site });
      }
      if (a.type === 'awaitJob' && a.result) {
        const st = a.result as JobStatus;
        const job = stage.jobs.find((j) => j.jobId === st.jobId);
        if (job) Object.assign(job, { state: st.state, reason: st.reason });
      }
    }
    stage.attempts = Math.max(1, stage.jobs.length);
    const last = work[work.length - 1]!;
    stage.finishedAt = last.closedAt;
    const failedAct = work.find((a) => a.outcome === 'failed' || a.outcome === 'timed-out');
    const lastJob = stage.jobs[stage.jobs.length - 1];
    if (failedAct) Object.assign(stage, { status: 'failed', error: failedAct.error });
    else if (lastJob?.state && lastJob.state !== 'COMPLETED') Object.assign(stage, { status: 'failed', error: `${lastJob.jobId} ended ${lastJob.state}` });
    else if (last.outcome === 'running' || last.outcome === 'cancelled') stage.status = report.status === 'Running' ? 'running' : 'failed';
    else stage.status = 'completed';
    if (stage.status === 'completed' && acts.some((a) => a.compensation && a.outcome === 'completed' && COMPENSATIONS[a.type] === name)) stage.status = 'compensated';
    if (stage.status === 'failed' && report.status === 'Canceled') stage.error = stage.error ?? 'cancelled';
    return stage;
  });
}
