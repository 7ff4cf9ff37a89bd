// A run's timeline as a picture, for the run page of `tandem ui` (ui/pages.ts) and for reports
// (`tandem runs show <id> --svg file`): one lane per stage (its span from first activity to last);
// under it one row per job attempt — its submission, then its queue wait and its run time as the job
// watch observed them (ui/attempts.ts) — and one bar per other activity, coloured by outcome.
// Failovers, fences and compensations are marked across the chart at the moment they happened.
// Built from the history report alone (sdk/history.ts), so it works for runs whose workers are gone.
// Our own SVG on purpose: a Gantt is rectangles on a time axis, and the pages are script-free; the
// axis ticks are d3-scale's.
import type { ActivityRecord, RunReport } from '../sdk/history.js';
import { scaleLinear } from 'd3-scale';
import { esc, duration } from './html.js';
import { isCompensation, isJobActivity, jobAttempts, markers, stageOf, type JobAttempt, type Marker } from './attempts.js';
import { classifyJobState, JOB_STATES, type JobState } from '../contract/outcome.js';
import type { ObservedState } from '../activities/observed-states.js';

const COLOURS: Record<string, string> = { completed: '#4c9a2a', failed: '#c0392b', 'timed-out': '#e67e22', cancelled: '#7f8c8d', running: '#2e86c1' };
const STAGE_FILL: Record<string, string> = { completed: '#dff0d8', failed: '#f2dede', compensated: '#fcf8e3', running: '#d9edf7', reused: '#eeeeee', pending: '#ffffff' };
const OUTCOME_OF_STATE: Record<string, string> = { success: 'completed', 'job-failure': 'failed', infrastructure: 'timed-out', cancelled: 'cancelled', active: 'running' };
const MARK: Record<Marker['kind'], string> = { failover: '#d35400', retry: '#d35400', fence: '#8e44ad', compensation: '#8e44ad' };
const QUEUE_FILL = '#f5cd79';

const stateColour = (state: string | undefined) => COLOURS[state && JOB_STATES.includes(state as JobState) ? OUTCOME_OF_STATE[classifyJobState(state as JobState)]! : 'running'] ?? '#999';

type Row = { at: number; draw: (y: number) => string[] };

