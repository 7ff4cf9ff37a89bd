// Argo-style retry of a finished run: successful nodes are reused (their outputs memoized, nothing
// re-runs), failed ones run again. With --restart-successful, the nodes a selector names run again
// too, together with the DAG tasks they depend on and every task downstream of them.
import type { ArgoStatus, ReusedNode } from './lang/types.js';
import { dependsOf, dependsTasks, parseDepends } from './lang/depends.js';

type Json = Record<string, unknown>;

const LEAF = new Set(['Pod', 'HTTP', 'Resource', 'Suspend', 'Retry', 'Plugin']);

export interface RetryPlan {
  reuse: Record<string, ReusedNode>;
  /** Successful nodes that will run again, and why. */
  restarted: { name: string; why: 'selected' | 'upstream' | 'downstream' }[];
}

/** `key=value` over displayName, name, templateName or id (Argo's --node-field-selector subset). */
export function parseSelector(selector: string, flag = '--selector'): { key: 'displayName' | 'name' | 'templateName' | 'id'; value: string } {
  const m = /^(displayName|name|templateName|id)=(.+)$/.exec(selector.trim());
  if (!m) throw new Error(`${flag} must look like displayName=<node> (or name=, templateName=, id=); got ${JSON.stringify(selector)}`);
  return { key: m[1] as 'displayName', value: m[2]! };
}

const stripLoop = (display: string) => display.replace(/\(\d+:.*\)$/, '');

export function planRetry(prev: ArgoStatus, spec: Json, opts: { restartSuccessful?: boolean; selector?: string } = {}): RetryPlan {
  const nodes = Object.values(prev.nodes);
  const reusable = nodes.filter((n) => n.phase === 'Succeeded' && LEAF.has(n.type) && !/\(\d+\)$/.test(n.name) && !n.name.endsWith('.onExit'));
  const reuse: Record<string, ReusedNode> = Object.fromEntries(reusable.map((n) => [n.name, { outputs: n.outputs ?? { parameters: {}, artifacts: {} }, from: n.id }]));
  const restarted: RetryPlan['restarted'] = [];
  if (!opts.restartSuccessful) return { reuse, restarted };
  if (!opts.selector) throw new Error('--restart-successful needs --selector (e.g. displayName=train)');
  const sel = parseSelector(opts.selector);
  const chosen = reusable.filter((n) => String(n[sel.key]) === sel.value);
  if (chosen.length === 0) throw new Error(`no successful node matches ${opts.selector} (successful: ${reusable.map((n) => n.displayName).join(', ') || 'none'})`);
  const templates = new Map(((spec.templates ?? []) as Json[]).map((t) => [String(t.name), t]));
  const drop = (name: string, why: RetryPlan['restarted'][number]['why']) => {
    if (name in reuse && !restarted.some((r) => r.name === name)) {
      delete reuse[name];
      restarted.push({ name, why });
    }
  };
  for (const node of chosen) {
    drop(node.name, 'selected');
    // Within a DAG, the task's dependencies (transitively) run again, and so does everything after it.
    const parent = node.parentId ? prev.nodes[node.parentId] : undefined;
    const dag = parent?.templateName ? (templates.get(parent.templateName)?.dag as Json | undefined) : undefined;
    if (!parent || !dag) continue;
    const tasks = (dag.tasks ?? []) as Json[];
    const deps = new Map(tasks.map((t) => [String(t.name), (() => {
      const d = dependsOf(t as { depends?: string; dependencies?: string[] });
      return d ? dependsTasks(parseDepends(d)) : [];
    })()]));
    const closure = (start: string, next: (t: string) => string[]) => {
      const seen = new Set<string>();
      const stack = [...next(start)];
      while (stack.length) {
        const t = stack.pop()!;
        if (!seen.has(t)) {
          seen.add(t);
          stack.push(...next(t));
        }
      }
      return seen;
    };
    const task = stripLoop(node.displayName);
    const upstream = closure(task, (t) => deps.get(t) ?? []);
    const downstream = closure(task, (t) => [...deps].filter(([, d]) => d.includes(t)).map(([n]) => n));
    for (const n of nodes) {
      if (n.parentId !== parent.id && !(n.parentId && prev.nodes[n.parentId]?.parentId === parent.id)) continue;
      const t = stripLoop(n.displayName);
      if (upstream.has(t)) drop(n.name, 'upstream');
      else if (downstream.has(t)) drop(n.name, 'downstream');
    }
  }
  return { reuse, restarted };
}
