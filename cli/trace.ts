// Job traces as text, parsed without I/O (the caller reads the file): the Standard Workload Format of
// the Parallel Workloads Archive, as RLScheduler's HPCSim reads it, and a small CSV form.
import { InputError } from '../contract/input-error.js';

export interface TraceJob {
  id: number;
  submit: number;
  run: number;
  procs: number;
  /** Requested time: the user's walltime estimate. */
  reqTime: number;
  user: number;
}

export interface Trace {
  jobs: TraceJob[];
  /** The header's MaxProcs (MaxNodes when it has none) and MaxNodes; 0 when absent. */
  maxProcs: number;
  maxNodes: number;
  /** Records left out because they name no processor count (jobs cancelled before they started). */
  unsized?: number;
  /** Jobs whose requested time was unknown (-1), so their run time stands in for it: an oracle estimate. */
  noRequest?: number;
  /** Records left out because a field is not a number, a count is fractional, a value is negative other than -1 (or the submit time negative), a time is beyond MAX_TRACE_SECONDS, a job number repeats or the record is short (only with skipMalformed; otherwise an error). */
  malformed?: number;
  /** The first malformed record's line, when some were skipped. */
  firstMalformed?: number;
}

/** The SWF fields the replay reads (0-based): job, submit, run, allocated and requested processors, requested time, user. */
const SWF_FIELDS: [number, string][] = [[0, 'job number'], [1, 'submit time'], [3, 'run time'], [4, 'allocated processors'], [7, 'requested processors'], [8, 'requested time'], [11, 'user id']];
/** Fields that count things (a job, processors, a user): whole numbers in every SWF log. */
const WHOLE = new Set([0, 4, 7, 11]);
/**
 * The submit time: SWF counts it from the log's start, so never below 0, and its -1 ("unknown")
 * gives the job no arrival: read as second -1 it became the window's time 0 and moved every other
 * arrival of a window from the middle of a log about 10^6 s later (a 3-job replay took 277.8 h). In
 * the other fields -1 is "unknown" too, the only negative a log writes; any other is no duration,
 * size, estimate or name (a -5 requested time would replay as a 1 s estimate, a -5 run time as 10 s).
 */
const SUBMIT = 1;
/**
 * A number as SWF writes one: decimal, optionally signed, with a fraction or exponent. Number()
 * alone also takes "0x10", "Infinity" and "" (as 0), none of which a log means.
 */
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
/**
 * The largest time (s) a trace may give, submit, run or requested: 10^11 s is over 3,000 years (epoch
 * seconds are 1.7 × 10^9), so no log's. Beyond about 10^16 adding a second to a time no longer changes
 * it: a 1 s job submitted at 10^17 ended as it started, and three 2-node jobs replayed at once on a
 * 2-node machine (utilisation 4.0) with no error.
 */
export const MAX_TRACE_SECONDS = 1e11;
const TIMES = new Set([1, 3, 8]);
const tooLong = (v: number) => Math.abs(v) > MAX_TRACE_SECONDS;
// MAX_TRACE_SECONDS in words.
const tooLongText = 'at most 10^11 s (over 3,000 years)';
/** A header's MaxNodes / MaxProcs beyond this is refused: no machine has it, and the replay would build every node. */
export const MAX_HEADER_SIZE = 100_000_000;

/**
 * SWF as RLScheduler reads it: processors = max(allocated, requested); requested time -1 → run time;
 * jobs with run time ≤ 0 dropped (a -1 run time becomes 10 s first, as their loader does). Unlike
 * their loader, a negative other than -1 (SWF's "unknown") in a field read, and any negative submit time,
 * is a malformed record (they make any negative run time 10 s), and a record with no processor count
 * (-1 or 0 in both fields: a job cancelled before it started, as in LLNL-Thunder's log) is dropped
 * too and counted in `unsized`: HPCSim gives it zero nodes, and the engine would reject it as an
 * unplaceable request.
 */
