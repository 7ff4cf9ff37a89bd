// A run's node status across the child workflows that ran its large loops and DAGs
// (workflows/argo/fanout.ts, docs/argo-scale.md): each child keeps its own status out of the parent's
// history, in the run store (`<home>/argo/status/<workflow id>.json`, written by the child when it
// ends) and, while it runs, behind its `argo.status` query. This merges them into one status, the
// shape `argo get`, `argo logs`, the web view and `runs export` read.
import { join } from 'node:path';
import type { ArgoStatus } from './lang/types.js';

/** Where a child workflow's final status is kept. */
export function offloadedStatusFile(home: string, workflowId: string): string {
  return join(home, 'argo', 'status', `${workflowId.replace(/[^A-Za-z0-9._-]+/g, '_')}.json`);
}

/**
 * `st` with the nodes of every child workflow it names (and theirs) added, each child's top nodes
 * linked under their parents. `fetch` reads one child's status (undefined: not there yet); `concurrency`
 * children are read at once.
 */
export async function mergeSlices(st: ArgoStatus, fetch: (workflowId: string) => Promise<ArgoStatus | undefined>, concurrency = 8): Promise<ArgoStatus> {
  if (!st.slices?.length) return st;
  const nodes = { ...st.nodes };
  const seen = new Set<string>();
  let queue = [...st.slices];
  const all: string[] = [];
  while (queue.length) {
    const next: string[] = [];
    for (let i = 0; i < queue.length; i += concurrency) {
      const batch = queue.slice(i, i + concurrency).filter((id) => !seen.has(id));
      batch.forEach((id) => seen.add(id));
      const got = await Promise.all(batch.map((id) => fetch(id).catch(() => undefined)));
      got.forEach((child, j) => {
        all.push(batch[j]!);
        if (!child) return;
        Object.assign(nodes, child.nodes);
        next.push(...(child.slices ?? []));
      });
    }
    queue = next;
  }
  // Link every node to its parent once: a workflow does not list its children workflows' top nodes
  // under their parents (workflows/argo/fanout.ts), and a parent that has finished lists its own already.
  const linked = new Map<string, Set<string>>();
  for (const n of Object.values(nodes)) {
    if (!n.parentId) continue;
    const p = nodes[n.parentId];
    if (!p) continue;
    let have = linked.get(p.id);
    if (!have) {
      have = new Set(p.children);
      linked.set(p.id, have);
      nodes[p.id] = { ...p, children: [...p.children] };
    }
    if (!have.has(n.id)) {
      have.add(n.id);
      nodes[p.id]!.children.push(n.id);
    }
  }
  return { ...st, nodes, slices: all };
}
