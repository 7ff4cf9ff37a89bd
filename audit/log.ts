// The tamper-evident audit log: every external side effect Tandem takes (a job submitted or cancelled,
// a deployment rolled out or back, a partition changed, a checkpoint copied or pruned, a quota admitted
// or released) as one JSON line, hash-chained: each record carries the hash of the one before it and
// its own hash, sha256 over its canonical JSON. Editing, removing or reordering a record breaks the
// chain at that record, and `tandem audit verify` names it. A head file beside the log remembers the
// last seq and hash, so cutting records off the end is detected too.
//
// Outside the workflow history on purpose: histories can be reset, exported and replayed, and the log
// must outlive them. Appends are serialized in-process (one queue per file) and across processes by a
// lock file (O_CREAT|O_EXCL), and written with O_APPEND in one write each.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { dirname } from 'node:path';

export interface AuditWho {
  tenant?: string;
  run?: string;
  operator?: string;
}

export interface AuditWhere {
  site?: string;
  runtime?: string;
  namespace?: string;
}

/** What a caller appends. */
export interface AuditEntry {
  who: AuditWho;
  /** The action, dotted: job.submitted, job.cancelled, deployment.rolledOut, partition.changed, … */
  what: string;
  where: AuditWhere;
  details?: Record<string, unknown>;
}

export interface AuditRecord extends AuditEntry {
  seq: number;
  /** ISO time of the append. */
  at: string;
  prevHash: string;
  hash: string;
}

export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every level and no whitespace: the bytes the hash is taken over. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
}

export function recordHash(r: Omit<AuditRecord, 'hash'>): string {
  const { seq, at, who, what, where, details, prevHash } = r;
  return createHash('sha256').update(canonicalJson({ seq, at, who, what, where, details, prevHash })).digest('hex');
}

/** user@host: who a worker appends as unless TANDEM_AUDIT_OPERATOR says otherwise. */
export function defaultOperator(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    /* no passwd entry (a container's arbitrary uid) */
  }
  return `${user}@${hostname()}`;
}

export interface Problem {
  line: number;
  seq?: number;
  message: string;
}

export interface Verification {
  ok: boolean;
  records: number;
  problems: Problem[];
  head?: { seq: number; hash: string };
}

const headFile = (file: string) => `${file}.head`;
const lockFile = (file: string) => `${file}.lock`;

/** Reads the records; a line that is not a record is a problem, not an exception. */
export function readAudit(file: string): { records: { line: number; record: AuditRecord }[]; problems: Problem[] } {
  const records: { line: number; record: AuditRecord }[] = [];
  const problems: Problem[] = [];
  if (!existsSync(file)) return { records, problems };
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  else if (lines.length) problems.push({ line: lines.length, message: 'the last line is incomplete (no newline): a torn or edited append' });
  for (const [i, l] of lines.entries()) {
    try {
      const r = JSON.parse(l) as AuditRecord;
      if (r === null || typeof r !== 'object' || typeof r.seq !== 'number' || typeof r.hash !== 'string' || typeof r.prevHash !== 'string') throw new Error('not a record');
      records.push({ line: i + 1, record: r });
    } catch {
      problems.push({ line: i + 1, message: 'is not an audit record (not JSON, or seq/hash/prevHash missing)' });
    }
  }
  return { records, problems };
}

/**
 * Checks the chain: seq 1, 2, 3 … in file order, each prevHash the previous record's hash, each hash
 * its own content's, and the last record the one the head file names. Every problem names the
 * record's seq and its line.
 */
