// For a run still going: what its job watches saw so far. The history has a watch's observations
// only once it ends (its result); until then the server keeps its last heartbeat details, which carry
// the same list (activities/observed-states.ts). Read with the client's data converter and codec, so
// encrypted runs read the same as in `tandem runs show`.
import type { Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { TandemClient } from '../sdk/client.js';
import type { RunReport } from '../sdk/history.js';
import { decodeHistoryPayloads } from '../sdk/history.js';
import type { ObservedState } from '../activities/observed-states.js';
import type { JobProgress } from '../contract/outcome.js';

const WATCHES = new Set(['awaitJob', 'watchAt']);

/** What a running watch last heartbeated: the job states it saw, and the job's training progress. */
export interface LiveWatch {
  observed?: ObservedState[];
  progress?: JobProgress;
}

/** Running watches' observations by their scheduled event id; empty for closed runs or on any error (the page still renders). */
export async function liveObservations(tandem: TandemClient, report: RunReport & { runId: string }): Promise<Map<number, ObservedState[]>> {
  const out = new Map<number, ObservedState[]>();
  for (const [id, w] of await liveWatches(tandem, report)) if (w.observed) out.set(id, w.observed);
  return out;
}

/** Running watches' last heartbeats by their scheduled event id; empty for closed runs. */
export async function liveWatches(tandem: TandemClient, report: RunReport & { runId: string }): Promise<Map<number, LiveWatch>> {
  const out = new Map<number, LiveWatch>();
  const running = report.activities.filter((a) => WATCHES.has(a.type) && a.outcome === 'running');
  if (report.status !== 'Running' || !running.length) return out;
  const { client } = tandem;
  const res = await client.workflowService.describeWorkflowExecution({ namespace: client.options.namespace, execution: { workflowId: report.workflowId, runId: report.runId } });
  const { payloadConverter, payloadCodecs } = client.options.loadedDataConverter;
  // The same walk that decodes a history's payloads decodes these.
  const pending = ((await decodeHistoryPayloads({ events: res.pendingActivities ?? [] } as unknown as temporal.api.history.v1.IHistory, payloadCodecs)).events ?? []) as unknown as temporal.api.workflow.v1.IPendingActivityInfo[];
  // Pending activities carry no scheduled event id: a pipeline watches one job at a time, so the
  // running watches and the pending ones of the same type pair up in order.
  for (const type of WATCHES) {
    const recs = running.filter((a) => a.type === type);
    const infos = pending.filter((p) => p.activityType?.name === type);
    recs.forEach((rec, i) => {
      const payload = infos[i]?.heartbeatDetails?.payloads?.[0];
      if (!payload) return;
      try {
        const details = payloadConverter.fromPayload(payload as Payload) as { observed?: unknown; progress?: unknown } | null;
        const w: LiveWatch = {};
        if (Array.isArray(details?.observed)) w.observed = details.observed as ObservedState[];
        const p = details?.progress as Partial<JobProgress> | undefined;
        if (p && Number.isFinite(p.step) && Number.isFinite(p.total)) w.progress = p as JobProgress;
        out.set(rec.scheduledEventId, w);
      } catch {
        /* undecodable (no codec key here): drawn whole, as without details */
      }
    });
  }
  return out;
}
