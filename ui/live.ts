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

const WATCHES = new Set(['awaitJob', 'watchAt']);

/** Running watches' observations by their scheduled event id; empty for closed runs or on any error (the page still renders). */
export async function liveObservations(tandem: TandemClient, report: RunReport & { runId: string }): Promise<Map<number, ObservedState[]>> {
  const out = new Map<number, ObservedState[]>();
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
        const details = payloadConverter.fromPayload(payload as Payload) as { observed?: unknown } | null;
        if (Array.isArray(details?.observed)) out.set(rec.scheduledEventId, details.observed as ObservedState[]);
      } catch {
        /* undecodable (no codec key here): drawn whole, as without details */
      }
    });
  }
  return out;
}
