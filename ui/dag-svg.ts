// An Argo run as a graph, drawn the way Argo's own UI draws it: a box per node coloured by phase; a
// DAG template's tasks hang from their dependencies (read from the run's resolved spec: `depends`
// or `dependencies`), every other node from its parent. Layered left to right by longest path.
import type { ArgoNode, ArgoStatus, Json } from '../argo/lang/types.js';
import { dependsTasks, parseDepends } from '../argo/lang/depends.js';
import { esc } from './html.js';

export const PHASE_FILL: Record<string, string> = { Succeeded: '#dff0d8', Failed: '#f2dede', Error: '#f8d7c4', Running: '#d9edf7', Pending: '#f5f5f5', Skipped: '#eeeeee', Omitted: '#eeeeee' };
const PHASE_STROKE: Record<string, string> = { Succeeded: '#2d7a1f', Failed: '#b02a1a', Error: '#c0571a', Running: '#1f6fb0', Pending: '#999', Skipped: '#aaa', Omitted: '#aaa' };

/** Task name → the tasks it waits for, for each DAG template of the spec. */
function dagDependencies(spec: Json | undefined): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  const templates = Array.isArray(spec?.templates) ? (spec.templates as Json[]) : [];
  for (const t of templates) {
    const tasks = (t.dag as Json | undefined)?.tasks;
    if (typeof t.name !== 'string' || !Array.isArray(tasks)) continue;
    const deps = new Map<string, string[]>();
    for (const task of tasks as Json[]) {
      if (typeof task.name !== 'string') continue;
      let names: string[] = Array.isArray(task.dependencies) ? (task.dependencies as unknown[]).filter((d): d is string => typeof d === 'string') : [];
      if (typeof task.depends === 'string') {
        try {
          names = dependsTasks(parseDepends(task.depends));
        } catch {
          /* the linter refused bad expressions before the run started; draw the task from its parent */
        }
      }
      deps.set(task.name, names);
    }
    out.set(t.name, deps);
  }
  return out;
}

/** Edges of the drawing: [from, to] node ids. */
export function dagEdges(status: ArgoStatus, spec?: Json): [string, string][] {
  const deps = dagDependencies(spec);
  const edges: [string, string][] = [];
  for (const n of Object.values(status.nodes)) {
    const taskDeps = n.type === 'DAG' && n.templateName ? deps.get(n.templateName) : undefined;
    const byTask = new Map<string, string[]>();
    for (const c of n.children) {
      const child = status.nodes[c];
      if (!child) continue;
      const task = child.displayName.replace(/\(\d+:.*\)$/, '');
      byTask.set(task, [...(byTask.get(task) ?? []), c]);
    }
    for (const c of n.children) {
      const child = status.nodes[c];
      if (!child) continue;
      const wanted = taskDeps?.get(child.displayName.replace(/\(\d+:.*\)$/, '')) ?? [];
      const from = wanted.flatMap((d) => byTask.get(d) ?? []);
      if (from.length) for (const f of from) edges.push([f, c]);
      else edges.push([n.id, c]);
    }
  }
  return edges;
}

export function dagSvg(status: ArgoStatus, spec?: Json): string {
  const nodes = Object.values(status.nodes);
  const edges = dagEdges(status, spec);
  const incoming = new Map<string, string[]>();
  for (const [f, t] of edges) incoming.set(t, [...(incoming.get(t) ?? []), f]);
  // Longest path from a root; the graph is acyclic, the bound only guards against a damaged status.
  const layer = new Map<string, number>();
  const depth = (id: string, guard = 0): number => {
    const known = layer.get(id);
    if (known !== undefined) return known;
    const d = guard > nodes.length ? 0 : Math.max(-1, ...(incoming.get(id) ?? []).map((f) => depth(f, guard + 1))) + 1;
    layer.set(id, d);
    return d;
  };
  const columns: ArgoNode[][] = [];
  for (const n of nodes) (columns[depth(n.id)] ??= []).push(n);
  const BW = 170;
  const BH = 42;
  const GX = 50;
  const GY = 14;
  const pos = new Map<string, { x: number; y: number }>();
  columns.forEach((col, i) => col.forEach((n, j) => pos.set(n.id, { x: 10 + i * (BW + GX), y: 34 + j * (BH + GY) })));
  const W = 20 + columns.length * (BW + GX) - GX;
  const H = 44 + Math.max(1, ...columns.map((c) => c.length)) * (BH + GY);
  const parts: string[] = [
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#888"/></marker></defs>',
    `<text x="10" y="20" font-size="14" font-weight="bold">${esc(`${status.name} — ${status.phase}`)}</text>`,
  ];
  for (const [f, t] of edges) {
    const a = pos.get(f);
    const b = pos.get(t);
    if (!a || !b) continue;
    const [x1, y1, x2, y2] = [a.x + BW, a.y + BH / 2, b.x, b.y + BH / 2];
    parts.push(`<path class="edge" data-from="${esc(f)}" data-to="${esc(t)}" d="M ${x1} ${y1} C ${x1 + GX / 2} ${y1}, ${x2 - GX / 2} ${y2}, ${x2} ${y2}" fill="none" stroke="#888" marker-end="url(#arrow)"/>`);
  }
  for (const n of nodes) {
    const p = pos.get(n.id)!;
    const name = n.displayName.length > 24 ? `${n.displayName.slice(0, 23)}…` : n.displayName;
    parts.push(
      `<g class="node" data-id="${esc(n.id)}" data-phase="${esc(n.phase)}" data-type="${esc(n.type)}"><title>${esc(`${n.displayName} (${n.type}${n.templateName ? `, ${n.templateName}` : ''}): ${n.phase}${n.message ? ` — ${n.message}` : ''}`)}</title>` +
        `<rect x="${p.x}" y="${p.y}" width="${BW}" height="${BH}" rx="6" fill="${PHASE_FILL[n.phase] ?? '#fff'}" stroke="${PHASE_STROKE[n.phase] ?? '#999'}" stroke-width="1.5"/>` +
        `<text x="${p.x + 8}" y="${p.y + 17}" font-weight="bold">${esc(name)}</text>` +
        `<text x="${p.x + 8}" y="${p.y + 33}" font-size="11" fill="#444">${esc(`${n.phase} · ${n.type}`)}</text></g>`,
    );
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" class="tandem-dag" width="${W}" height="${H}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>`;
}