export function parseSwf(text: string, opts: { skipMalformed?: boolean; source?: string } = {}): Trace {
  let malformed = 0;
  let firstMalformed: number | undefined;
  let lineNo = 0;
  const bad = (message: string) => {
    if (!opts.skipMalformed) throw new InputError('job trace', [{ path: 'record', line: lineNo, message: `${message} (--skip-malformed leaves such records out and counts them)` }], { source: opts.source ?? 'trace' });
    malformed++;
    firstMalformed ??= lineNo;
  };
  let maxProcs = 0;
  let maxNodes = 0;
  const jobs: TraceJob[] = [];
  let unsized = 0;
  let noRequest = 0;
  // Where each job number was first seen: a number given twice would make two jobs one in the replay.
  const seen = new Map<number, number>();
  // A byte-order mark (an editor's UTF-8 save) would hide the first header line.
  for (const line of text.replace(/^\uFEFF/, '').split('\n')) {
    lineNo++;
    if (line.startsWith(';')) {
      const h = /^;\s*(MaxProcs|MaxNodes):\s*(\S*)/.exec(line);
      // -1 is SWF's "unknown", as in any other field: no size given.
      if (h && h[2] !== '-1') {
        const v = Number(h[2]);
        // Not skippable: the machine the whole replay runs on comes from here.
        if (!/^\d+$/.test(h[2].replace(/\r$/, '')) || v > MAX_HEADER_SIZE)
          throw new InputError('job trace', [{ path: h[1], line: lineNo, message: `must be a whole number of at most ${MAX_HEADER_SIZE.toLocaleString('en-US')}, not ${JSON.stringify(h[2])}` }], { source: opts.source ?? 'trace' });
        if (h[1] === 'MaxProcs') maxProcs = v;
        else maxNodes = v;
      }
      continue;
    }
    const trimmed = line.trim();
    if (!trimmed) continue;
    const f = trimmed.split(/\s+/);
    if (f.length < 18) {
      bad(`an SWF record has 18 fields, this one ${f.length}`);
      continue;
    }
    const wrong = SWF_FIELDS.find(([i]) => !DECIMAL.test(f[i]) || !Number.isFinite(Number(f[i])));
    if (wrong) {
      bad(`field ${wrong[0] + 1} (${wrong[1]}) is not a number: ${JSON.stringify(f[wrong[0]])}`);
      continue;
    }
    const fraction = SWF_FIELDS.find(([i]) => WHOLE.has(i) && !Number.isInteger(Number(f[i])));
    if (fraction) {
      bad(`field ${fraction[0] + 1} (${fraction[1]}) must be a whole number, not ${f[fraction[0]]}`);
      continue;
    }
    if (Number(f[SUBMIT]) < 0) {
      bad(`field 2 (submit time) must be 0 or more, not ${f[SUBMIT]}: SWF counts time from the log's start, and -1 (unknown) gives the job no arrival to replay`);
      continue;
    }
    const negative = SWF_FIELDS.find(([i]) => i !== SUBMIT && Number(f[i]) < 0 && Number(f[i]) !== -1);
    if (negative) {
      bad(`field ${negative[0] + 1} (${negative[1]}) must be ≥ 0 or -1 (unknown), not ${f[negative[0]]}`);
      continue;
    }
    const long = SWF_FIELDS.find(([i]) => TIMES.has(i) && tooLong(Number(f[i])));
    if (long) {
      bad(`field ${long[0] + 1} (${long[1]}) must be ${tooLongText}, not ${f[long[0]]}`);
      continue;
    }
    const id = Number(f[0]);
    const first = seen.get(id);
    if (first !== undefined) {
      bad(`job number ${id} was already given on line ${first}: two jobs would be replayed as one`);
      continue;
    }
    seen.set(id, lineNo);
    let run = Number(f[3]);
    if (run === -1) run = 10;
    if (run <= 0) continue;
    const procs = Math.max(Number(f[4]), Number(f[7]));
    if (!(procs > 0)) {
      unsized++;
      continue;
    }
    let reqTime = Number(f[8]);
    if (reqTime === -1) {
      reqTime = run;
      noRequest++;
    }
    jobs.push({ id, submit: Number(f[1]), run, procs, reqTime, user: Number(f[11]) });
  }
  jobs.sort((a, b) => a.id - b.id);
  if (maxProcs === 0) maxProcs = maxNodes;
  return { jobs, maxProcs, maxNodes, unsized, noRequest, ...(malformed ? { malformed, firstMalformed } : {}) };
}

const CSV_COLUMNS = ['submit', 'run', 'procs'] as const;
/** Every column the replay reads; any other header name is a typo that would be dropped in silence. */
const CSV_KNOWN = ['submit', 'run', 'procs', 'req', 'user', 'id'];

