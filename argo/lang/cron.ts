// A CronWorkflow's schedules as Argo's validation reads them (validate.go ValidateCronWorkflow:
// robfig/cron's ParseStandard): five fields — minute, hour, day of month, month, day of week — each a
// comma list of `*`, `?`, a value or a range, with an optional `/step`; month and weekday names
// (JAN–DEC, SUN–SAT); the descriptors @yearly … @hourly and `@every <duration>`; an optional leading
// `CRON_TZ=` or `TZ=` zone. A typo (four fields, minute 61) is reported at lint instead of becoming a
// Temporal Schedule that never fires or is refused when the CronWorkflow is submitted.

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  // robfig accepts 0–6 (7 is not Sunday there).
  { name: 'day of week', min: 0, max: 6, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
] as const;

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

type Field = (typeof FIELDS)[number];

function value(f: Field, text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const i = 'names' in f ? (f.names as readonly string[]).indexOf(text.toUpperCase()) : -1;
  return i < 0 ? undefined : f.min + i;
}

function fieldProblem(f: Field, text: string): string | undefined {
  for (const item of text.split(',')) {
    const [range, step, extra] = item.split('/');
    if (extra !== undefined || (step !== undefined && !/^\d+$/.test(step)) || step === '0') return `${f.name} "${text}": "${item}" has a bad step`;
    if (range === '*' || range === '?') continue;
    const [a, b, more] = range!.split('-');
    const lo = value(f, a ?? '');
    const hi = b === undefined ? lo : value(f, b);
    if (more !== undefined || lo === undefined || hi === undefined) return `${f.name} "${text}": "${item}" is not a value, a range or *`;
    if (lo < f.min || hi > f.max) return `${f.name} "${text}": ${lo}${b === undefined ? '' : `-${hi}`} is outside ${f.min}-${f.max}`;
    if (lo > hi) return `${f.name} "${text}": the range ${lo}-${hi} runs backwards`;
  }
  return undefined;
}

/** What is wrong with one cron expression, or undefined. */
export function cronProblem(expr: string): string | undefined {
  const spec = expr.trim().replace(/^(CRON_TZ|TZ)=\S+\s+/, '');
  if (spec.startsWith('@')) {
    if (DESCRIPTORS.has(spec)) return undefined;
    const every = /^@every\s+(.+)$/.exec(spec);
    if (every && /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(every[1]!.trim())) return undefined;
    return `"${expr}" is not a cron descriptor (@yearly, @monthly, @weekly, @daily, @hourly, @every <duration>)`;
  }
  const parts = spec.split(/\s+/).filter(Boolean);
  if (parts.length !== 5) return `"${expr}" has ${parts.length} field(s), not the 5 of minute hour day-of-month month day-of-week`;
  for (let i = 0; i < 5; i++) {
    const p = fieldProblem(FIELDS[i]!, parts[i]!);
    if (p) return `"${expr}": ${p}`;
  }
  return undefined;
}
