// One template call, outside in: memoize (a cache hit stands in for the run), reuse of a retried
// run's results, retryStrategy (one child node per attempt, backoff as a timer), then one attempt:
// its inputs, its template-level locks, and its body by template type.
import { isCancellation, patched, sleep } from '@temporalio/workflow';
import { substitute, substituteDeep, type Scope } from '../../argo/lang/tags.js';
import type { ArgoNode, Json, NodeOutputs } from '../../argo/lang/types.js';
import { ARGO_PATCHES } from './api.js';
import type { RunContext } from './context.js';
import { runDag } from './dag.js';
import { bindInputs, templateOutputs, type BoundInputs } from './io.js';
import { runHttp, runPod, runSuspend } from './leaves.js';
import { acquireLocks, releaseLocks } from './lock-client.js';
import { memoCache, memoHitMessage, memoKey } from './memoize.js';
import { activityMessage, failed, templateKind, UserError, type Call, type NodeResult } from './model.js';
import { finish } from './nodes.js';
import { resourceInput } from './pods.js';
import { expressionRetries, lastRetryScope, pastMaxDuration, policyRetries, retryDelay, retryPlan } from './retry.js';
import { runSteps } from './steps.js';
import { holderKey, syncLocks, type LockRef } from './sync.js';

const DISPLAY_NAME = 'workflows.argoproj.io/display-name';
/** Argo's displayNameRegex (workflow/controller/operator.go). */
const DISPLAY_NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9-.]{0,61}[a-zA-Z0-9]$/;

/**
 * Argo's maxAllowedStackDepth (workflow/controller/controller.go): a template call nested this deep is
 * an Error node, as Argo marks it (type Skipped: the node did not exist yet). Without it a template
 * that calls itself recursed until the workflow thread's stack overflowed, killing the worker. No
 * patch: a run that recursed without waiting never completed a workflow task, and one that waited for
 * a pod at each level could only pass depth 99 where real Argo stops it; an in-flight run that deep
 * at the upgrade fails its replay (nondeterminism) instead of going on (docs/argo.md).
 */
export const MAX_TEMPLATE_DEPTH = 100;
export const MAX_DEPTH_MESSAGE = 'Maximum recursion depth exceeded. See https://argo-workflows.readthedocs.io/en/release-3.7/scaling/#maximum-recursion-depth';

/** How many template calls enclose a node: its ancestors, without step/task groups and retry attempts (one call with their Retry node). */
function callDepth(ctx: RunContext, parentId: string | undefined): number {
  let depth = 0;
  for (let id = parentId, guard = 0; id !== undefined && guard < 10 * MAX_TEMPLATE_DEPTH; guard++) {
    const n: ArgoNode | undefined = ctx.status.nodes[id];
    if (!n) break;
    const parent = n.parentId === undefined ? undefined : ctx.status.nodes[n.parentId];
    if (n.type !== 'StepGroup' && n.type !== 'TaskGroup' && parent?.type !== 'Retry') depth++;
    id = n.parentId;
  }
  return depth;
}

/** Runs one template call; successful results of a memoized template are stored in its cache. */
export async function runTemplate(ctx: RunContext, call: Call): Promise<NodeResult> {
  if (callDepth(ctx, call.parentId) + 1 >= MAX_TEMPLATE_DEPTH) {
    const node = ctx.nodes.add({ name: call.name, displayName: call.displayName, type: 'Skipped', parentId: call.parentId, templateName: String(call.template.name) });
    return finish(node, 'Error', MAX_DEPTH_MESSAGE);
  }
  const memo = call.template.memoize as Json | undefined;
  if (!memo || ctx.input.reuse?.[call.name] || !patched(ARGO_PATCHES.memoize)) return runUncached(ctx, call);
  const key = memoKey(memo, call, ctx.global, ctx.wfArtifacts);
  if (key === undefined) return runUncached(ctx, call);
  const { cache, maxAgeMs } = memoCache(memo);
  const hit = await ctx.acts.argoMemoGet({ cache, key, maxAgeMs });
  if (hit.outputs) {
    const tmpl = call.template;
    const node = ctx.nodes.add({ name: call.name, displayName: call.displayName, type: templateKind(tmpl), parentId: call.parentId, templateName: String(tmpl.name) });
    node.memoizationStatus = { hit: true, key, cacheName: cache };
    return finish(node, 'Succeeded', memoHitMessage(cache, key, hit.nodeId), hit.outputs);
  }
  const r = await runUncached(ctx, call);
  const node = ctx.status.nodes[r.id];
  if (node) node.memoizationStatus = { hit: false, key, cacheName: cache };
  if (r.phase === 'Succeeded') await ctx.acts.argoMemoPut({ cache, key, nodeId: r.id, outputs: r.outputs });
  return r;
}

