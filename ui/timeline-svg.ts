// A run's timeline as a picture, for the run page of `tandem ui` (ui/pages.ts) and for reports
// (`tandem runs show <id> --svg file`): one lane per stage (its span from first activity to last), and
// under it one bar per activity attempt, coloured by outcome: queue-and-run of jobs (submit/await), compensations hatched, failures red. Built from the
// history report alone (sdk/history.ts), so it works for runs whose workers are gone.
import type { RunReport } from '../sdk/history.js';
import { esc, duration } from './html.js';

const COLOURS: Record<string, string> = { completed: '#4c9a2a', failed: '#c0392b', 'timed-out': '#e67e22', cancelled: '#7f8c8d', running: '#2e86c1' };
const STAGE_FILL: Record<string, string> = { completed: '#dff0d8', failed: '#f2dede', compensated: '#fcf8e3', running: '#d9edf7', reused: '#eeeeee', pending: '#ffffff' };


export function timelineSvg(report: RunReport, now = new Date()): string {
  const start = report.startedAt?.getTime() ?? Math.min(...report.activities.map((a) => a.scheduledAt?.getTime() ?? Infinity));
  const end = report.closedAt?.getTime() ?? now.getTime();
  const span = Math.max(1, end - start);
  const W = 960;
  const LEFT = 190;
  const plot = W - LEFT - 20;
  const x = (t: number) => LEFT + ((t - start) / span) * plot;
  const rows: string[] = [];
  let y = 56;
  const ROW = 18;
  for (const stage of report.stages) {
    const acts = report.activities.filter((a) => a.stage === stage.name);
    const s0 = stage.startedAt?.getTime();
    const s1 = stage.finishedAt?.getTime() ?? (stage.status === 'running' ? end : undefined);
    rows.push(`<text x="8" y="${y + 13}" font-weight="bold">${esc(stage.name)}</text><text x="100" y="${y + 13}" fill="#555">${esc(stage.status)}${stage.attempts > 1 ? ` ×${stage.attempts}` : ''}</text>`);
    if (s0 !== undefined && s1 !== undefined) rows.push(`<rect x="${x(s0).toFixed(1)}" y="${y}" width="${Math.max(1, x(s1) - x(s0)).toFixed(1)}" height="${ROW - 2}" fill="${STAGE_FILL[stage.status] ?? '#fff'}" stroke="#999"><title>${esc(`${stage.name}: ${stage.status}, ${duration(s1 - s0)}`)}</title></rect>`);
    y += ROW + 2;
    for (const a of acts) {
      const a0 = a.scheduledAt?.getTime();
      if (a0 === undefined) continue;
      const a1 = a.closedAt?.getTime() ?? end;
      const label = `${a.type}${a.attempt > 1 ? ` (attempt ${a.attempt})` : ''}`;
      rows.push(`<text x="20" y="${y + 11}" font-size="11" fill="#333">${esc(label)}</text>`);
      rows.push(`<rect x="${x(a0).toFixed(1)}" y="${y + 2}" width="${Math.max(1.5, x(a1) - x(a0)).toFixed(1)}" height="${ROW - 6}" fill="${COLOURS[a.outcome] ?? '#999'}"${a.compensation ? ' fill-opacity="0.5" stroke="#8e44ad" stroke-dasharray="3,2"' : ''}><title>${esc(`${label}: ${a.outcome}, ${duration(a1 - a0)}${a.error ? ` — ${a.error.slice(0, 200)}` : ''}`)}</title></rect>`);
      y += ROW;
    }
    y += 6;
  }
  // A time axis with five ticks.
  const axis: string[] = [];
  for (let i = 0; i <= 5; i++) {
    const t = start + (span * i) / 5;
    axis.push(`<line x1="${x(t).toFixed(1)}" y1="40" x2="${x(t).toFixed(1)}" y2="${y}" stroke="#ddd"/><text x="${x(t).toFixed(1)}" y="36" font-size="10" text-anchor="middle" fill="#555">+${duration(t - start)}</text>`);
  }
  const title = `${report.workflowId} — ${report.type}, ${report.status}, ${duration(span)}${report.failure ? `: ${report.failure.slice(0, 90)}` : ''}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="tandem-timeline" width="${W}" height="${y + 10}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="8" y="18" font-size="14" font-weight="bold">${esc(title)}</text>`,
    ...axis,
    ...rows,
    '</svg>',
  ].join('\n');
}
