// The node-tree comparer of the Argo oracle (./oracle.ts): two workflows' status.nodes in the shape
// Argo's API gives them (`argo get -o json`), compared node by node. It imports nothing — not Tandem's
// interpreter, not its status shaping — so it cannot share a mistake with them.
//
// Nodes are matched by their path below the workflow: Argo builds a node's `name` as its parent's name
// followed by the node's place in it (`wf[0].step(1:a)`, `wf.task.onExit`, `wf[1].retry(0)`), i.e. the
// chain of display names from the root, whatever the ids are; the workflow's own name is dropped, so
// two runs of one example under different names still match. For each node present on both sides:
// type, phase, templateName, displayName (not the root's: the workflow's name) and the output
// parameters' values. Times, ids, messages,
// progress, resources, children and boundaries are not compared.

export interface CmpNode {
  id?: string;
  name: string;
  displayName?: string;
  type?: string;
  phase?: string;
  templateName?: string;
  templateRef?: { name?: string; template?: string };
  outputs?: { parameters?: { name: string; value?: string }[] };
}

export interface CmpStatus {
  phase?: string;
  nodes?: Record<string, CmpNode>;
}

/** The path of each node below the workflow (its name without the workflow's), `/` for the root. */
export function nodePaths(workflowName: string, nodes: Record<string, CmpNode>): Map<string, CmpNode> {
  const out = new Map<string, CmpNode>();
  for (const n of Object.values(nodes)) {
    const path = n.name === workflowName ? '/' : n.name.startsWith(workflowName) ? n.name.slice(workflowName.length) : n.name;
    out.set(path, n);
  }
  return out;
}

const show = (v: string | undefined) => (v === undefined ? '(none)' : JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v));

/** The differences, Argo's node order first (by path), each a short sentence; empty when identical. */
export function compareNodeTrees(argo: { name: string; status: CmpStatus }, tandem: { name: string; status: CmpStatus }): string[] {
  const diffs: string[] = [];
  if (argo.status.phase !== tandem.status.phase) diffs.push(`workflow phase: Argo ${argo.status.phase ?? '(none)'}, Tandem ${tandem.status.phase ?? '(none)'}`);
  const a = nodePaths(argo.name, argo.status.nodes ?? {});
  const t = nodePaths(tandem.name, tandem.status.nodes ?? {});
  const paths = [...new Set([...a.keys(), ...t.keys()])].sort();
  for (const p of paths) {
    const x = a.get(p);
    const y = t.get(p);
    if (!y) {
      diffs.push(`missing node ${p} (Argo: ${x!.type} ${x!.phase})`);
      continue;
    }
    if (!x) {
      diffs.push(`extra node ${p} (Tandem: ${y.type} ${y.phase})`);
      continue;
    }
    for (const f of ['type', 'phase', 'templateName', 'displayName'] as const) {
      // The root's display name is the workflow's name, which the bench chooses.
      if (f === 'displayName' && p === '/') continue;
      if ((x[f] ?? undefined) !== (y[f] ?? undefined)) diffs.push(`${f} of ${p}: Argo ${show(x[f])}, Tandem ${show(y[f])}`);
    }
    const xp = new Map((x.outputs?.parameters ?? []).map((q) => [q.name, q.value]));
    const yp = new Map((y.outputs?.parameters ?? []).map((q) => [q.name, q.value]));
    for (const k of [...new Set([...xp.keys(), ...yp.keys()])].sort()) {
      if (xp.get(k) !== yp.get(k)) diffs.push(`output ${k} of ${p}: Argo ${xp.has(k) ? show(xp.get(k)) : '(absent)'}, Tandem ${yp.has(k) ? show(yp.get(k)) : '(absent)'}`);
    }
  }
  return diffs;
}
