// Temporal histories to and from their JSON form (`temporal workflow show --output json`, the Web UI's
// export, `tandem runs export`), with the proto types of the `@temporalio/proto` this package resolves
// and the protobufjs that very copy was generated with.
//
// Why not `@temporalio/common/lib/proto-utils.js` (historyFromJSON / historyToJSON): it takes
// `protobufjs/ext/protojson` from wherever `@temporalio/common` resolves protobufjs, and the types from
// wherever `@temporalio/proto` resolves it. In a project where npm hoists another protobufjs (7.x, from
// gRPC or OpenTelemetry) to the top, each of the two SDK packages gets a nested copy of its own, and
// every conversion fails with "type must be a Type" (protojson's `instanceof` against the other copy's
// class). Here both come from the same copy, whatever the layout of node_modules.
import { createRequire } from 'node:module';
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
interface ProtoType {
  fullName: string;
}
interface ProtoJson {
  fromJson(type: ProtoType, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
  toJson(type: ProtoType, message: unknown): unknown;
}
interface PatchedRoot {
  lookupType(name: string): ProtoType;
  temporal: { api: { history: { v1: { History: { fromObject(o: unknown): unknown } } } } };
}

let loaded: { protojson: ProtoJson; historyType: ProtoType; root: PatchedRoot } | undefined;

function load() {
  if (loaded) return loaded;
  const entry = createRequire(import.meta.url).resolve('@temporalio/proto');
  const fromProto = createRequire(entry);
  const { patchProtobufRoot } = fromProto('../lib/patch-protobuf-root.js') as { patchProtobufRoot(r: unknown): PatchedRoot };
  const root = patchProtobufRoot(fromProto(entry));
  // Resolved from @temporalio/proto's own folder: the protobufjs its generated root was built with.
  const protojson = fromProto('protobufjs/ext/protojson') as ProtoJson;
  loaded = { protojson, root, historyType: root.lookupType('temporal.api.history.v1.History') };
  return loaded;
}

const constantCase = (s: string) => s.replace(/[^\b][A-Z]/g, (m) => `${m[0]}_${m[1]}`).toUpperCase();
type Obj = Record<string, unknown>;

/** `WorkflowExecutionStarted` → `EVENT_TYPE_WORKFLOW_EXECUTION_STARTED` and the like: the older JSON spelling of enums. */
function fixEnum(o: Obj | undefined, attr: string, prefix: string): Obj {
  const v = o?.[attr];
  return typeof v === 'string' ? { [attr]: v.startsWith(prefix) ? v : `${prefix}_${constantCase(v)}` } : {};
}

function fixEvent(e: Obj): Obj {
  const key = Object.keys(e).find((k) => k.endsWith('EventAttributes'));
  if (!key) throw new TypeError(`Missing attributes in history event: ${JSON.stringify(e).slice(0, 200)}`);
  const a = (e[key] ?? {}) as Obj;
  const taskQueue = a.taskQueue as Obj | undefined;
  const childFailure = a.childWorkflowExecutionFailureInfo as Obj | undefined;
  return {
    ...e,
    ...fixEnum(e, 'eventType', 'EVENT_TYPE'),
    [key]: {
      ...a,
      ...(taskQueue ? { taskQueue: { ...taskQueue, ...fixEnum(taskQueue, 'kind', 'TASK_QUEUE_KIND') } } : {}),
      ...fixEnum(a, 'parentClosePolicy', 'PARENT_CLOSE_POLICY'),
      ...fixEnum(a, 'workflowIdReusePolicy', 'WORKFLOW_ID_REUSE_POLICY'),
      ...fixEnum(a, 'initiator', 'CONTINUE_AS_NEW_INITIATOR'),
      ...fixEnum(a, 'retryState', 'RETRY_STATE'),
      ...(childFailure ? { childWorkflowExecutionFailureInfo: { ...childFailure, ...fixEnum(childFailure, 'retryState', 'RETRY_STATE') } } : {}),
    },
  };
}

/** A history from its JSON form (either enum spelling; unknown fields, e.g. from a newer server, are ignored). */
export function historyFromJSON(json: unknown): History {
  if (!json || typeof json !== 'object' || !Array.isArray((json as { events?: unknown }).events)) throw new TypeError('Invalid history, expected an object with an array of events');
  const { protojson, historyType } = load();
  const h = protojson.fromJson(historyType, { ...(json as Obj), events: ((json as { events: Obj[] }).events).map(fixEvent) }, { ignoreUnknownFields: true });
  if (h === null) throw new TypeError('Invalid history');
  return h as History;
}

/** The JSON form of a history as `fetchHistory()` returns it, as other Temporal tools write it. */
export function historyToJSON(history: History): string {
  const { protojson, historyType, root } = load();
  return JSON.stringify(protojson.toJson(historyType, root.temporal.api.history.v1.History.fromObject(history)), null, 2);
}