/**
 * CSV with a header naming at least submit, run and procs (seconds, seconds, processors); optional
 * req (requested time, run time when absent), user and id. Errors name the line and column: a cell
 * that is not a number, a fractional procs, user or id, procs below 1, req of 0 or less, a negative
 * user or id, a time beyond MAX_TRACE_SECONDS, an id given twice, a header column the replay does not
 * read or names twice, a row whose cells are not the header's. The file is written for this replay, so what SWF reads as unknown
 * (-1) or as a job cancelled before it started (0 processors) is a mistake here, not a job to guess
 * at. The submit time may be negative (times are relative, as in SWF). A row whose run is 0 or less
 * (a job that never ran) is checked like any other, then left out, as SWF drops such records.
 */
export function parseCsv(text: string, source = 'trace'): Trace {
  const lines = text.replace(/^\uFEFF/, '').split('\n').map((l) => l.trim());
  const head = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
  for (const c of CSV_COLUMNS) if (!head.includes(c)) throw new InputError('job trace', [{ path: c, line: 1, message: `the CSV header lacks "${c}" (needs submit, run, procs; optional req, user, id)` }], { source });
  // A misspelt "req" would have replayed every job with its run time as the estimate (an oracle), and
  // a column given twice would have been read from its first place only.
  head.forEach((h, i) => {
    if (!CSV_KNOWN.includes(h)) throw new InputError('job trace', [{ path: h || `column ${i + 1}`, line: 1, message: `unknown column ${JSON.stringify(h)} (the columns are submit, run, procs; optional req, user, id)` }], { source });
    if (head.indexOf(h) !== i) throw new InputError('job trace', [{ path: h, line: 1, message: `column "${h}" is given twice (columns ${head.indexOf(h) + 1} and ${i + 1})` }], { source });
  });
  const col = (name: string) => head.indexOf(name);
  const jobs: TraceJob[] = [];
  const seen = new Map<number, number>();
  for (let k = 1; k < lines.length; k++) {
    if (!lines[k]) continue;
    const f = lines[k].split(',');
    // A row with a cell more or less than the header is shifted: its numbers would land in the wrong columns.
    if (f.length !== head.length) throw new InputError('job trace', [{ path: 'row', line: k + 1, message: `has ${f.length} cell(s), the header ${head.length}` }], { source });
    const num = (name: string, fallback?: number) => {
      const i = col(name);
      if (i < 0) return fallback!;
      const raw = (f[i] ?? '').trim();
      // An empty cell is no number (Number('') is 0), nor is hex or Infinity.
      const v = Number(raw);
      if (!DECIMAL.test(raw) || !Number.isFinite(v)) throw new InputError('job trace', [{ path: name, line: k + 1, message: `not a number: ${JSON.stringify(f[i] ?? '')}` }], { source });
      if ((name === 'procs' || name === 'id' || name === 'user') && !Number.isInteger(v)) throw new InputError('job trace', [{ path: name, line: k + 1, message: `must be a whole number, not ${raw}` }], { source });
      const low = name === 'procs' && v < 1 ? `a job needs at least one processor, not ${raw}` : name === 'req' && !(v > 0) ? `a requested time must be above 0 s, not ${raw} (without the req column, each job's run time stands in)` : (name === 'id' || name === 'user') && v < 0 ? `must be 0 or more, not ${raw}` : undefined;
      if (low) throw new InputError('job trace', [{ path: name, line: k + 1, message: low }], { source });
      if ((name === 'submit' || name === 'run' || name === 'req') && tooLong(v)) throw new InputError('job trace', [{ path: name, line: k + 1, message: `must be ${tooLongText}, not ${raw}` }], { source });
      return v;
    };
    const run = num('run');
    const id = num('id', k);
    const job = { id, submit: num('submit'), run, procs: num('procs'), reqTime: num('req', run), user: num('user', 1) };
    const first = seen.get(id);
    if (first !== undefined) throw new InputError('job trace', [{ path: 'id', line: k + 1, message: `job ${id} was already given on line ${first}: two jobs would be replayed as one` }], { source });
    seen.set(id, k + 1);
    if (run > 0) jobs.push(job);
  }
  return { jobs: jobs.sort((a, b) => a.submit - b.submit || a.id - b.id), maxProcs: 0, maxNodes: 0 };
}
