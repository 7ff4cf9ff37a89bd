// Replays a recorded history against the current workflow code and says, in plain words, whether it
// is deterministic or where it diverged. "Deterministic" is said only when the replay ran to its end
// without any error: a history file is checked for shape first (an InputError naming what is wrong),
// the replay is bounded in time, and an error the workflow code throws during it is a failed replay.
import { fileURLToPath } from 'node:url';
import { Worker, bundleWorkflowCode, type InjectedSinks, type WorkflowBundle, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { historyFromJSON } from '../sdk/history-json.js';
import proto, { type temporal } from '@temporalio/proto';
import { DeterminismViolationError } from '@temporalio/workflow';
import { InputError, type InputIssue } from '../contract/input-error.js';
import { DEFAULTS } from '../config/defaults.js';
import { WORKFLOWS_PATH } from './worker.js';
import { loadCodecConfig } from '../config/worker.js';
import { codecDataConverter, codecProblem } from '../codec/index.js';
import { defaultPayloadConverter, type DataConverter, type Payload } from '@temporalio/common';
import type { ReplayProbeSinks } from '../workflows/replay-probe.js';
import { workerParts } from './assembly.js';
import type { Tracing } from '../observe/tracing.js';

export interface ReplayVerdict {
  deterministic: boolean;
  workflowType: string;
  events: number;
  /** Where and why it diverged, for a person. */
  explanation?: string;
  eventId?: number;
  raw?: string;
  /** Set when the replay itself failed (an error in the workflow code, a stalled or refused replay): not a divergence, and never a pass. */
  failed?: string;
}

const PROBE_PATH = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../workflows/replay-probe.ts' : '../workflows/replay-probe.js', import.meta.url));
const quietLogger = { trace() {}, debug() {}, info() {}, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m), log() {} };

/**
 * The sinks a replayer registers: those of Tandem's own worker (workers/assembly.ts) with metrics not
 * recorded (a replay is not a run) — without them every sink call of the workflows is logged as an
 * "unregistered external sink" — and tracing's, which export nothing on replay.
 */
export function replaySinks(tracing?: Tracing): NonNullable<Parameters<typeof Worker.runReplayHistory>[0]['sinks']> {
  return workerParts({ observe: false, tracing }).sinks;
}

/** The workflows with the replay probe (workflows/replay-probe.ts), which reports errors the code throws. */
export function bundleReplayWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: [PROBE_PATH], logger: quietLogger });
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

const EVENT_TYPES = proto.temporal.api.enums.v1.EventType;
const MAX_ISSUES = 10;

