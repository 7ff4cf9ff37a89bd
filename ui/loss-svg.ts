// The training loss curve of a run page: training and held-out loss against the step, one circle per
// recorded point (ui/training.ts says where each comes from). Scales, nice axis ticks and the line's
// path come from d3-scale and d3-shape (well-kept, ESM, DOM-free: they run here on the server, since
// the pages carry no scripts); the SVG around them is ours.
import { scaleLinear } from 'd3-scale';
import { line } from 'd3-shape';
import type { LossPoint } from './training.js';
import { esc } from './html.js';

const SERIES = [
  { key: 'loss', label: 'training loss', colour: '#1f6fb0' },
  { key: 'validLoss', label: 'held-out loss', colour: '#c0392b' },
] as const;

export function lossSvg(points: LossPoint[]): string {
  const W = 640;
  const H = 280;
  const L = 56;
  const R = 16;
  const T = 28;
  const B = 40;
  const values = points.flatMap((p) => [p.loss, p.validLoss]).filter((v): v is number => v !== undefined);
  const steps = points.map((p) => p.step);
  const lo = values.length ? Math.min(...values) : 0;
  const hi = values.length ? Math.max(...values) : 1;
  const x = scaleLinear().domain([Math.min(0, ...steps), Math.max(1, ...steps)]).range([L, W - R]).nice();
  const y = scaleLinear().domain(lo === hi ? [lo - 0.5, hi + 0.5] : [lo, hi]).range([H - B, T]).nice();
  const f = (n: number) => n.toFixed(1);
  const parts: string[] = [];
  const yFormat = y.tickFormat(5);
  for (const v of y.ticks(5)) parts.push(`<line x1="${L}" y1="${f(y(v))}" x2="${W - R}" y2="${f(y(v))}" stroke="#eee"/><text x="${L - 6}" y="${f(y(v) + 4)}" text-anchor="end" font-size="10" fill="#555">${esc(yFormat(v))}</text>`);
  for (const s of x.ticks(5)) parts.push(`<text x="${f(x(s))}" y="${H - B + 16}" text-anchor="middle" font-size="10" fill="#555">${esc(x.tickFormat(5)(s))}</text>`);
  parts.push(`<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#999"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#999"/>`);
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle" font-size="11">step</text><text x="14" y="${(T + H - B) / 2}" transform="rotate(-90 14 ${(T + H - B) / 2})" text-anchor="middle" font-size="11">nats per character</text>`);
  SERIES.forEach((s, k) => {
    const pts = points.filter((p) => p[s.key] !== undefined);
    if (!pts.length) return;
    const path = line<LossPoint>()
      .x((p) => x(p.step))
      .y((p) => y(p[s.key]!))
      .digits(1)(pts);
    parts.push(`<path class="series" data-series="${s.key}" fill="none" stroke="${s.colour}" stroke-width="1.5" d="${esc(path ?? '')}"/>`);
    for (const p of pts) parts.push(`<circle class="point" data-series="${s.key}" data-step="${p.step}" cx="${f(x(p.step))}" cy="${f(y(p[s.key]!))}" r="3" fill="${s.colour}"><title>${esc(`step ${p.step}: ${s.label} ${p[s.key]!.toFixed(4)} (${p.source})`)}</title></circle>`);
    parts.push(`<rect x="${W - R - 130}" y="${T - 18 + 14 * k}" width="10" height="3" fill="${s.colour}"/><text x="${W - R - 115}" y="${T - 13 + 14 * k}" font-size="11">${s.label}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" class="tandem-loss" width="${W}" height="${H}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>`;
}
