// A `dag` template: each task starts once every task its `depends` names has finished, and runs if
// that expression holds (else Omitted). dag.failFast stops scheduling after an unhandled failure; the
// template's own `failFast: true` after any failure (and fails it). Its daemon tasks stop when it ends.
import type { CancellationScope } from '@temporalio/workflow';
import { argoBareDepends, dependsOf, dependsTasks, evaluateDepends, parseDepends, type TaskResult } from '../../argo/lang/depends.js';
import { substitute, type Scope } from '../../argo/lang/tags.js';
import type { ArgoNode, Json } from '../../argo/lang/types.js';
import { runCall } from './call.js';
import type { RunContext } from './context.js';
import { publish, templateOutputs } from './io.js';
import { arr, continueOn, emptyOutputs, FAIL_FAST_MESSAGE, failed, UserError, type FailFastGate, type LoopResult, type NodeResult } from './model.js';
import { finish } from './nodes.js';

export type Depends = ReturnType<typeof parseDepends>;

/** Each task's parsed `depends` (or `dependencies`), by task name. */
export function taskDepends(tasks: Json[]): Map<string, Depends | undefined> {
  return new Map(
    tasks.map((t) => {
      const d = dependsOf(t as { depends?: string; dependencies?: string[] });
      return [String(t.name), d ? parseDepends(d) : undefined] as const;
    }),
  );
}

/** The tasks that must finish before `name` starts. */
export function neededBy(deps: Map<string, Depends | undefined>, name: string): string[] {
  const d = deps.get(name);
  return d ? [...new Set(dependsTasks(d))] : [];
}

/** `target`: only the named tasks and what they need run; every task without one. */
export function wantedTasks(tasks: Json[], deps: Map<string, Depends | undefined>, target: string): Set<string> {
  if (!target.trim()) return new Set(tasks.map((t) => String(t.name)));
  const wanted = new Set<string>();
  const add = (n: string) => {
    if (wanted.has(n)) return;
    wanted.add(n);
    neededBy(deps, n).forEach(add);
  };
  target.split(/\s+/).filter(Boolean).forEach(add);
  return wanted;
}

/**
 * A failure is handled when some task's `depends` names it explicitly (B.Failed, B.Errored…): then
 * neither failFast nor the DAG's phase treat it as fatal.
 */
export function failureHandled(tasks: Json[], name: string): boolean {
  return tasks.some((t) => /[.!]|Failed|Errored/.test(String(t.depends ?? '')) && new RegExp(`(^|[^A-Za-z0-9_-])${name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}\\.(Failed|Errored|AllFailed|AnySucceeded)`).test(String(t.depends ?? '')));
}

export async function runDag(ctx: RunContext, tmpl: Json, scope: Scope, node: ArgoNode): Promise<NodeResult> {
  const dag = tmpl.dag as Json;
  const tasks = arr(dag.tasks);
  const failFast = dag.failFast !== false;
  const parallel = tmpl.parallelism !== undefined ? ctx.semaphore(Number(tmpl.parallelism)) : undefined;
  const local: Scope = { ...scope };
  const results: Record<string, TaskResult & { r?: NodeResult }> = {};
  const deps = taskDepends(tasks);
  const wanted = wantedTasks(tasks, deps, dag.target !== undefined ? substitute(String(dag.target), scope) : '');
  const started = new Set<string>();
  let stopScheduling = false;
  const running = new Map<string, Promise<void>>();
  const daemons: CancellationScope[] = [];
  const gate: FailFastGate | undefined = tmpl.failFast === true && ctx.patched('templateFailFast') ? { tripped: false } : undefined;
  // ARGO_PATCHES.dagOmitted: a bare task name in `depends` means what Argo expands it to (an Omitted
  // task does not satisfy it, a continueOn failure does); once scheduling stopped, a task whose
  // dependencies all ended and whose `depends` does not hold is still Omitted (Argo evaluates it in
  // the pass that saw the failure), and an Omitted task lets the tasks after it be evaluated in turn,
  // wherever they stand in the list.
  const argo = ctx.patched('dagOmitted');
  const byName = new Map(tasks.map((t) => [String(t.name), t]));
  const bare = argo ? argoBareDepends((n) => byName.get(n)?.continueOn as { failed?: boolean; error?: boolean } | undefined) : undefined;
  try {
    for (;;) {
      let omitted = false;
      for (const t of tasks) {
        const name = String(t.name);
        if (started.has(name) || !wanted.has(name)) continue;
        const req = neededBy(deps, name);
        if (!req.every((d) => results[d])) continue;
        const dep = deps.get(name);
        let go = true;
        try {
          go = dep ? evaluateDepends(dep, results, bare) : true;
        } catch {
          go = false;
        }
        if (stopScheduling && (go || !argo)) continue;
        started.add(name);
        if (!go) {
          omitted = true;
          const n = ctx.nodes.add({ name: `${node.name}.${name}`, displayName: name, type: 'Skipped', parentId: node.id, templateName: String(t.template ?? '') });
          const r = finish(n, 'Omitted', 'omitted: depends condition not met');
          results[name] = { phase: 'Omitted', r };
          publish(local, `tasks.${name}`, r, n);
          continue;
        }
        running.set(
          name,
          (async () => {
            let r: NodeResult | undefined;
            try {
              r = await runCall(ctx, t, local, node.id, node.name, parallel, { daemons, gate });
            } catch (e) {
              if (!(e instanceof UserError)) throw e;
              if (gate) gate.tripped = true;
              const n = ctx.nodes.add({ name: `${node.name}.${name}`, displayName: name, type: 'Pod', parentId: node.id });
              r = finish(n, 'Error', e.message);
            }
            if (gate?.tripped) stopScheduling = true;
            if (!r) {
              // Kept from starting by failFast: it has no node and no result.
              running.delete(name);
              return;
            }
            results[name] = { phase: r.phase, daemoned: r.daemoned, children: (r as LoopResult).children, r };
            publish(local, `tasks.${name}`, r, ctx.status.nodes[r.id]);
            if (failed(r.phase) && failFast && !continueOn(t, r.phase) && !failureHandled(tasks, name)) stopScheduling = true;
            running.delete(name);
          })(),
        );
      }
      if (running.size === 0) {
        if (omitted && argo) continue;
        break;
      }
      await Promise.race(running.values());
    }
  } finally {
    daemons.forEach((d) => d.cancel());
  }
  if (gate?.tripped) return finish(node, 'Failed', FAIL_FAST_MESSAGE);
  // The DAG fails when a task failed and nothing handles it: not continueOn, and no task's
  // `depends` names its failure explicitly (e.g. `B.Failed`, `!B.Succeeded`).
  const bad = tasks.map((t) => [t, results[String(t.name)]] as const).find(([t, r]) => r && failed(r.phase) && !continueOn(t, r.phase) && !failureHandled(tasks, String(t.name)));
  // Argo leaves a failed DAG's own message empty (executeDAG marks only its phase).
  if (bad) return finish(node, bad[1]!.phase, argo ? undefined : (bad[1]!.r?.message ?? `task ${String(bad[0].name)} failed`));
  return finish(node, 'Succeeded', undefined, templateOutputs(tmpl, local, emptyOutputs(), ctx.global));
}
