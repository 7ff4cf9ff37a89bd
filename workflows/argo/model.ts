// The shapes the interpreter's modules hand each other, and the helpers all of them share. No Temporal
// import here or in the other pure modules (io, loops, pods, retry, memoize, sync, scope, nodes, call,
// steps, dag; test/unit/argo/purity.test.ts holds them to it): the unit lane loads them outside the sandbox.
import type { CancellationScope } from '@temporalio/workflow';
import type { Scope } from '../../argo/lang/tags.js';
import type { ArgoNode, Json, NodeOutputs, Phase } from '../../argo/lang/types.js';

export interface NodeResult {
  id: string;
  phase: Phase;
  message?: string;
  outputs: NodeOutputs;
  daemoned?: boolean;
}

/**
 * A loop's result also carries its items' phases, for `depends` on `.AnySucceeded`/`.AllFailed`, and
 * its items' output parameters one map per item, which is what `{{steps.X.outputs.parameters}}` of a
 * loop is in Argo (processAggregateNodeOutputs), not the per-name lists of `…parameters.<name>`.
 */
export type LoopResult = NodeResult & { children?: Phase[]; itemParameters?: Record<string, string>[] };

export interface CallArgs {
  parameters?: Json[];
  artifacts?: Json[];
}

export interface Call {
  template: Json;
  args: CallArgs;
  name: string;
  displayName: string;
  parentId?: string;
  /** Variables visible to the callee's `{{…}}` besides its inputs (retries, lastRetry…). */
  extra?: Scope;
  /** Where a daemon pod registers its scope: the steps or DAG template it runs in stops it when it ends. */
  daemons?: CancellationScope[];
}

/**
 * A template's `failFast: true` (Argo's Template.FailFast, default off; not dag.failFast): once one of
 * its children failed, no further child starts, and the template fails when the running ones end.
 */
export interface FailFastGate {
  tripped: boolean;
}

export const FAIL_FAST_MESSAGE = 'template has failed or errored children and failFast enabled';

/** A mistake in the spec found while running: it ends its node in Error, not the workflow task. */
export class UserError extends Error {}

export const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
export const emptyOutputs = (): NodeOutputs => ({ parameters: {}, artifacts: {} });
export const failed = (p: Phase): boolean => p === 'Failed' || p === 'Error';

/** The node type a template runs as (a Retry node wraps it when it has a retryStrategy). */
export function templateKind(tmpl: Json): ArgoNode['type'] {
  return tmpl.steps ? 'Steps' : tmpl.dag ? 'DAG' : tmpl.suspend ? 'Suspend' : tmpl.http ? 'HTTP' : tmpl.resource ? 'Resource' : 'Pod';
}

/** The exit handler a workflow spec or a step names: `onExit`, or the newer `hooks.exit.template`. */
export function exitTemplateName(holder: Json): string | undefined {
  return (holder.onExit as string | undefined) ?? (((holder.hooks as Json | undefined)?.exit as Json | undefined)?.template as string | undefined);
}

/** A step's, task's or the spec's lifecycle hooks other than `exit`: [name, hook], by name. */
export function lifecycleHooks(holder: Json): [string, Json][] {
  const hooks = (holder.hooks ?? {}) as Record<string, Json>;
  return Object.keys(hooks)
    .filter((h) => h !== 'exit')
    .sort()
    .map((h) => [h, hooks[h]!]);
}

/** Whether a step's or task's `continueOn` lets its parent go on after it ended in `phase`. */
export function continueOn(step: Json, phase: Phase): boolean {
  const c = (step.continueOn ?? {}) as Json;
  return (phase === 'Failed' && c.failed === true) || (phase === 'Error' && c.error === true);
}

/** The innermost message of an activity failure: the activity's own words, not Temporal's wrapper. */
export function activityMessage(e: unknown): string {
  let cur = e as { message?: string; cause?: unknown } | undefined;
  let msg = cur?.message ?? String(e);
  while (cur?.cause) {
    cur = cur.cause as { message?: string; cause?: unknown };
    if (cur.message) msg = cur.message;
  }
  return msg;
}

/** A loop item's `outputs.result` as Argo aggregates it: JSON objects and lists nest, anything else stays a string. */
export function tryJson(s: string): unknown {
  try {
    const v = JSON.parse(s);
    return typeof v === 'object' ? v : s;
  } catch {
    return s;
  }
}
