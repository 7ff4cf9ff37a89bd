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
  /** Records left out because a field is not a number or the record is short (only with skipMalformed; otherwise an error). */
  malformed?: number;
  /** The first malformed record's line, when some were skipped. */
  firstMalformed?: number;
}

/** The SWF fields the replay reads (0-based): job, submit, run, allocated and requested processors, requested time, user. */
const SWF_FIELDS: [number, string][] = [[0, 'job number'], [1, 'submit time'], [3, 'run time'], [4, 'allocated processors'], [7, 'requested processors'], [8, 'requested time'], [11, 'user id']];

/**
 * SWF as RLScheduler reads it: processors = max(allocated, requested); requested time -1 → run time;
 * jobs with run time ≤ 0 dropped (a -1 run time becomes 10 s first, as their loader does). Unlike
 * their loader, a record with no processor count (-1 in both fields: a job cancelled before it
 * started, as in LLNL-Thunder's log) is dropped too and counted in `unsized`: HPCSim gives it zero
 * nodes, and the engine would reject it as an unplaceable request.
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
  for (const line of text.split('\n')) {
    lineNo++;
    if (line.startsWith(';')) {
      const m = /^;\s*MaxProcs:\s*(\d+)/.exec(line);
      if (m) maxProcs = Number(m[1]);
      const n = /^;\s*MaxNodes:\s*(\d+)/.exec(line);
      if (n) maxNodes = Number(n[1]);
      continue;
    }
    const trimmed = line.trim();
    if (!trimmed) continue;
    const f = trimmed.split(/\s+/);
    if (f.length < 18) {
      bad(`an SWF record has 18 fields, this one ${f.length}`);
      continue;
    }
    const wrong = SWF_FIELDS.find(([i]) => !Number.isFinite(Number(f[i])));
    if (wrong) {
      bad(`field ${wrong[0] + 1} (${wrong[1]}) is not a number: ${JSON.stringify(f[wrong[0]])}`);
      continue;
    }
    let run = Number(f[3]);
    if (run < 0) run = 10;
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
    jobs.push({ id: Number(f[0]), submit: Number(f[1]), run, procs, reqTime, user: Number(f[11]) });
  }
  jobs.sort((a, b) => a.id - b.id);
  if (maxProcs === 0) maxProcs = maxNodes;
  return { jobs, maxProcs, maxNodes, unsized, noRequest, ...(malformed ? { malformed, firstMalformed } : {}) };
}

const CSV_COLUMNS = ['submit', 'run', 'procs'] as const;

/**
 * CSV with a header naming at least submit, run and procs (seconds, seconds, processors); optional
 * req (requested time, run time when absent), user and id. Errors name the line and column.
 */
export function parseCsv(text: string, source = 'trace'): Trace {
  const lines = text.split('\n').map((l) => l.trim());
  const head = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
  for (const c of CSV_COLUMNS) if (!head.includes(c)) throw new InputError('job trace', [{ path: c, line: 1, message: `the CSV header lacks "${c}" (needs submit, run, procs; optional req, user, id)` }], { source });
  const col = (name: string) => head.indexOf(name);
  const jobs: TraceJob[] = [];
  for (let k = 1; k < lines.length; k++) {
    if (!lines[k]) continue;
    const f = lines[k].split(',');
    const num = (name: string, fallback?: number) => {
      const i = col(name);
      if (i < 0) return fallback!;
      const v = Number(f[i]);
      if (!Number.isFinite(v)) throw new InputError('job trace', [{ path: name, line: k + 1, message: `not a number: ${JSON.stringify(f[i] ?? '')}` }], { source });
      return v;
    };
    const run = num('run');
    if (run <= 0) continue;
    jobs.push({ id: num('id', k), submit: num('submit'), run, procs: Math.max(1, num('procs')), reqTime: num('req', run), user: num('user', 1) });
  }
  return { jobs: jobs.sort((a, b) => a.submit - b.submit || a.id - b.id), maxProcs: 0, maxNodes: 0 };
}
