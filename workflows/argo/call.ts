// One step or task calling a template: its `when`, its loop (one call per item, in parallel, under a
// TaskGroup node for a task, in the step group for a step), its exit hook and its lifecycle hooks
// (Hooks, also the workflow's own).
import { evaluateExpr } from '../../argo/lang/expr.js';
import { evaluateWhen } from '../../argo/lang/govaluate.js';
import { scopeEnv, substitute, substituteDeep, type Scope } from '../../argo/lang/tags.js';
import type { ArgoNode, Json, Phase } from '../../argo/lang/types.js';
import type { RunContext, Semaphore } from './context.js';
import { publish } from './io.js';
import { expandItems, itemLabel, itemScope, loopOutcome } from './loops.js';
import { isLoopStep } from '../../argo/lang/sequence.js';
import { exitTemplateName, failed, lifecycleHooks, UserError, type Call, type CallArgs, type FailFastGate, type LoopResult, type NodeResult } from './model.js';
import { finish } from './nodes.js';

/** The template a step or task calls: a named one of the spec, or its `inline` template. */
export function resolveCallee(step: Json, templates: Map<string, Json>): Json {
  if (step.inline) return { name: `${String(step.name)}-inline`, ...(step.inline as Json) };
  const name = String(step.template);
  const t = templates.get(name);
  if (!t) throw new UserError(`template "${name}" not found`);
  return t;
}

/** What the steps or DAG template around a call shares with it. */
export interface Enclosing {
  /** Its daemons, stopped when it ends. */
  daemons?: Call['daemons'];
  /** Its `failFast: true`: a call (or loop item) that would start after a failure does not. */
  gate?: FailFastGate;
  /**
   * A steps template's step group (ARGO_PATCHES.loopNodes): a loop's items hang from the group
   * itself, as Argo expands them into the group (expandStepGroup), with no node for the loop.
   */
  flatLoop?: boolean;
}

/**
 * Runs one step or task, including its loop expansion; returns the (loop) node's result, or undefined
 * when failFast kept it (every item of it) from starting.
 */
export async function runCall(ctx: RunContext, step: Json, scope: Scope, parentId: string, parentName: string, parallel?: Semaphore, enclosing: Enclosing = {}): Promise<NodeResult | undefined> {
  const stepName = String(step.name);
  // Checked only for a loop: patched() is asked where it can change something.
  const items = isLoopStep(step) ? expandItems(step, scope, ctx.patched('loopChecks')) : undefined;
  const callee = resolveCallee(step, ctx.templates);
  const one = callRunner(ctx, step, callee, parentName, parallel, enclosing);
  if (items === undefined) return one(scope, stepName, parentId);
  const argoAggregate = ctx.patched('loopAggregate');
  if (items.length === 0 && ctx.patched('loopNodes')) {
    // Argo: an empty withItems/withParam/withSequence is one Skipped node, not an empty group.
    const n = ctx.nodes.add({ name: `${parentName}.${stepName}`, displayName: stepName, type: 'Skipped', parentId, templateName: String(callee.name) });
    const r: LoopResult = finish(n, 'Skipped', 'Skipped, empty params');
    r.children = [];
    r.itemParameters = [];
    return r;
  }
  // A loop: its items run in parallel (bounded by parallelism), under a TaskGroup node (a DAG task),
  // or directly in the step group (a step, flatLoop).
  const group = enclosing.flatLoop ? undefined : ctx.nodes.add({ name: `${parentName}.${stepName}`, displayName: stepName, type: 'TaskGroup', parentId, templateName: String(callee.name) });
  const groupId = group ? group.id : parentId;
  const inline = () => Promise.all(items.map((item, i) => one(itemScope(scope, item), `${stepName}(${i}:${itemLabel(item)})`, groupId)));
  // A large loop may run in child workflows instead (workflows/argo/fanout.ts); inline it is this same promise.
  const all = await (ctx.fanOut ? ctx.fanOut.loop({ step, callee, scope, items, parentName, groupId, parallel, enclosing }, inline) : inline());
  const results = all.filter((r): r is NodeResult => r !== undefined);
  const outcome = loopOutcome(results, argoAggregate);
  let res: LoopResult;
  if (group) res = finish(group, outcome.phase, outcome.message, outcome.outputs);
  else {
    // No node of its own: its step group names the first failed item (`child '<id>' failed`).
    const first = results.find((r) => failed(r.phase)) ?? results[0];
    if (!first) return undefined;
    res = { id: first.id, phase: outcome.phase, message: outcome.message, outputs: outcome.outputs };
  }
  res.children = results.map((r): Phase => r.phase);
  if (ctx.patched('loopOutputs')) res.itemParameters = outcome.itemParameters;
  return res;
}

/** One call of a step or task (a loop runs it once per item): `when`, arguments, parallelism, its exit hook. */
export type ItemRunner = (s: Scope, display: string, parent: string) => Promise<NodeResult | undefined>;

