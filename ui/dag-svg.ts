// An Argo run as a graph, drawn the way Argo's own UI draws it: a box per node coloured by phase,
// joined by the edges of Argo's status (steps in sequence, DAG tasks from their dependencies). The layout is dagre's (@dagrejs/dagre: ranks
// left to right, crossing reduction, edge routes), computed here on the server since the pages run no
// scripts; the boxes and paths are drawn from its coordinates.
import { Graph, layout } from '@dagrejs/dagre';
import type { ArgoStatus, Json } from '../argo/lang/types.js';
import { argoShape } from '../argo/status-shape.js';
import { esc } from './html.js';

export const PHASE_FILL: Record<string, string> = { Succeeded: '#dff0d8', Failed: '#f2dede', Error: '#f8d7c4', Running: '#d9edf7', Pending: '#f5f5f5', Skipped: '#eeeeee', Omitted: '#eeeeee' };
const PHASE_STROKE: Record<string, string> = { Succeeded: '#2d7a1f', Failed: '#b02a1a', Error: '#c0571a', Running: '#1f6fb0', Pending: '#999', Skipped: '#aaa', Omitted: '#aaa' };

/**
 * Edges of the drawing: [from, to] node ids — Argo's own graph edges (the `children` of its status,
 * argo/status-shape.ts): a steps template's groups one after another through their steps, a DAG's
 * tasks from their dependencies (read from the run's resolved spec), Retry attempts, Omitted tasks
 * where their dependencies left them.
 */
export function dagEdges(status: ArgoStatus, spec?: Json): [string, string][] {
  const { nodes } = argoShape(status, spec).status;
  return Object.values(nodes).flatMap((n) => (n.children ?? []).map((c): [string, string] => [n.id, c]));
}

export function dagSvg(status: ArgoStatus, spec?: Json): string {
  const nodes = Object.values(status.nodes);
  const edges = dagEdges(status, spec);
  const BW = 170;
  const BH = 42;
  const TOP = 34;
  // dagre lays the graph out (ranks left to right, crossing reduction, edge routes); we draw it.
  const g = new Graph<{ rankdir: string; nodesep: number; ranksep: number; marginx: number; marginy: number; width?: number; height?: number }, { width: number; height: number; x?: number; y?: number }, { points?: { x: number; y: number }[] }>({ multigraph: false });
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 50, marginx: 10, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: BW, height: BH });
  for (const [f, t] of edges) if (status.nodes[f] && status.nodes[t]) g.setEdge(f, t);
  layout(g);
  const pos = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const l = g.node(n.id);
    pos.set(n.id, { x: (l.x ?? BW / 2) - BW / 2, y: TOP + (l.y ?? BH / 2) - BH / 2 });
  }
  const W = Math.max(300, Math.ceil(g.graph().width ?? BW + 20));
  const H = TOP + 10 + Math.ceil(g.graph().height ?? BH);
  const parts: string[] = [
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#888"/></marker></defs>',
    `<text x="10" y="20" font-size="14" font-weight="bold">${esc(`${status.name} — ${status.phase}`)}</text>`,
  ];
  for (const [f, t] of edges) {
    const points = g.hasEdge(f, t) ? g.edge(f, t)?.points : undefined;
    if (!points?.length) continue;
    parts.push(`<path class="edge" data-from="${esc(f)}" data-to="${esc(t)}" d="${edgePath(points.map((p: { x: number; y: number }) => ({ x: p.x, y: p.y + TOP })))}" fill="none" stroke="#888" marker-end="url(#arrow)"/>`);
  }
  for (const n of nodes) {
    const p = pos.get(n.id)!;
    const name = n.displayName.length > 24 ? `${n.displayName.slice(0, 23)}…` : n.displayName;
    parts.push(
      `<g class="node" data-id="${esc(n.id)}" data-phase="${esc(n.phase)}" data-type="${esc(n.type)}" data-x="${p.x.toFixed(1)}" data-y="${p.y.toFixed(1)}"><title>${esc(`${n.displayName} (${n.type}${n.templateName ? `, ${n.templateName}` : ''}): ${n.phase}${n.message ? ` — ${n.message}` : ''}`)}</title>` +
        `<rect x="${p.x.toFixed(1)}" y="${p.y.toFixed(1)}" width="${BW}" height="${BH}" rx="6" fill="${PHASE_FILL[n.phase] ?? '#fff'}" stroke="${PHASE_STROKE[n.phase] ?? '#999'}" stroke-width="1.5"/>` +
        `<text x="${(p.x + 8).toFixed(1)}" y="${(p.y + 17).toFixed(1)}" font-weight="bold">${esc(name)}</text>` +
        `<text x="${(p.x + 8).toFixed(1)}" y="${(p.y + 33).toFixed(1)}" font-size="11" fill="#444">${esc(`${n.phase} · ${n.type}`)}</text></g>`,
    );
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" class="tandem-dag" width="${W}" height="${H}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>`;
}

/** dagre's route as a smooth path: straight for two points, else quadratic segments through the midpoints. */
function edgePath(points: { x: number; y: number }[]): string {
  const f = (n: number) => n.toFixed(1);
  const [first, ...rest] = points;
  if (!first) return '';
  if (rest.length === 1) return `M ${f(first.x)} ${f(first.y)} L ${f(rest[0]!.x)} ${f(rest[0]!.y)}`;
  let d = `M ${f(first.x)} ${f(first.y)}`;
  for (let i = 0; i < rest.length - 1; i++) {
    const c = rest[i]!;
    const n = rest[i + 1]!;
    const end = i === rest.length - 2 ? n : { x: (c.x + n.x) / 2, y: (c.y + n.y) / 2 };
    d += ` Q ${f(c.x)} ${f(c.y)} ${f(end.x)} ${f(end.y)}`;
  }
  return d;
}