/** `WorkflowExecutionStarted` and `EVENT_TYPE_WORKFLOW_EXECUTION_STARTED` alike (the two JSON spellings). */
function constantEventType(t: string): string {
  return t.startsWith('EVENT_TYPE_') ? t : `EVENT_TYPE_${t.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

/** EVENT_TYPE_WORKFLOW_EXECUTION_STARTED → workflowExecutionStartedEventAttributes. */
function attributesKey(constant: string): string {
  const words = constant.replace(/^EVENT_TYPE_/, '').toLowerCase().split('_');
  return `${words.map((w, i) => (i ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join('')}EventAttributes`;
}

/**
 * What is wrong with the shape of an exported history, before the replayer sees it (it can stall on,
 * or half-accept, a malformed one): events numbered 1, 2, 3 … in order, each of a known type carrying
 * that type's attributes, starting with WorkflowExecutionStarted, with at least one completed workflow
 * task (the recorded commands the code is compared against).
 */
export function historyShapeIssues(json: unknown): InputIssue[] {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return [{ path: '', message: 'a history must be an object with an "events" list (as `tandem runs export` writes it)' }];
  const events = (json as { events?: unknown }).events;
  if (!Array.isArray(events)) return [{ path: 'events', message: 'must be a list of history events' }];
  if (events.length === 0) return [{ path: 'events', message: 'is empty: there is nothing to replay' }];
  const issues: InputIssue[] = [];
  const types: string[] = [];
  let numbered = true; // one numbering issue is enough: the rest would follow from it
  for (const [i, e] of events.entries()) {
    if (issues.length >= MAX_ISSUES) break;
    const at = `events[${i}]`;
    if (e === null || typeof e !== 'object' || Array.isArray(e)) {
      issues.push({ path: at, message: 'must be an object' });
      continue;
    }
    const ev = e as Record<string, unknown>;
    const id = ev.eventId;
    const n = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : typeof id === 'number' ? id : NaN;
    if (n !== i + 1 && numbered) {
      issues.push({ path: `${at}.eventId`, message: `is ${JSON.stringify(id)}, expected "${i + 1}": events must be numbered from 1 in order, without gaps` });
      numbered = false;
    }
    const type = typeof ev.eventType === 'string' ? constantEventType(ev.eventType) : undefined;
    if (!type || !(type in EVENT_TYPES) || type === 'EVENT_TYPE_UNSPECIFIED') {
      issues.push({ path: `${at}.eventType`, message: `${JSON.stringify(ev.eventType)} is not a history event type` });
      continue;
    }
    types.push(type);
    const key = attributesKey(type);
    const attrs = ev[key];
    if (attrs === null || typeof attrs !== 'object' || Array.isArray(attrs)) issues.push({ path: `${at}.${key}`, message: `is missing: a ${type.replace(/^EVENT_TYPE_/, '')} event carries its attributes there` });
    else {
      const other = Object.keys(ev).filter((k) => k.endsWith('EventAttributes') && k !== key);
      if (other.length) issues.push({ path: `${at}.${other[0]}`, message: `does not belong to a ${type.replace(/^EVENT_TYPE_/, '')} event` });
    }
  }
  if (issues.length) return issues;
  const first = events[0] as Record<string, { workflowType?: { name?: unknown } } | undefined>;
  if (types[0] !== 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED') return [{ path: 'events[0].eventType', message: 'a history starts with WorkflowExecutionStarted' }];
  const name = first.workflowExecutionStartedEventAttributes?.workflowType?.name;
  if (typeof name !== 'string' || !name) return [{ path: 'events[0].workflowExecutionStartedEventAttributes.workflowType.name', message: 'must name the workflow type' }];
  if (!types.includes('EVENT_TYPE_WORKFLOW_TASK_COMPLETED')) return [{ path: 'events', message: 'has no completed workflow task: there are no recorded commands to compare the code against' }];
  return [];
}

/** A history exported as JSON (`tandem runs export`, `temporal workflow show --output json`, the Web UI). */
export function historyFromFile(json: unknown, source = 'history'): temporal.api.history.v1.IHistory {
  const issues = historyShapeIssues(json);
  if (issues.length === 0) {
    try {
      return historyFromJSON(json);
    } catch (e) {
      issues.push({ path: 'events', message: `does not decode as a Temporal history: ${(e as Error).message.split('\n')[0]!.slice(0, 200)}` });
    }
  }
  throw new InputError('history file', issues, { source });
}

class ReplayTimeout extends Error {}

/** Why the start event's input and memo cannot be read with this data converter, if they cannot. */
async function unreadableStart(h: temporal.api.history.v1.IHistory, dc: DataConverter | undefined): Promise<string | undefined> {
  const start = h.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payloads = [...(start?.input?.payloads ?? []), ...Object.values(start?.memo?.fields ?? {})] as Payload[];
  try {
    let decoded = payloads;
    for (const codec of [...(dc?.payloadCodecs ?? [])].reverse()) decoded = await codec.decode(decoded);
    for (const p of decoded) defaultPayloadConverter.fromPayload(p);
  } catch (e) {
    return codecProblem(e); // anything else is the replayer's to report
  }
  return undefined;
}

/**
 * `workflowId` must be the run's own: child workflow ids and similar commands derive from it.
 * `timeoutMs` bounds the replay itself (not the bundling): a replay that has not finished by then has
 * failed. A replay stalled inside the SDK's replayer cannot be stopped from here; the CLI exits.
 */
export async function replayHistory(h: temporal.api.history.v1.IHistory, opts: { workflowBundle?: WorkflowBundle; workflowId?: string; timeoutMs?: number; dataConverter?: DataConverter } = {}): Promise<ReplayVerdict> {
  const workflowType = h.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
  const events = h.events?.length ?? 0;
  const workflowBundle = opts.workflowBundle ?? (await bundleReplayWorkflows());
  const thrown: string[] = [];
  const sinks: InjectedSinks<ReplayProbeSinks> = {
    replayProbe: { threw: { fn: (_info, what, message) => void thrown.push(`${what} threw ${message}`), callDuringReplay: true } },
  };
  const timeoutMs = opts.timeoutMs ?? DEFAULTS.replayTimeoutMs;
  // Encrypted histories decode with the codec's keys (TANDEM_CODEC_*), as the worker that wrote them did.
  const dataConverter = opts.dataConverter ?? codecDataConverter(loadCodecConfig());
  // Payloads this process cannot read fail the replayer's first workflow task deep inside the SDK
  // (a stack trace in the log, then "ReplayError"): said first, and plainly (no key, or not the key).
  const unreadable = await unreadableStart(h, dataConverter);
  if (unreadable) return { deterministic: false, workflowType, events, failed: unreadable };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      Worker.runReplayHistory({ workflowBundle, replayName: 'tandem-replay', sinks: { ...replaySinks(), ...sinks }, dataConverter }, h, opts.workflowId),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ReplayTimeout()), timeoutMs);
      }),
    ]);
  } catch (e) {
    if (e instanceof ReplayTimeout) return { deterministic: false, workflowType, events, failed: `the replay did not finish within ${timeoutMs} ms (a malformed or inconsistent history can stall the replayer)` };
    const raw = (e as Error).message;
    if (e instanceof DeterminismViolationError) return { deterministic: false, workflowType, events, raw, ...explainDivergence(raw) };
    // A ReplayError (the workflow task failed on a completed task) or any other error of the replayer.
    return { deterministic: false, workflowType, events, raw, failed: thrown[0] ?? raw.split('\n')[0]!.slice(0, 500) };
  } finally {
    clearTimeout(timer);
  }
  if (thrown.length) return { deterministic: false, workflowType, events, failed: thrown[0] };
  return { deterministic: true, workflowType, events };
}
