// The web view's HTML helpers. Runs carry user text everywhere (pipeline and tenant names, Argo node
// names, job output, error messages), so every value reaches the page through `esc` or `attr`; the
// pages build no HTML from unescaped strings.
export const esc = (s: unknown): string =>
  String(s ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 7_200_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export const when = (d: Date | string | undefined): string => (d === undefined ? '-' : new Date(d).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z'));

/** How long ago, in words ("3 min ago"); the page refreshes, so "now" is the request's. */
export function ago(d: Date | string | undefined, now = Date.now()): string {
  if (d === undefined) return '-';
  const ms = now - new Date(d).getTime();
  if (ms < 0) return 'just now';
  if (ms < 45_000) return `${Math.max(1, Math.round(ms / 1000))} s ago`;
  if (ms < 90 * 60_000) return `${Math.round(ms / 60_000)} min ago`;
  if (ms < 36 * 3_600_000) return `${Math.round(ms / 3_600_000)} h ago`;
  return `${Math.round(ms / 86_400_000)} d ago`;
}

/** A time as "3 min ago", the exact instant in its tooltip and datetime attribute. */
export const timeAgo = (d: Date | string | undefined, now = Date.now()): string =>
  d === undefined ? '-' : `<time datetime="${esc(new Date(d).toISOString())}" title="${esc(when(d))}">${esc(ago(d, now))}</time>`;

/** A path segment of the view's own links (run ids may hold any character). */
export const href = (...segments: string[]): string => '/' + segments.map(encodeURIComponent).join('/');

/** A table: `rows` are already-escaped cells. */
export function table(head: string[], rows: string[][], cls = ''): string {
  if (!rows.length) return '<p class="empty">none</p>';
  return `<table${cls ? ` class="${esc(cls)}"` : ''}><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('\n')}</tbody></table>`;
}

const STYLE = `
body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#1f3a5f;color:#fff;padding:10px 20px;display:flex;gap:20px;align-items:baseline}
header a{color:#fff;text-decoration:none;font-weight:bold}
main{padding:16px 20px;max-width:1400px}
h1{font-size:20px;margin:4px 0 12px;overflow-wrap:anywhere} h2{font-size:16px;margin:22px 0 8px} h3{font-size:14px;margin:12px 0 6px;color:#333}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#eef2f7;white-space:nowrap} .job,td pre{overflow-wrap:anywhere}
.status{font-weight:bold}
.s-COMPLETED,.s-Completed,.s-completed,.s-Succeeded{color:#2d7a1f}
.s-FAILED,.s-Failed,.s-failed,.s-Error,.s-TIMED_OUT{color:#b02a1a}
.s-RUNNING,.s-Running,.s-running,.s-Pending{color:#1f6fb0}
.s-CANCELLED,.s-Canceled,.s-TERMINATED,.s-Skipped,.s-Omitted,.s-compensated{color:#7a5a00}
.empty{color:#777} .note{color:#555;font-size:12px}
pre{background:#fff;border:1px solid #ddd;padding:8px;max-height:260px;overflow:auto;font-size:12px;white-space:pre-wrap}
form{margin:0 0 12px} .svg{overflow-x:auto;background:#fff;border:1px solid #ddd;display:inline-block}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:13px} dt{color:#555} dd{margin:0;overflow-wrap:anywhere}
.pager{margin:10px 0;font-size:13px} .pager a{margin-right:14px} progress{width:120px;vertical-align:middle}
pre.log{max-height:70vh}
`;

/** A whole page. `refresh` (seconds) for runs still going; the view has no scripts at all. */
export function page(title: string, body: string, opts: { refresh?: number } = {}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · Tandem</title>
<meta name="viewport" content="width=device-width, initial-scale=1">${opts.refresh ? `<meta http-equiv="refresh" content="${opts.refresh}">` : ''}
<style>${STYLE}</style></head>
<body><header><a href="/">Tandem</a><span>runs · read-only</span></header>
<main>${body}</main></body></html>
`;
}
