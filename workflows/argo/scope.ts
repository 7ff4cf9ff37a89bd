// The run-wide variables: `workflow.*` as Argo defines them, the entrypoint's arguments, and what the
// exit handler and the final status read back from them.
import { substitute, type Scope } from '../../argo/lang/tags.js';
import type { ArgoRunInput, ArgoStatus, Json } from '../../argo/lang/types.js';
import { arr, failed, type CallArgs } from './model.js';

export interface RunIdentity {
  /** `workflow.uid`: the Temporal run id. */
  uid: string;
  /** `workflow.creationTimestamp`, an ISO time. */
  startedAt: string;
  /** TemporalScheduledStartTime of a run a Schedule (CronWorkflow) started. */
  scheduledStartTime?: unknown;
}

export function globalScope(input: ArgoRunInput, run: RunIdentity): Scope {
  const { spec } = input;
  const global: Scope = {
    'workflow.name': input.name,
    'workflow.namespace': input.namespace ?? 'default',
    'workflow.uid': run.uid,
    'workflow.serviceAccountName': String(spec.serviceAccountName ?? 'default'),
    'workflow.mainEntrypoint': String(spec.entrypoint),
    'workflow.priority': String(spec.priority ?? 0),
    'workflow.creationTimestamp': run.startedAt,
    'workflow.status': 'Running',
  };
  const created = new Date(run.startedAt);
  const ts: Record<string, string> = {
    Y: String(created.getUTCFullYear()), m: String(created.getUTCMonth() + 1).padStart(2, '0'), d: String(created.getUTCDate()).padStart(2, '0'),
    H: String(created.getUTCHours()).padStart(2, '0'), M: String(created.getUTCMinutes()).padStart(2, '0'), S: String(created.getUTCSeconds()).padStart(2, '0'),
    s: String(Math.floor(created.getTime() / 1000)), RFC3339: run.startedAt.replace(/\.\d+Z$/, 'Z'),
  };
  for (const [k, v] of Object.entries(ts)) global[`workflow.creationTimestamp.${k}`] = v;
  if (run.scheduledStartTime !== undefined) global['workflow.scheduledTime'] = new Date(run.scheduledStartTime as string).toISOString().replace(/\.\d+Z$/, 'Z');
  for (const [k, v] of Object.entries(input.labels ?? {})) global[`workflow.labels.${k}`] = v;
  for (const [k, v] of Object.entries(input.annotations ?? {})) global[`workflow.annotations.${k}`] = v;
  global['workflow.labels.json'] = JSON.stringify(input.labels ?? {});
  global['workflow.annotations.json'] = JSON.stringify(input.annotations ?? {});
  const wfParams = arr((spec.arguments as Json | undefined)?.parameters);
  for (const p of wfParams) {
    const v = p.value ?? p.default;
    if (v !== undefined) global[`workflow.parameters.${String(p.name)}`] = substitute(String(v), global);
  }
  global['workflow.parameters.json'] = JSON.stringify(wfParams.map((p) => ({ name: p.name, value: global[`workflow.parameters.${String(p.name)}`] })));
  return global;
}

/** `spec.arguments.artifacts` by name: any template input of the same name falls back to them. */
export function workflowArtifacts(spec: Json): Record<string, Json> {
  return Object.fromEntries(arr((spec.arguments as Json | undefined)?.artifacts).map((a) => [String(a.name), a]));
}

/** The entrypoint's arguments: the workflow's parameters as resolved in the global scope. */
export function entryArguments(spec: Json, global: Scope): CallArgs {
  return { parameters: arr((spec.arguments as Json | undefined)?.parameters).map((p) => ({ name: p.name, value: global[`workflow.parameters.${String(p.name)}`] })), artifacts: arr((spec.arguments as Json | undefined)?.artifacts) };
}

/** `workflow.failures` for the exit handler: the failed leaf nodes, in Argo's shape. */
export function workflowFailures(status: ArgoStatus): string {
  const failures = Object.values(status.nodes)
    .filter((n) => failed(n.phase) && (n.type === 'Pod' || n.type === 'HTTP' || n.type === 'Suspend'))
    .map((n) => ({ displayName: n.displayName, message: n.message ?? '', templateName: n.templateName ?? '', phase: n.phase, podName: n.id, finishedAt: n.finishedAt ?? '' }));
  return JSON.stringify(failures);
}

/** The run's global output parameters (`globalName`), or undefined when no template set any. */
export function workflowOutputs(global: Scope): ArgoStatus['outputs'] {
  const outs = Object.entries(global).filter(([k]) => k.startsWith('workflow.outputs.parameters.'));
  if (!outs.length) return undefined;
  return { parameters: Object.fromEntries(outs.map(([k, v]) => [k.slice('workflow.outputs.parameters.'.length), v])) };
}
