// What the run page's Gantt draws, read from the history report alone (sdk/history.ts): each job
// attempt (a submit and the watches of that job) split into queue wait and run time, and the moments
// the run failed over or compensated. Nothing is estimated: the split comes from the states the job
// watch observed and recorded in its result (activities/observed-states.ts, `observed`) or, for a
// watch still going, in its last heartbeat; a watch recorded before that existed is drawn whole,
// marked as not split.
import type { ActivityRecord, RunReport } from '../sdk/history.js';
import type { StageName } from '../contract/pipeline.js';
import type { JobRef, JobStatus } from '../contract/outcome.js';
import { classifyJobState, JOB_STATES, type JobState } from '../contract/outcome.js';
import type { ObservedState } from '../activities/observed-states.js';

/** Activities the report leaves without a stage (the failover path, Kubernetes serving): where they belong. */
const STAGE_OF: Record<string, StageName> = {
  chooseSite: 'train',
  stageSite: 'train',
  fenceJob: 'train',
  collectCheckpoint: 'train',
  k8sApplyServing: 'deploy',
  k8sAwaitRollout: 'deploy',
  k8sGateServing: 'deploy',
  k8sRollbackServing: 'deploy',
  k8sTeardownServing: 'deploy',
};
/** Undo steps the report does not flag (its list predates Kubernetes serving). */
const UNDO = new Set(['k8sRollbackServing', 'k8sTeardownServing']);

export const stageOf = (a: ActivityRecord): StageName | undefined => a.stage ?? STAGE_OF[a.type];
export const isCompensation = (a: ActivityRecord): boolean => a.compensation || UNDO.has(a.type);

const SUBMITS = new Set(['submitJob', 'submitAt']);
const WATCHES = new Set(['awaitJob', 'watchAt']);
export const isJobActivity = (a: ActivityRecord): boolean => SUBMITS.has(a.type) || WATCHES.has(a.type);

/** States in which the job has not started (as in observe/activity-metrics.ts, the queue-wait metric). */
const QUEUED = new Set(['SUBMITTED', 'PENDING']);

export interface Segment {
  kind: 'submit' | 'queue' | 'run';
  from: number;
  to: number;
  /** run: the job's last observed state; queue: the queued states seen. */
  state?: string;
}

export interface JobAttempt {
  stage: StageName;
  /** 1-based, within its stage. */
  attempt: number;
  jobId: string;
  site: string;
  runtime: string;
  submit: ActivityRecord;
  watches: ActivityRecord[];
  /** The final state, once a watch saw the job end. */
  final?: JobStatus;
  /** What the watches observed, in order; undefined when no watch recorded it. */
  observed?: ObservedState[];
  /** submit, then queue and run when observed; otherwise only submit (the watch is drawn whole). */
  segments: Segment[];
  /** The job ended in a state that moves it elsewhere (NODE_FAIL, PREEMPTED, …) or its site stopped answering. */
  infrastructure?: string;
}

export interface Marker {
  kind: 'failover' | 'retry' | 'fence' | 'compensation';
  at: number;
  stage?: StageName;
  label: string;
}

const t = (d: Date | undefined) => d?.getTime();

function watchedStatus(a: ActivityRecord): { status?: JobStatus; unreachable?: string; observed?: ObservedState[] } {
  if (a.outcome !== 'completed' || !a.result) return {};
  if (a.type === 'watchAt') {
    const r = a.result as { kind: string; status?: JobStatus & { observed?: ObservedState[] }; error?: string; forMs?: number; observed?: ObservedState[] };
    return r.kind === 'ended' ? { status: r.status, observed: r.status?.observed } : { unreachable: `site unreachable for ${Math.round((r.forMs ?? 0) / 1000)} s${r.error ? `: ${r.error}` : ''}`, observed: r.observed };
  }
  const status = a.result as JobStatus & { observed?: ObservedState[] };
  return { status, observed: status.observed };
}

/** Queue wait from the first watch's scheduling (right after the submission) to the first non-queued state. */
function split(observed: ObservedState[], from: number, end: number, last: string | undefined): Segment[] {
  const clamp = (x: number) => Math.min(end, Math.max(from, x));
  const k = observed.findIndex((o) => !QUEUED.has(o.state));
  const queued = [...new Set(observed.slice(0, k < 0 ? undefined : k).map((o) => o.state))].join(', ');
  if (k < 0) return [{ kind: 'queue', from, to: end, state: queued }];
  const started = k === 0 ? from : clamp(observed[k]!.at);
  return [
    { kind: 'queue', from, to: started, state: queued || undefined },
    { kind: 'run', from: started, to: end, state: last ?? observed[observed.length - 1]!.state },
  ];
}