/** `live`: what the watches still going last heartbeated (ui/live.ts), by their scheduled event id. */
export function timelineSvg(report: RunReport, now = new Date(), live?: ReadonlyMap<number, ObservedState[]>): string {
  const start = report.startedAt?.getTime() ?? Math.min(...report.activities.map((a) => a.scheduledAt?.getTime() ?? Infinity));
  const end = report.closedAt?.getTime() ?? now.getTime();
  const span = Math.max(1, end - start);
  const W = 960;
  const ROW = 18;
  const attempts = jobAttempts(report, now.getTime(), live);
  // The left column fits the longest row label (11 px sans: about 6.2 px a character), so no label runs into the bars.
  const labels = [...attempts.map((j) => `job ${j.attempt} @ ${j.runtime}/${j.site}`), ...report.activities.map((a) => `${a.type}${a.attempt > 1 ? ` (attempt ${a.attempt})` : ''}`)];
  const LEFT = Math.min(420, Math.max(190, 28 + Math.ceil(Math.max(0, ...labels.map((l) => l.length)) * 6.2)));
  const plot = W - LEFT - 20;
  const x = (t: number) => LEFT + ((t - start) / span) * plot;
  const f = (n: number) => n.toFixed(1);
  // The title and the run's failure, wrapped to the picture's width (never cut).
  const heading = wrap(`${report.workflowId} — ${report.type}, ${report.status}, ${duration(span)}${report.failure ? `: ${report.failure}` : ''}`, Math.floor((W - 16) / 7.4));
  const top = (heading.length - 1) * 17;
  const marks = markers(report, attempts);
  const bar = (a: ActivityRecord, y: number, label: string): string => {
    const a0 = a.scheduledAt!.getTime();
    const a1 = a.closedAt?.getTime() ?? end;
    const comp = isCompensation(a);
    return `<rect class="activity${comp ? ' compensation' : ''}" data-event="${a.scheduledEventId}" x="${f(x(a0))}" y="${y + 2}" width="${f(Math.max(1.5, x(a1) - x(a0)))}" height="${ROW - 6}" fill="${COLOURS[a.outcome] ?? '#999'}"${comp ? ' fill-opacity="0.5" stroke="#8e44ad" stroke-dasharray="3,2"' : ''}><title>${esc(`${label}: ${a.outcome}, ${duration(a1 - a0)}${a.error ? ` — ${a.error.slice(0, 200)}` : ''}`)}</title></rect>`;
  };
  const attemptRow = (j: JobAttempt): Row => ({
    at: j.submit.scheduledAt!.getTime(),
    draw: (y) => {
      const label = `job ${j.attempt} @ ${j.runtime}/${j.site}`;
      const out = [`<text x="20" y="${y + 11}" font-size="11" fill="#333">${esc(label)}</text>`, `<g class="attempt" data-stage="${esc(j.stage)}" data-job="${esc(j.jobId)}" data-split="${j.observed ? 'observed' : 'not-recorded'}">`];
      // The watches' own spans, outlined: re-attachments show as breaks; the split is drawn over them.
      for (const w of j.watches) {
        if (!w.scheduledAt) continue;
        const w0 = w.scheduledAt.getTime();
        const w1 = w.closedAt?.getTime() ?? end;
        const whole = !j.observed;
        out.push(`<rect class="watch" data-event="${w.scheduledEventId}" x="${f(x(w0))}" y="${y + 2}" width="${f(Math.max(1.5, x(w1) - x(w0)))}" height="${ROW - 6}" fill="${whole ? stateColour(j.final?.state ?? (w.outcome === 'running' ? undefined : 'CANCELLED')) : 'none'}"${whole ? ' fill-opacity="0.55"' : ''} stroke="#555" stroke-width="0.6"><title>${esc(`${w.type} of ${j.jobId}: ${w.outcome}, ${duration(w1 - w0)}${whole ? (w.outcome === 'running' ? ' — still watching; its observations are recorded when it ends' : ' — queue wait and run time not recorded (a watch from before the split was recorded)') : ''}${w.error ? ` — ${w.error.slice(0, 200)}` : ''}`)}</title></rect>`);
      }
      for (const s of j.segments) {
        const open = j.watches[j.watches.length - 1]?.outcome === 'running' && s.to === end ? ' so far' : '';
        // An attempt whose site stopped answering ends with the last state seen there (RUNNING): say how it really ended.
        const lost = s.kind === 'run' && j.infrastructure && !j.final ? j.infrastructure : undefined;
        const title = s.kind === 'submit' ? `submit ${j.jobId} to ${j.site}: ${duration(s.to - s.from)}` : s.kind === 'queue' ? `queue wait ${duration(s.to - s.from)}${open}${s.state ? ` (${s.state})` : ' (no queued state observed)'}` : `running ${duration(s.to - s.from)}${open ? ` so far (${s.state ?? '?'})` : lost ? `, last seen ${s.state ?? '?'}; then ${lost}` : `, ended ${s.state ?? '?'}`}`;
        const fill = s.kind === 'submit' ? (COLOURS[j.submit.outcome] ?? '#999') : s.kind === 'queue' ? QUEUE_FILL : lost ? COLOURS['timed-out']! : stateColour(s.state);
        const data = s.kind === 'submit' ? ` data-event="${j.submit.scheduledEventId}"` : ` data-from="${s.from}" data-to="${s.to}"`;
        out.push(`<rect class="${s.kind}"${data} x="${f(x(s.from))}" y="${y + (s.kind === 'submit' ? 4 : 2)}" width="${f(Math.max(s.kind === 'queue' ? 0 : 1.5, x(s.to) - x(s.from)))}" height="${ROW - (s.kind === 'submit' ? 10 : 6)}" fill="${fill}"${s.kind === 'queue' ? ' stroke="#b7950b" stroke-width="0.6"' : ''}><title>${esc(title)}</title></rect>`);
      }
      out.push('</g>');
      return out;
    },
  });
  const rows: string[] = [];
  let y = 70 + top;
  for (const stage of report.stages) {
    const acts = report.activities.filter((a) => stageOf(a) === stage.name && a.scheduledAt);
    const work = acts.filter((a) => !isCompensation(a));
    const s0 = work[0]?.scheduledAt?.getTime() ?? stage.startedAt?.getTime();
    const last = work[work.length - 1];
    const s1 = last ? (last.closedAt?.getTime() ?? end) : (stage.finishedAt?.getTime() ?? (stage.status === 'running' ? end : undefined));
    rows.push(`<text x="8" y="${y + 13}" font-weight="bold">${esc(stage.name)}</text><text x="100" y="${y + 13}" fill="#555">${esc(stage.status)}${stage.attempts > 1 ? ` ×${stage.attempts}` : ''}</text>`);
    if (s0 !== undefined && s1 !== undefined) rows.push(`<rect class="stage" x="${f(x(s0))}" y="${y}" width="${f(Math.max(1, x(s1) - x(s0)))}" height="${ROW - 2}" fill="${STAGE_FILL[stage.status] ?? '#fff'}" stroke="#999"><title>${esc(`${stage.name}: ${stage.status}, ${duration(s1 - s0)}`)}</title></rect>`);
    y += ROW + 2;
    const lane: Row[] = [
      ...attempts.filter((j) => j.stage === stage.name).map(attemptRow),
      ...acts
        .filter((a) => !isJobActivity(a) || !attempts.some((j) => j.submit === a || j.watches.includes(a)))
        .map((a): Row => {
          const label = `${a.type}${a.attempt > 1 ? ` (attempt ${a.attempt})` : ''}`;
          return { at: a.scheduledAt!.getTime(), draw: (yy) => [`<text x="20" y="${yy + 11}" font-size="11" fill="#333">${esc(label)}</text>`, bar(a, yy, label)] };
        }),
    ].sort((p, q) => p.at - q.at);
    for (const r of lane) {
      rows.push(...r.draw(y));
      y += ROW;
    }
    y += 6;
  }
  // A time axis with round ticks (d3-scale's, over the time since the start), and the markers from top
  // to bottom, labelled in a band above the lanes.
  const axis: string[] = [];
  for (const offset of scaleLinear().domain([0, span]).ticks(6)) {
    const t = start + offset;
    axis.push(`<line x1="${f(x(t))}" y1="${54 + top}" x2="${f(x(t))}" y2="${y}" stroke="#ddd"/><text x="${f(x(t))}" y="${50 + top}" font-size="10" text-anchor="middle" fill="#555">+${duration(t - start)}</text>`);
  }
  const marked = marks.map((m, i) => `<g class="marker" data-kind="${m.kind}"><line x1="${f(x(m.at))}" y1="${22 + top}" x2="${f(x(m.at))}" y2="${y}" stroke="${MARK[m.kind]}" stroke-width="1.2" stroke-dasharray="${m.kind === 'compensation' ? '2,2' : '5,3'}"/><text x="${f(x(m.at) + 3)}" y="${30 + top + (i % 2) * 10}" font-size="9" fill="${MARK[m.kind]}">${esc(m.kind)}</text><title>${esc(m.label)}</title></g>`);
  // Every colour the chart uses, in one row (or two, when they do not fit).
  const entries: { name: string; swatch: (x: number, y: number) => string }[] = [
    ...(
      [
        ['queue wait', QUEUE_FILL],
        ['running', COLOURS.running!],
        ['completed', COLOURS.completed!],
        ['failed', COLOURS.failed!],
        ['infrastructure end', COLOURS['timed-out']!],
        ['cancelled', COLOURS.cancelled!],
      ] as [string, string][]
    ).map(([name, colour]) => ({ name, swatch: (lx: number, ly: number) => `<rect x="${lx}" y="${ly}" width="12" height="10" fill="${colour}"/>` })),
    { name: 'compensation', swatch: (lx, ly) => `<rect x="${lx}" y="${ly}" width="12" height="10" fill="${COLOURS.completed}" fill-opacity="0.5" stroke="#8e44ad" stroke-dasharray="3,2"/>` },
    { name: 'failover / retry', swatch: (lx, ly) => `<line x1="${lx + 6}" y1="${ly - 1}" x2="${lx + 6}" y2="${ly + 11}" stroke="${MARK.failover}" stroke-width="1.2" stroke-dasharray="5,3"/>` },
    { name: 'fence', swatch: (lx, ly) => `<line x1="${lx + 6}" y1="${ly - 1}" x2="${lx + 6}" y2="${ly + 11}" stroke="${MARK.fence}" stroke-width="1.2" stroke-dasharray="5,3"/>` },
  ];
  let lx = 8;
  let ly = y + 8;
  const legendItems: string[] = [];
  for (const e of entries) {
    const w = 22 + e.name.length * 5.8;
    if (lx + w > W - 8) {
      lx = 8;
      ly += 16;
    }
    legendItems.push(`<g class="legend-item" data-name="${esc(e.name)}">${e.swatch(lx, ly)}<text x="${lx + 16}" y="${ly + 9}" font-size="10">${esc(e.name)}</text></g>`);
    lx += w + 10;
  }
  const legend = `<g class="legend">${legendItems.join('')}</g>`;
  const height = ly + 18;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="tandem-timeline" width="${W}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text class="title" x="8" y="18" font-size="14" font-weight="bold">${heading.map((line, i) => `<tspan x="8" dy="${i ? 17 : 0}">${esc(line)}</tspan>`).join('')}</text>`,
    ...axis,
    ...rows,
    ...marked,
    legend,
    '</svg>',
  ].join('\n');
}

/** Words into lines of at most `width` characters (a longer word is split). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (let word of text.split(/\s+/).filter(Boolean)) {
    while (word.length > width) {
      if (line) lines.push(line);
      lines.push(word.slice(0, width));
      word = word.slice(width);
      line = '';
    }
    if (!line) line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line) lines.push(line);
  return lines.length ? lines : [''];
}
