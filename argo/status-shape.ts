// A run's status in the shape Argo's API gives it (`argo get -o json`): nodes keyed by id, each with
// its type, phase, templateName, boundaryID, children, outboundNodes and outputs as Argo lists them.
// The interpreter keeps a containment tree (a node's parent is the node that runs it); Argo's
// `children` are the graph's edges instead (workflow/controller/steps.go, dag.go, operator.go
// getOutboundNodes), which this derives from the containment tree and the run's spec:
// - a Steps node's child is its first step group; a step group's children are its steps (loop items
//   included); every outbound node of a group's steps has the next group as its child;
// - a DAG node's children are its tasks without dependencies; every outbound node of a task has the
//   tasks that depend on it as children; a TaskGroup's children are its items;
// - a Retry node's children are its attempts; a step's or task's exit hook is the step's child;
// - boundaryID: the Steps or DAG node a node runs in (a Retry attempt: its Retry node's).
import { dependsOf, dependsTasks, parseDepends } from './lang/depends.js';
import type { ArgoNode, ArgoStatus, Json } from './lang/types.js';

export interface ArgoShapeNode {
  id: string;
  name: string;
  displayName: string;
  type: string;
  templateName?: string;
  phase: string;
  boundaryID?: string;
  children?: string[];
  outboundNodes?: string[];
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  outputs?: { parameters?: { name: string; value: string }[]; artifacts?: { name: string; path?: string; location?: string }[]; result?: string; exitCode?: string };
  memoizationStatus?: { hit: boolean; key: string; cacheName: string };
}

export interface ArgoShape {
  apiVersion: 'argoproj.io/v1alpha1';
  kind: 'Workflow';
  metadata: { name: string; namespace?: string };
  spec?: Json;
  status: { phase: string; message?: string; startedAt?: string; finishedAt?: string; nodes: Record<string, ArgoShapeNode>; outputs?: { parameters: { name: string; value: string }[] } };
}

const LEAVES = new Set(['Pod', 'Skipped', 'Suspend', 'HTTP', 'Plugin', 'Resource']);

