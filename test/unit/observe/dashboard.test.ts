// The Grafana dashboard (templates/grafana/tandem.json) queries only series the worker exports: every
// metric name in every panel's PromQL is one observe/metrics.ts registers (histograms as _bucket,
// _sum, _count).
import { readFileSync } from 'node:fs';
import { seriesNames } from '../../../observe/metrics.js';

const dashboard = JSON.parse(readFileSync(new URL('../../../templates/grafana/tandem.json', import.meta.url), 'utf8')) as {
  panels: { type: string; title: string; targets?: { expr: string }[] }[];
  templating: { list: { name: string; query?: string | { query: string } }[] };
};

const PROMQL_WORDS = new Set(['sum', 'by', 'without', 'rate', 'increase', 'irate', 'histogram_quantile', 'avg', 'max', 'min', 'count', 'topk', 'bottomk', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'offset', 'bool', 'label_values', 'clamp_min', 'clamp_max', 'abs', 'delta', 'deriv', 'time', 'vector', 'scalar']);

/** The metric names of a PromQL expression: identifiers outside strings, label matchers, ranges and groupings, that are not functions or keywords. */
export function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  const out: string[] = [];
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = bare.slice(m.index! + m[0].length).trimStart();
    if (after.startsWith('(') || PROMQL_WORDS.has(m[0]) || /^e\d/.test(m[0])) continue;
    out.push(m[0]);
  }
  return out;
}

const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
const variableQueries = dashboard.templating.list.flatMap((v) => (typeof v.query === 'object' ? [{ panel: `variable ${v.name}`, expr: v.query.query }] : []));

test('the extractor finds metric names and only them', () => {
  expect(metricNamesOf('histogram_quantile(0.95, sum by (le, stage) (rate(tandem_stage_duration_seconds_bucket{job=~"$job",outcome="completed"}[$__rate_interval])))')).toEqual(['tandem_stage_duration_seconds_bucket']);
  expect(metricNamesOf('sum(a_total) / (sum by (x) (b_count{y="z"}) + c) * 1e9')).toEqual(['a_total', 'b_count', 'c']);
  expect(metricNamesOf('label_values(tandem_pipelines_started_total, job)')).toEqual(['tandem_pipelines_started_total', 'job']);
});

test('the dashboard has panels for every area the issue names', () => {
  const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title.toLowerCase()).join(' | ');
  for (const area of ['pipelines', 'stages', 'queue waits', 'placement', 'failovers', 'quotas', 'serving', 'backend health']) expect(rows).toContain(area);
  expect(queries.length).toBeGreaterThan(30);
});

test('every panel queries only series the worker exports', () => {
  const exported = seriesNames();
  const unknown = queries.flatMap((q) => metricNamesOf(q.expr).filter((n) => !exported.has(n)).map((n) => `${q.panel}: ${n}`));
  expect(unknown).toEqual([]);
  // label_values(metric, label): the metric must exist; the second argument is a label.
  const vars = variableQueries.map((q) => /label_values\((\w+),/.exec(q.expr)![1]!).filter((n) => !exported.has(n));
  expect(vars).toEqual([]);
});

test('a name the worker does not export is caught', () => {
  const exported = seriesNames();
  expect(metricNamesOf('sum(rate(tandem_stage_duration_seconds_total[5m]))').filter((n) => !exported.has(n))).toEqual(['tandem_stage_duration_seconds_total']);
  expect(exported.has('tandem_stage_duration_seconds')).toBe(false); // a histogram is queried by its series
});
