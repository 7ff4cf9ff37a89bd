// Carbon-intensity time series files for `tandem simulate --carbon` and the energy bench: CSV lines
// `timestamp,gCO2_per_kWh` (ISO time with a zone, or epoch seconds), an optional header, `#` comments.
// Parsed without I/O (the caller reads the file); errors name the line.
import { InputError, type InputIssue } from '../contract/input-error.js';
import type { CarbonSeries } from '../placement/index.js';

const ISO_ZONE = /(Z|[+-]\d{2}:?\d{2})$/i;

/** The series on its own clock (epoch seconds), one value per line, holding until the next line. */
export function parseCarbonCsv(text: string, source = 'carbon series'): CarbonSeries {
  const t: number[] = [];
  const g: number[] = [];
  const issues: InputIssue[] = [];
  const bad = (line: number, path: string, message: string) => issues.push({ source, line, path, message });
  let seenData = false;
  text.split('\n').forEach((raw, k) => {
    const line = k + 1;
    const l = raw.trim();
    if (!l || l.startsWith('#')) return;
    const f = l.split(',').map((x) => x.trim());
    if (!seenData && !t.length && f.length === 2 && !/^[\d.+-]/.test(f[1])) {
      // The header line: the columns are positional, the names only for people.
      seenData = true;
      return;
    }
    seenData = true;
    if (f.length !== 2) return void bad(line, '', `expected "timestamp,gCO2_per_kWh", got ${f.length} field(s): ${JSON.stringify(l)}`);
    const [ts, v] = f;
    let at: number;
    if (/^\d+(\.\d+)?$/.test(ts)) at = Number(ts);
    else if (!ISO_ZONE.test(ts)) return void bad(line, 'timestamp', `${JSON.stringify(ts)} is neither epoch seconds nor an ISO time with a zone (e.g. 2024-03-01T00:00:00Z)`);
    else {
      at = Date.parse(ts) / 1000;
      if (!Number.isFinite(at)) return void bad(line, 'timestamp', `${JSON.stringify(ts)} is not a valid ISO time`);
    }
    const val = Number(v);
    if (v === '' || !Number.isFinite(val) || val < 0) return void bad(line, 'gCO2_per_kWh', `expected a number ≥ 0, got ${JSON.stringify(v)}`);
    if (t.length && at <= t[t.length - 1]) return void bad(line, 'timestamp', `${ts} is not after the previous line's time: times must increase`);
    t.push(at);
    g.push(val);
  });
  if (!issues.length && !t.length) issues.push({ source, path: '', message: 'no data lines (expected "timestamp,gCO2_per_kWh" lines)' });
  if (issues.length) throw new InputError('carbon series', issues);
  return { t, g };
}

/**
 * The series moved onto a trace's clock: its first point at `start` (the trace's first arrival, 0 in
 * the simulator) and repeating, so a sample day or week covers a trace of any length. The period is
 * the span plus the last step (a week of hourly points repeats every 168 h).
 */
export function alignSeries(s: CarbonSeries, start = 0): CarbonSeries {
  const n = s.t.length;
  const step = n > 1 ? s.t[n - 1] - s.t[n - 2] : 3600;
  return { t: s.t.map((x) => x - s.t[0] + start), g: [...s.g], period: s.t[n - 1] - s.t[0] + step };
}