export function argoShape(st: ArgoStatus, spec?: Json, namespace?: string): ArgoShape {
  const nodes = st.nodes;
  const templates = new Map((Array.isArray(spec?.templates) ? (spec.templates as Json[]) : []).map((t) => [String(t.name), t]));
  const kids = new Map<string, string[]>(Object.keys(nodes).map((id) => [id, []]));
  const link = (from: string | undefined, to: string) => {
    if (!from || !nodes[from]) return;
    const l = kids.get(from)!;
    if (!l.includes(to)) l.push(to);
  };
  const contained = (n: ArgoNode) => n.children.map((c) => nodes[c]).filter((c): c is ArgoNode => !!c);
  const isHook = (n: ArgoNode) => n.name.endsWith('.onExit') && n.id !== st.name;
  // The step or task a hook belongs to: the node named as the hook without its `.onExit`.
  const byName = new Map(Object.values(nodes).map((n) => [n.name, n]));
  const hookOwner = (n: ArgoNode) => byName.get(n.name.slice(0, -'.onExit'.length));

  const outboundMemo = new Map<string, string[]>();
  const outbound = (n: ArgoNode): string[] => {
    const memo = outboundMemo.get(n.id);
    if (memo) return memo;
    let out: string[];
    if (LEAVES.has(n.type)) out = [n.id];
    else if (n.type === 'TaskGroup') {
      const items = contained(n).filter((c) => !isHook(c));
      out = items.length ? items.flatMap(outbound) : [n.id];
    } else if (n.type === 'Retry') {
      const last = contained(n).filter((c) => !isHook(c)).at(-1);
      out = last ? [last.id] : [];
    } else if (n.memoizationStatus?.hit) out = [n.id];
    else if (n.type === 'Steps') {
      const groups = contained(n).filter((c) => c.type === 'StepGroup');
      const last = groups.at(-1);
      out = last ? contained(last).filter((c) => !isHook(c)).flatMap(outbound) : [];
    } else if (n.type === 'DAG') out = dagTargets(n).flatMap(outbound);
    else out = [n.id];
    outboundMemo.set(n.id, out);
    return out;
  };
  const dagTasks = (n: ArgoNode): Json[] => {
    const t = templates.get(n.templateName ?? '');
    const tasks = (t?.dag as Json | undefined)?.tasks;
    return Array.isArray(tasks) ? (tasks as Json[]) : [];
  };
  const taskDeps = (task: Json): string[] => {
    const d = dependsOf(task as { depends?: string; dependencies?: string[] });
    if (!d) return [];
    try {
      return [...new Set(dependsTasks(parseDepends(d)))];
    } catch {
      return [];
    }
  };
  const taskNode = (dag: ArgoNode, task: string) => contained(dag).find((c) => !isHook(c) && c.displayName === task);
  // Argo's targets: dag.target, else every task no other task depends on.
  const dagTargets = (n: ArgoNode): ArgoNode[] => {
    const tasks = dagTasks(n);
    const t = templates.get(n.templateName ?? '');
    const target = (t?.dag as Json | undefined)?.target;
    const dependedOn = new Set(tasks.flatMap(taskDeps));
    const names = typeof target === 'string' && target.trim() && !target.includes('{{') ? target.trim().split(/\s+/) : tasks.map((x) => String(x.name)).filter((x) => !dependedOn.has(x));
    const found = names.map((x) => taskNode(n, x)).filter((x): x is ArgoNode => !!x);
    // No spec (or a target only known at run time): the tasks nothing here depends on.
    return found.length || tasks.length ? found : contained(n).filter((c) => !isHook(c));
  };

  const boundary = new Map<string, string | undefined>();
  const walk = (n: ArgoNode, b: string | undefined) => {
    boundary.set(n.id, b);
    const inner = n.type === 'Steps' || n.type === 'DAG' ? n.id : b;
    for (const c of contained(n)) walk(c, inner);
  };
  const root = nodes[st.name];
  if (root) walk(root, undefined);
  for (const n of Object.values(nodes)) if (!boundary.has(n.id)) walk(n, undefined); // the workflow's exit handler

  for (const n of Object.values(nodes)) {
    const cs = contained(n);
    for (const h of cs.filter(isHook)) link(hookOwner(h)?.id ?? n.id, h.id);
    const own = cs.filter((c) => !isHook(c));
    if (n.type === 'Steps') {
      const groups = own.filter((c) => c.type === 'StepGroup');
      if (groups[0]) link(n.id, groups[0].id);
      groups.forEach((g, i) => {
        const next = groups[i + 1];
        if (!next) return;
        const steps = contained(g).filter((c) => !isHook(c));
        if (!steps.length) link(g.id, next.id);
        for (const s of steps) for (const o of outbound(s)) link(o, next.id);
      });
      for (const c of own.filter((x) => x.type !== 'StepGroup')) link(n.id, c.id);
    } else if (n.type === 'DAG') {
      const tasks = new Map(dagTasks(n).map((t) => [String(t.name), t]));
      for (const c of own) {
        const task = tasks.get(c.displayName);
        const deps = task ? taskDeps(task) : [];
        const from = deps.map((d) => taskNode(n, d)).filter((x): x is ArgoNode => !!x);
        if (!from.length) link(n.id, c.id);
        for (const f of from) for (const o of outbound(f)) link(o, c.id);
      }
    } else for (const c of own) link(n.id, c.id);
  }

  const shaped: Record<string, ArgoShapeNode> = {};
  for (const n of Object.values(nodes)) {
    const s: ArgoShapeNode = { id: n.id, name: n.name, displayName: n.displayName, type: n.type === 'Resource' ? 'Pod' : n.type, phase: n.phase };
    if (n.templateName) s.templateName = n.templateName;
    const b = boundary.get(n.id);
    if (b) s.boundaryID = b;
    const c = kids.get(n.id)!;
    if (c.length) s.children = c;
    if (n.type === 'Steps' || n.type === 'DAG') {
      const o = outbound(n);
      if (o.length) s.outboundNodes = o;
    }
    if (n.message) s.message = n.message;
    if (n.startedAt) s.startedAt = n.startedAt;
    if (n.finishedAt) s.finishedAt = n.finishedAt;
    if (n.memoizationStatus) s.memoizationStatus = n.memoizationStatus;
    // Argo keeps no outputs on a TaskGroup: a loop's aggregate lives in its parent's scope only.
    const out = n.type === 'TaskGroup' ? undefined : n.outputs;
    if (out) {
      const o: NonNullable<ArgoShapeNode['outputs']> = {};
      const params = Object.entries(out.parameters);
      if (params.length) o.parameters = params.map(([name, value]) => ({ name, value }));
      const arts = Object.entries(out.artifacts);
      if (arts.length) o.artifacts = arts.map(([name, location]) => ({ name, location }));
      if (out.result !== undefined) o.result = out.result;
      if (out.exitCode !== undefined) o.exitCode = out.exitCode;
      if (Object.keys(o).length) s.outputs = o;
    }
    shaped[n.id] = s;
  }
  const status: ArgoShape['status'] = { phase: st.phase, nodes: shaped };
  if (st.message) status.message = st.message;
  if (st.startedAt) status.startedAt = st.startedAt;
  if (st.finishedAt) status.finishedAt = st.finishedAt;
  if (st.outputs?.parameters) status.outputs = { parameters: Object.entries(st.outputs.parameters).map(([name, value]) => ({ name, value })) };
  return { apiVersion: 'argoproj.io/v1alpha1', kind: 'Workflow', metadata: { name: st.name, ...(namespace ? { namespace } : {}) }, ...(spec ? { spec } : {}), status };
}
