// The training loss curve of a run page: training and held-out loss against the step, one circle per
// recorded point (ui/training.ts says where each comes from).
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
  const [s0, s1] = [Math.min(0, ...steps), Math.max(1, ...steps)];
  const [v0, v1] = [Math.min(...values) * 0.95, Math.max(...values) * 1.05 || 1];
  const x = (s: number) => L + ((s - s0) / Math.max(1, s1 - s0)) * (W - L - R);
  const y = (v: number) => T + (1 - (v - v0) / Math.max(1e-9, v1 - v0)) * (H - T - B);
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const v = v0 + ((v1 - v0) * i) / 4;
    parts.push(`<line x1="${L}" y1="${y(v).toFixed(1)}" x2="${W - R}" y2="${y(v).toFixed(1)}" stroke="#eee"/><text x="${L - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" font-size="10" fill="#555">${v.toFixed(2)}</text>`);
    const s = s0 + ((s1 - s0) * i) / 4;
    parts.push(`<text x="${x(s).toFixed(1)}" y="${H - B + 16}" text-anchor="middle" font-size="10" fill="#555">${Math.round(s)}</text>`);
  }
  parts.push(`<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#999"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#999"/>`);
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle" font-size="11">step</text><text x="14" y="${(T + H - B) / 2}" transform="rotate(-90 14 ${(T + H - B) / 2})" text-anchor="middle" font-size="11">nats per character</text>`);
  SERIES.forEach((s, k) => {
    const pts = points.filter((p) => p[s.key] !== undefined);
    if (!pts.length) return;
    parts.push(`<polyline class="series" data-series="${s.key}" fill="none" stroke="${s.colour}" stroke-width="1.5" points="${pts.map((p) => `${x(p.step).toFixed(1)},${y(p[s.key]!).toFixed(1)}`).join(' ')}"/>`);
    for (const p of pts) parts.push(`<circle class="point" data-series="${s.key}" data-step="${p.step}" cx="${x(p.step).toFixed(1)}" cy="${y(p[s.key]!).toFixed(1)}" r="3" fill="${s.colour}"><title>${esc(`step ${p.step}: ${s.label} ${p[s.key]!.toFixed(4)} (${p.source})`)}</title></circle>`);
    parts.push(`<rect x="${W - R - 130}" y="${T - 18 + 14 * k}" width="10" height="3" fill="${s.colour}"/><text x="${W - R - 115}" y="${T - 13 + 14 * k}" font-size="11">${s.label}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" class="tandem-loss" width="${W}" height="${H}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>`;
}