export function callRunner(ctx: RunContext, step: Json, callee: Json, parentName: string, parallel?: Semaphore, enclosing: Enclosing = {}): ItemRunner {
  const { gate } = enclosing;
  const stepName = String(step.name);
  return async (s: Scope, display: string, parent: string): Promise<NodeResult | undefined> => {
    if (step.when !== undefined) {
      const when = substitute(String(step.when), s);
      let ok: boolean;
      try {
        ok = /^\s*\{\{=/.test(String(step.when)) ? when === 'true' : evaluateWhen(when);
      } catch (e) {
        const n = ctx.nodes.add({ name: `${parentName}.${display}`, displayName: display, type: 'Skipped', parentId: parent, templateName: String(callee.name) });
        return finish(n, 'Error', (e as Error).message);
      }
      if (!ok) {
        const n = ctx.nodes.add({ name: `${parentName}.${display}`, displayName: display, type: 'Skipped', parentId: parent, templateName: String(callee.name) });
        return finish(n, 'Skipped', `when '${when}' evaluated false`);
      }
    }
    const args = substituteDeep((step.arguments ?? {}) as CallArgs, s);
    const call: Call = { template: callee, args, name: `${parentName}.${display}`, displayName: display, parentId: parent, ...(enclosing.daemons ? { daemons: enclosing.daemons } : {}) };
    // failFast is checked once the call holds its parallelism slot: that is when Argo would start it.
    // Not async: an extra tick here would reorder the commands of parallel branches.
    const run = (): Promise<NodeResult | undefined> => (gate?.tripped ? Promise.resolve(undefined) : ctx.fanOut ? ctx.fanOut.call(call, parentName, enclosing) : ctx.runTemplate(call));
    const hooks = lifecycleHooks(step);
    const lifecycle = hooks.length > 0 && ctx.patched('lifecycleHooks') ? new Hooks(ctx, hooks, stepName, display) : undefined;
    const started = parallel ? parallel.run(run) : run();
    // Argo evaluates a step's hooks while it runs (its status Running) and once it ended.
    lifecycle?.fire('Running', s, Object.values(ctx.status.nodes).find((n) => n.name === call.name));
    const r = await started;
    if (!r) return undefined;
    lifecycle?.fire(r.phase, s, ctx.status.nodes[r.id], r);
    if (gate && failed(r.phase)) gate.tripped = true;
    const exitTmpl = exitTemplateName(step);
    if (exitTmpl) {
      const hs: Scope = { ...s };
      publish(hs, `steps.${stepName}`, r, ctx.status.nodes[r.id]);
      publish(hs, `tasks.${stepName}`, r, ctx.status.nodes[r.id]);
      const t = ctx.templates.get(exitTmpl);
      const hookArgs = substituteDeep((((step.hooks as Json | undefined)?.exit as Json | undefined)?.arguments ?? {}) as CallArgs, hs);
      if (t) await ctx.runTemplate({ template: t, args: hookArgs, name: `${parentName}.${display}.onExit`, displayName: `${display}.onExit`, parentId: parent });
    }
    // The step is done once its hooks are (executeStepGroup waits for them); their phases are their own.
    await lifecycle?.done();
    return r;
  };
}

/**
 * A slice of a loop's items, `offset` the first one's index, as a child workflow runs it (fanout.ts):
 * at most `window` items started at once, the next as one ends, so that no workflow task does more than
 * a window's worth of work however long the slice (a workflow task is cut off after 5 s of wall time,
 * which a loaded worker reaches with a few hundred items at once).
 */
export async function runItems(ctx: RunContext, step: Json, scope: Scope, items: unknown[], offset: number, parentName: string, groupId: string, parallel?: Semaphore, window = 50): Promise<(NodeResult | undefined)[]> {
  const one = callRunner(ctx, step, resolveCallee(step, ctx.templates), parentName, parallel);
  const stepName = String(step.name);
  const out: (NodeResult | undefined)[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const j = next++;
      out[j] = await one(itemScope(scope, items[j]), `${stepName}(${offset + j}:${itemLabel(items[j])})`, groupId);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, window), items.length) }, lane));
  return out;
}

/**
 * Lifecycle hooks other than `exit` (ARGO_PATCHES.lifecycleHooks), as Argo's executeTmplLifeCycleHook
 * and executeWfLifeCycleHook run them: each hook whose `expression` holds (with `steps.<name>.status`,
 * `tasks.<name>.status` or `workflow.status` as it stands) runs once, as the node
 * `<node>.hooks.<hook>` under the node it watches; a failed hook does not fail that node.
 */
export class Hooks {
  private readonly fired = new Set<string>();
  private readonly running: Promise<unknown>[] = [];
  constructor(
    private readonly ctx: RunContext,
    private readonly hooks: [string, Json][],
    /** The step or task watched (its `steps.X`/`tasks.X`), or undefined for the workflow's hooks. */
    private readonly stepName: string | undefined,
    private readonly display: string,
  ) {}

  fire(phase: Phase, scope: Scope, node: ArgoNode | undefined, r?: NodeResult): void {
    if (!node) return;
    const hs: Scope = { ...scope };
    if (this.stepName !== undefined) {
      for (const p of [`steps.${this.stepName}`, `tasks.${this.stepName}`]) {
        if (r) publish(hs, p, r, node);
        hs[`${p}.status`] = phase;
      }
    } else hs['workflow.status'] = phase;
    for (const [name, hook] of this.hooks) {
      if (this.fired.has(name)) continue;
      let go = false;
      try {
        go = evaluateExpr(String(hook.expression ?? 'false'), scopeEnv(hs)) === true;
      } catch {
        go = false; // the linter refuses expressions that do not parse; one naming what is not there yet is false
      }
      if (!go) continue;
      this.fired.add(name);
      const t = this.ctx.templates.get(String(hook.template));
      if (!t) continue;
      const args = substituteDeep((hook.arguments ?? {}) as CallArgs, hs);
      this.running.push(this.ctx.runTemplate({ template: t, args, name: `${node.name}.hooks.${name}`, displayName: `${this.display}.hooks.${name}`, parentId: node.id }).catch(() => undefined));
    }
  }

  async done(): Promise<void> {
    await Promise.all(this.running);
  }
}