/**
 * `live`: for watches still going, what their last heartbeat carried (ui/live.ts reads it from the
 * server's pending activities), keyed by the watch's scheduled event id: a job queued right now shows
 * its queue wait so far.
 */
export function jobAttempts(report: RunReport, now = Date.now(), live: ReadonlyMap<number, ObservedState[]> = new Map()): JobAttempt[] {
  const end = t(report.closedAt) ?? now;
  const out: JobAttempt[] = [];
  const perStage = new Map<string, number>();
  for (const submit of report.activities) {
    if (!SUBMITS.has(submit.type) || submit.outcome !== 'completed' || !submit.result) continue;
    const ref = submit.result as JobRef;
    const stage = stageOf(submit);
    if (!stage) continue;
    const watches = report.activities.filter((a) => WATCHES.has(a.type) && (a.input as { ref?: JobRef } | undefined)?.ref?.jobId === ref.jobId && (a.input as { ref?: JobRef }).ref?.site === ref.site && a.scheduledEventId > submit.scheduledEventId);
    const attempt = (perStage.get(stage) ?? 0) + 1;
    perStage.set(stage, attempt);
    const segments: Segment[] = [{ kind: 'submit', from: t(submit.scheduledAt) ?? end, to: t(submit.closedAt) ?? end }];
    let final: JobStatus | undefined;
    let observed: ObservedState[] | undefined;
    let infrastructure: string | undefined;
    let recorded = watches.length > 0;
    for (const w of watches) {
      const { status, unreachable, observed: recordedStates } = watchedStatus(w);
      if (unreachable) infrastructure = unreachable;
      if (status) final = status;
      // Split only when every watch recorded what it saw: in its result, or (still going) in its heartbeat.
      const seen = w.outcome === 'running' ? live.get(w.scheduledEventId) : recordedStates;
      if (Array.isArray(seen)) observed = [...(observed ?? []), ...seen];
      else recorded = false;
    }
    const from = t(watches[0]?.scheduledAt);
    const watchEnd = t(watches[watches.length - 1]?.closedAt) ?? end;
    if (from !== undefined && recorded && observed?.length) segments.push(...split(observed.sort((a, b) => a.at - b.at), from, watchEnd, watches[watches.length - 1]!.outcome === 'running' ? undefined : final?.state));
    else observed = undefined;
    if (final && JOB_STATES.includes(final.state as JobState) && classifyJobState(final.state) === 'infrastructure') infrastructure = `${final.state}${final.reason ? ` (${final.reason})` : ''}`;
    out.push({ stage, attempt, jobId: ref.jobId, site: ref.site, runtime: ref.runtime, submit, watches, final, observed, segments, infrastructure });
  }
  return out;
}

/** Failovers (an attempt moved to another site), retries after an infrastructure end, fences, compensations. */
export function markers(report: RunReport, attempts: JobAttempt[]): Marker[] {
  const out: Marker[] = [];
  attempts.forEach((a, i) => {
    if (!a.infrastructure) return;
    const next = attempts.slice(i + 1).find((b) => b.stage === a.stage);
    const at = t(a.watches[a.watches.length - 1]?.closedAt) ?? t(a.submit.closedAt)!;
    const moved = next && next.site !== a.site;
    out.push({ kind: moved ? 'failover' : 'retry', at, stage: a.stage, label: `${a.stage} attempt ${a.attempt}: ${a.infrastructure} at ${a.site}${next ? (moved ? `; failover to ${next.site}` : `; attempt ${next.attempt} at ${next.site}`) : ''}` });
  });
  for (const a of report.activities) {
    const at = t(a.scheduledAt);
    if (at === undefined) continue;
    if (a.type === 'fenceJob') {
      const r = a.result as { detail?: string } | undefined;
      out.push({ kind: 'fence', at, stage: stageOf(a), label: `fence: ${r?.detail ?? a.error ?? a.outcome}` });
    } else if (isCompensation(a)) {
      out.push({ kind: 'compensation', at, stage: stageOf(a), label: `compensation: ${a.type} ${a.outcome}${a.error ? ` — ${a.error.slice(0, 120)}` : ''}` });
    }
  }
  return out.sort((x, y) => x.at - y.at);
}
