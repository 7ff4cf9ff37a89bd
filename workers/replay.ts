// Replays a recorded history against the current workflow code and says, in plain words, whether it
// is deterministic or where it diverged.
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import type { temporal } from '@temporalio/proto';
import { DeterminismViolationError } from '@temporalio/workflow';
import { bundleWorkflows } from './worker.js';

export interface ReplayVerdict {
  deterministic: boolean;
  workflowType: string;
  events: number;
  /** Where and why it diverged, for a person. */
  explanation?: string;
  eventId?: number;
  raw?: string;
}

/** Turns the SDK core's nondeterminism messages into a sentence an operator can act on. */
export function explainDivergence(raw: string): { explanation: string; eventId?: number } {
  const msg = raw.replace(/^.*?Nondeterminism error:\s*/s, '').replace(/", source: .*$/s, '').trim();
  const idMatch = /\bid:\s*(\d+)/.exec(msg);
  const eventId = idMatch ? Number(idMatch[1]) : undefined;
  let m = /Activity type of scheduled event '([^']+)' does not match activity type of activity command '([^']+)'/.exec(msg);
  if (m) return { explanation: `the recorded run scheduled activity "${m[1]}" at this point, but the current code schedules "${m[2]}" instead`, eventId };
  m = /patch marker encountered for change ([\w.-]+), but there is no corresponding change command/.exec(msg);
  if (m) return { explanation: `the recorded run took the patched("${m[1]}") path here, but the current code does not call patched("${m[1]}") at this point`, eventId };
  m = /No command scheduled for event HistoryEvent\(id: (\d+), (\w+)/.exec(msg);
  if (m) return { explanation: `the recorded run has event ${m[1]} (${m[2]}) that the current code no longer produces`, eventId: Number(m[1]) };
  m = /Timer id of scheduled event '([^']*)' does not match/.exec(msg);
  if (m) return { explanation: 'the recorded run started a timer where the current code does something else', eventId };
  if (/Nondeterminism|nondeterministic|does not match/i.test(raw)) return { explanation: `the current code issues different commands than the recorded run: ${msg}`, eventId };
  return { explanation: msg, eventId };
}

/** A history exported as JSON (`tandem runs export`, `temporal workflow show --output json`, the Web UI). */
export const historyFromFile = (json: unknown) => historyFromJSON(json);

/** `workflowId` must be the run's own: child workflow ids and similar commands derive from it. */
export async function replayHistory(h: temporal.api.history.v1.IHistory, opts: { workflowBundle?: WorkflowBundleWithSourceMap; workflowId?: string } = {}): Promise<ReplayVerdict> {
  const workflowType = h.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
  const events = h.events?.length ?? 0;
  try {
    await Worker.runReplayHistory({ workflowBundle: opts.workflowBundle ?? (await bundleWorkflows()), replayName: 'tandem-replay' }, h, opts.workflowId);
    return { deterministic: true, workflowType, events };
  } catch (e) {
    if (!(e instanceof DeterminismViolationError)) throw e;
    const raw = (e as Error).message;
    return { deterministic: false, workflowType, events, raw, ...explainDivergence(raw) };
  }
}