async function runUncached(ctx: RunContext, call: Call): Promise<NodeResult> {
  const tmpl = call.template;
  const retry = tmpl.retryStrategy as Json | undefined;
  const kind = templateKind(tmpl);
  const reused = ctx.input.reuse?.[call.name];
  if (reused && kind !== 'Steps' && kind !== 'DAG') {
    // Retry of a run: this leaf succeeded before, so its recorded outputs stand in for running it.
    const node = ctx.nodes.add({ name: call.name, displayName: call.displayName, type: retry ? 'Retry' : kind, parentId: call.parentId, templateName: String(tmpl.name), reusedFrom: reused.from });
    return finish(node, 'Succeeded', `reused from ${reused.from}`, reused.outputs);
  }
  if (!retry) return runOnce(ctx, call, kind, 0);
  const parent = ctx.nodes.add({ name: call.name, displayName: call.displayName, type: 'Retry', parentId: call.parentId, templateName: String(tmpl.name) });
  const plan = retryPlan(retry, ctx.global);
  const startedAt = Date.now();
  let last: NodeResult | undefined;
  for (let attempt = 0; ; attempt++) {
    const extra: Scope = { retries: String(attempt) };
    if (last) Object.assign(extra, lastRetryScope(last, ctx.status.nodes[last.id]));
    last = await runOnce(ctx, { ...call, name: `${call.name}(${attempt})`, displayName: `${call.displayName}(${attempt})`, parentId: parent.id, extra }, kind, attempt);
    if (!failed(last.phase)) break;
    if (!policyRetries(plan, last.phase, attempt)) break;
    if (!expressionRetries(plan, lastRetryScope(last, ctx.status.nodes[last.id]))) break;
    const delay = retryDelay(plan, attempt);
    if (pastMaxDuration(plan, startedAt, Date.now(), delay)) break;
    if (delay > 0) await sleep(delay);
  }
  return finish(parent, last.phase, last.message, last.outputs);
}

async function runOnce(ctx: RunContext, call: Call, kind: ArgoNode['type'], attempt: number): Promise<NodeResult> {
  const tmpl = call.template;
  const node = ctx.nodes.add({ name: call.name, displayName: call.displayName, type: kind, parentId: call.parentId, templateName: String(tmpl.name) });
  let bound: BoundInputs;
  try {
    bound = bindInputs(tmpl, call.args, { ...ctx.global, ...call.extra, 'pod.name': node.id, 'node.name': node.name }, ctx.wfArtifacts);
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    return finish(node, 'Error', e.message);
  }
  // The template's `workflows.argoproj.io/display-name` annotation (its inputs substituted) names the node.
  const displayName = ((tmpl.metadata as Json | undefined)?.annotations as Json | undefined)?.[DISPLAY_NAME];
  if (displayName !== undefined && patched(ARGO_PATCHES.displayName)) {
    const dn = substitute(String(displayName), bound.scope);
    if (!DISPLAY_NAME_RE.test(dn)) return finish(node, 'Error', `displayName must match the regex ${DISPLAY_NAME_RE.source}`);
    node.displayName = dn;
  }
  const sync = tmpl.synchronization as Json | undefined;
  if (!sync || !patched(ARGO_PATCHES.sync)) return runBody(ctx, tmpl, node, bound, attempt, call.daemons);
  // Template-level synchronization: the node waits (Pending) for its locks, holds them while it
  // runs, and releases them however it ends.
  let locks: LockRef[];
  try {
    locks = syncLocks(substituteDeep(sync, bound.scope), ctx.input.namespace ?? 'default');
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    return finish(node, 'Error', e.message);
  }
  const key = holderKey(ctx.info, node.id);
  let held: LockRef[];
  try {
    held = await acquireLocks(ctx, locks, key, `${ctx.input.name}/${node.name}`, (msg) => {
      node.phase = msg ? 'Pending' : 'Running';
      if (msg) node.message = msg;
      else delete node.message;
    });
  } catch (e) {
    if (isCancellation(e)) {
      finish(node, 'Failed', ctx.stopMessage ?? 'cancelled');
      throw e;
    }
    return finish(node, 'Error', activityMessage(e));
  }
  try {
    return await runBody(ctx, tmpl, node, bound, attempt, call.daemons);
  } finally {
    await releaseLocks(ctx, held, key);
  }
}

async function runBody(ctx: RunContext, tmpl: Json, node: ArgoNode, bound: BoundInputs, attempt: number, daemons: Call['daemons']): Promise<NodeResult> {
  try {
    if (tmpl.steps) return await runSteps(ctx, tmpl, bound.scope, node);
    if (tmpl.dag) return await runDag(ctx, tmpl, bound.scope, node);
    if (tmpl.suspend) return await runSuspend(ctx, tmpl, bound.scope, node);
    if (tmpl.http) return await runHttp(ctx, tmpl, bound.scope, node);
    if (tmpl.container || tmpl.script || tmpl.plugin) return await runPod(ctx, tmpl, bound.scope, node, bound.artifacts, attempt, daemons);
    if (tmpl.resource) {
      // Inline, not a function of its own: an extra await here would reorder commands of parallel branches.
      try {
        const r = await ctx.acts.argoResource(resourceInput(tmpl, bound.scope));
        if (r.resourceName) node.jobName = r.resourceName;
        const outputs: NodeOutputs = { parameters: r.parameters, artifacts: {} };
        return finish(node, r.phase, r.message, r.phase === 'Succeeded' ? templateOutputs(tmpl, bound.scope, outputs, ctx.global) : outputs);
      } catch (e) {
        if (isCancellation(e)) throw e;
        return finish(node, 'Error', activityMessage(e));
      }
    }
    return finish(node, 'Error', `template type of "${String(tmpl.name)}" is not supported on Tandem (containerSet, data)`);
  } catch (e) {
    if (e instanceof UserError) return finish(node, 'Error', e.message);
    if (isCancellation(e)) {
      finish(node, 'Failed', ctx.stopMessage ?? 'cancelled');
      throw e;
    }
    const msg = (e as Error).message;
    if ((e as Error).name === 'ExprError') return finish(node, 'Error', msg);
    throw e;
  }
}