export function verifyAudit(file: string): Verification {
  const { records, problems } = readAudit(file);
  // By seq, so that one moved or removed record is reported once, where it is, not at every later line.
  const bySeq = new Map<number, { line: number; record: AuditRecord }>();
  for (const e of records) if (!bySeq.has(e.record.seq)) bySeq.set(e.record.seq, e);
  let expectSeq = 1;
  for (const { line, record: r } of records) {
    const { hash, ...rest } = r;
    if (recordHash(rest) !== hash) problems.push({ line, seq: r.seq, message: `record seq ${r.seq} was modified: its hash does not match its content` });
    if (r.seq > expectSeq) {
      const later = bySeq.get(expectSeq);
      if (later && later.line > line) problems.push({ line, seq: r.seq, message: `record seq ${r.seq} is out of order: seq ${expectSeq} comes after it, on line ${later.line}` });
      else problems.push({ line, seq: r.seq, message: r.seq === expectSeq + 1 ? `record seq ${expectSeq} is missing before this record (seq ${r.seq})` : `records seq ${expectSeq} to ${r.seq - 1} are missing before this record (seq ${r.seq})` });
    } else if (r.seq < expectSeq) {
      problems.push({ line, seq: r.seq, message: bySeq.get(r.seq)!.line === line ? `record seq ${r.seq} is out of order: it belongs before seq ${expectSeq - 1}` : `record seq ${r.seq} appears twice (first on line ${bySeq.get(r.seq)!.line})` });
    }
    const before = r.seq === 1 ? undefined : bySeq.get(r.seq - 1);
    if ((r.seq === 1 && r.prevHash !== GENESIS_HASH) || (before && r.prevHash !== before.record.hash)) {
      problems.push({ line, seq: r.seq, message: `record seq ${r.seq} does not follow record seq ${r.seq - 1}${before ? ` (line ${before.line})` : ''}: its prevHash differs, so one of them was rewritten` });
    }
    expectSeq = Math.max(expectSeq, r.seq + 1);
  }
  let head: Verification['head'];
  if (existsSync(headFile(file))) {
    try {
      head = JSON.parse(readFileSync(headFile(file), 'utf8')) as { seq: number; hash: string };
      const last = records.at(-1)?.record;
      if (!last || last.seq !== head.seq || last.hash !== head.hash) problems.push({ line: records.at(-1)?.line ?? 0, seq: last?.seq, message: `the log ends at ${last ? `seq ${last.seq}` : 'no record'}, but its head file says seq ${head.seq}: records were removed from the end or the log was replaced` });
    } catch {
      problems.push({ line: 0, message: `the head file ${headFile(file)} is unreadable` });
    }
  } else if (records.length) problems.push({ line: 0, message: `the head file ${headFile(file)} is missing` });
  problems.sort((a, b) => a.line - b.line);
  return { ok: problems.length === 0, records: records.length, problems, head };
}

/** The last record, from the end of the file (appends never read the whole log). */
function lastRecord(file: string): AuditRecord | undefined {
  if (!existsSync(file)) return undefined;
  const size = statSync(file).size;
  if (size === 0) return undefined;
  const fd = openSync(file, 'r');
  try {
    for (let chunk = 64 * 1024; ; chunk *= 4) {
      const start = Math.max(0, size - chunk);
      const buf = Buffer.alloc(size - start);
      readSync(fd, buf, 0, buf.length, start);
      const text = buf.toString('utf8');
      if (!text.endsWith('\n')) throw new Error(`audit log ${file} ends with an incomplete record; run \`tandem audit verify\``);
      const lines = text.slice(0, -1).split('\n');
      if (lines.length > 1 || start === 0) return JSON.parse(lines.at(-1)!) as AuditRecord;
    }
  } finally {
    closeSync(fd);
  }
}

const STALE_LOCK_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Holds `<file>.lock` (other processes appending to the same log) while `fn` runs. */
async function withFileLock<T>(file: string, fn: () => T): Promise<T> {
  const lock = lockFile(file);
  for (let delay = 2; ; delay = Math.min(delay * 2, 100)) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // A process that died holding the lock leaves it behind; an append takes milliseconds.
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
      } catch {
        /* released meanwhile */
      }
      await sleep(delay);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

export class AuditLog {
  private static queues = new Map<string, Promise<unknown>>();

  constructor(
    readonly file: string,
    readonly operator: string = defaultOperator(),
  ) {}

  /** Appends one record after the current last one; resolves with it once it is on disk. */
  append(entry: AuditEntry): Promise<AuditRecord> {
    const prior = AuditLog.queues.get(this.file) ?? Promise.resolve();
    const next = prior.catch(() => undefined).then(() => withFileLock(this.file, () => this.appendLocked(entry)));
    AuditLog.queues.set(this.file, next);
    return next;
  }

  private appendLocked(entry: AuditEntry): AuditRecord {
    mkdirSync(dirname(this.file), { recursive: true });
    const last = lastRecord(this.file);
    const base = { seq: (last?.seq ?? 0) + 1, at: new Date().toISOString(), who: { operator: this.operator, ...entry.who }, what: entry.what, where: entry.where, details: entry.details, prevHash: last?.hash ?? GENESIS_HASH };
    const record: AuditRecord = { ...base, hash: recordHash(base) };
    const fd = openSync(this.file, 'a', 0o600);
    try {
      writeSync(fd, `${canonicalJson(record)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    writeFileSync(`${headFile(this.file)}.tmp`, JSON.stringify({ seq: record.seq, hash: record.hash }), { mode: 0o600 });
    renameSync(`${headFile(this.file)}.tmp`, headFile(this.file));
    return record;
  }
}

const logs = new Map<string, AuditLog>();
/** One AuditLog per file and operator in a process, so every activity set shares its queue. */
export function auditLog(file: string, operator?: string): AuditLog {
  const key = `${file}\u0000${operator ?? ''}`;
  let l = logs.get(key);
  if (!l) logs.set(key, (l = new AuditLog(file, operator)));
  return l;
}
