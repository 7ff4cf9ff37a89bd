// The tamper-evident audit log: every external side effect Tandem takes (a job submitted or cancelled,
// a deployment rolled out or back, a partition changed, a checkpoint copied or pruned, a quota admitted
// or released) as one JSON line, hash-chained: each record carries the hash of the one before it and
// its own hash, sha256 over its canonical JSON. Editing, removing or reordering a record breaks the
// chain at that record, and `tandem audit verify` names it. A head file beside the log remembers the
// last seq and hash, so cutting records off the end is detected too.
//
// Keyed (AuditKey: the workers' logs always are, activities/audit.ts): a chain alone is no defence
// against someone who can write the log, who rewrites a record and recomputes every hash after it. So
// each record also carries `mac`, HMAC-SHA256 under a key kept apart from the log (TANDEM_AUDIT_KEY_FILE,
// by default <TANDEM_HOME>/keys/audit.key, directory 0700), and the head file is MACed too. And since an
// older copy of the log and its head are both validly MACed, the last seq and hash are also written to
// an anchor beside the key (`<key>.<log id>.anchor`, MACed), where the log's directory's writers cannot
// reach: a log that ends before the anchor was cut or rolled back; a missing log with an anchor was
// deleted. Without the key nothing verifies as intact (docs/security.md).
//
// A torn last line (a writer that died mid-append) is moved aside on the next append
// (`<log>.torn-<time>`) and an `audit.tornTail` record says so, instead of breaking every later append.
//
// Outside the workflow history on purpose: histories can be reset, exported and replayed, and the log
// must outlive them. Appends are serialized in-process (one queue per file) and across processes by a
// lock file (O_CREAT|O_EXCL), and written with O_APPEND in one write each.
import { chmodSync, closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';

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
  /** HMAC-SHA256 of the hash under the log's key (keyed logs). */
  mac?: string;
}

/** The secret that authenticates a log, and the anchor that pins its end (both apart from the log). */
export interface AuditKey {
  key: Buffer;
  /** The anchor file: the last seq and hash, MACed. */
  anchor: string;
}

const mac = (key: Buffer, what: string): string => createHmac('sha256', key).update(what).digest('hex');
const macOk = (key: Buffer, what: string, got: unknown): boolean => {
  // A forged MAC need not be hex: anything but 64 hex digits is a mismatch, never an exception.
  if (typeof got !== 'string' || !/^[0-9a-f]{64}$/.test(got)) return false;
  return timingSafeEqual(Buffer.from(mac(key, what), 'hex'), Buffer.from(got, 'hex'));
};
const recordMacInput = (hash: string) => `record\n${hash}`;
const endMacInput = (kind: 'head' | 'anchor', log: string, seq: number, hash: string) => `${kind}\n${log}\n${seq}\n${hash}`;

export class AuditKeyError extends Error {}

/**
 * The key in `file` (at least 32 characters; whitespace trimmed), and its anchor for `log`. `create`:
 * a missing key is generated (32 random bytes, hex), its directory made 0700 and the file 0600 — a
 * worker's first append; `tandem audit verify` never creates one.
 */
export function loadAuditKey(file: string, log: string, create: boolean): AuditKey {
  if (!existsSync(file)) {
    if (!create) throw new AuditKeyError(`no audit key at ${file}: verifying the log needs the key its workers append with (TANDEM_AUDIT_KEY_FILE)`);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; // another worker created it first
    }
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new AuditKeyError(`the audit key ${file} is unreadable: ${(e as Error).message}`);
  }
  if (text.length < 32) throw new AuditKeyError(`the audit key ${file} is too short: it needs at least 32 characters (a generated key is 64 hex digits)`);
  const id = createHash('sha256').update(resolve(log)).digest('hex').slice(0, 16);
  return { key: Buffer.from(text, 'utf8'), anchor: `${file}.${id}.anchor` };
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
export function verifyAudit(file: string, key?: AuditKey): Verification {
  const { records, problems } = readAudit(file);
  if (key) {
    for (const { line, record: r } of records) {
      if (!macOk(key.key, recordMacInput(r.hash), r.mac)) problems.push({ line, seq: r.seq, message: r.mac === undefined ? `record seq ${r.seq} has no MAC: it was not written by a worker holding the key` : `record seq ${r.seq} was forged or modified: its MAC does not match (written without the key)` });
    }
  }
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
  const last = records.at(-1)?.record;
  if (key) {
    // The anchor (beside the key) pins the end: a log behind it was cut or rolled back, a missing one deleted.
    let anchor: { seq: number; hash: string; mac?: string } | undefined;
    try {
      anchor = existsSync(key.anchor) ? (JSON.parse(readFileSync(key.anchor, 'utf8')) as typeof anchor) : undefined;
    } catch {
      problems.push({ line: 0, message: `the anchor ${key.anchor} is unreadable` });
    }
    if (anchor && !macOk(key.key, endMacInput('anchor', resolve(file), anchor.seq, anchor.hash), anchor.mac)) problems.push({ line: 0, message: `the anchor ${key.anchor} was forged: its MAC does not match` });
    else if (anchor) {
      const at = records.find((e) => e.record.seq === anchor.seq);
      if (!existsSync(file)) problems.push({ line: 0, seq: anchor.seq, message: `the log was deleted: its anchor says it held ${anchor.seq} records` });
      else if (!last || last.seq < anchor.seq) problems.push({ line: records.at(-1)?.line ?? 0, seq: last?.seq, message: `the log ends at ${last ? `seq ${last.seq}` : 'no record'}, but its anchor says seq ${anchor.seq}: records seq ${(last?.seq ?? 0) + 1} to ${anchor.seq} were cut off or the log was rolled back` });
      else if (at && at.record.hash !== anchor.hash) problems.push({ line: at.line, seq: anchor.seq, message: `record seq ${anchor.seq} is not the one the anchor pinned: the log was replaced from that record on` });
    } else if (records.length) problems.push({ line: 0, message: `the anchor ${key.anchor} is missing: the log's end cannot be checked (deleted, or a log written without this key)` });
  }
  if (existsSync(headFile(file))) {
    try {
      head = JSON.parse(readFileSync(headFile(file), 'utf8')) as { seq: number; hash: string };
      if (key && !macOk(key.key, endMacInput('head', resolve(file), head.seq, head.hash), (head as { mac?: string }).mac)) problems.push({ line: 0, message: `the head file ${headFile(file)} was forged: its MAC does not match` });
      if (!last || last.seq !== head.seq || last.hash !== head.hash) problems.push({ line: records.at(-1)?.line ?? 0, seq: last?.seq, message: `the log ends at ${last ? `seq ${last.seq}` : 'no record'}, but its head file says seq ${head.seq}: records were removed from the end or the log was replaced` });
    } catch {
      problems.push({ line: 0, message: `the head file ${headFile(file)} is unreadable` });
    }
  } else if (records.length || (key && existsSync(key.anchor))) problems.push({ line: 0, message: `the head file ${headFile(file)} is missing` });
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

/**
 * Moves a torn last line (no newline: a writer died mid-append) out of the log into
 * `<log>.torn-<time>` and cuts it off, so appends continue. Returns the quarantine file, if any.
 */
function quarantineTornTail(file: string): { file: string; bytes: number } | undefined {
  if (!existsSync(file)) return undefined;
  const size = statSync(file).size;
  if (size === 0) return undefined;
  const fd = openSync(file, 'r+');
  try {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] === 0x0a) return undefined;
    // Find the last newline (from the end, in chunks).
    let cut = 0;
    for (let end = size; end > 0 && cut === 0; ) {
      const start = Math.max(0, end - 64 * 1024);
      const buf = Buffer.alloc(end - start);
      readSync(fd, buf, 0, buf.length, start);
      const i = buf.lastIndexOf(0x0a);
      if (i >= 0) cut = start + i + 1;
      end = start;
    }
    const torn = Buffer.alloc(size - cut);
    readSync(fd, torn, 0, torn.length, cut);
    const aside = `${file}.torn-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    writeFileSync(aside, torn, { mode: 0o600 });
    ftruncateSync(fd, cut);
    fsyncSync(fd);
    return { file: aside, bytes: torn.length };
  } finally {
    closeSync(fd);
  }
}

/**
 * A log whose first record has no MAC, moved with its head file to `<log>.unkeyed-<time>` (verify it
 * there without a key). Returns where it went, how many records it held and its last hash, or
 * undefined when there is no such log.
 */
function setAsideUnkeyed(file: string): { previous: string; previousRecords: number; previousHash?: string } | undefined {
  if (!existsSync(file) || statSync(file).size === 0) return undefined;
  const fd = openSync(file, 'r');
  let first: string;
  try {
    const buf = Buffer.alloc(Math.min(statSync(file).size, 64 * 1024));
    readSync(fd, buf, 0, buf.length, 0);
    first = buf.toString('utf8').split('\n')[0]!;
  } finally {
    closeSync(fd);
  }
  try {
    if ((JSON.parse(first) as { mac?: unknown }).mac !== undefined) return undefined;
  } catch {
    return undefined; // not a record: left for verify to report
  }
  const { records } = readAudit(file);
  const last = records.at(-1)?.record;
  const previous = `${file}.unkeyed-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(file, previous);
  if (existsSync(headFile(file))) renameSync(headFile(file), headFile(previous));
  return { previous, previousRecords: last?.seq ?? 0, previousHash: last?.hash };
}

export class AuditLog {
  private static queues = new Map<string, Promise<unknown>>();

  constructor(
    readonly file: string,
    readonly operator: string = defaultOperator(),
    readonly key?: AuditKey,
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
    if (this.key && !existsSync(this.key.anchor)) {
      // The first keyed append to a log written before its workers had a key (an upgrade): its records
      // carry no MAC and never could, so it is set aside whole and the keyed log starts by naming it.
      const unkeyed = setAsideUnkeyed(this.file);
      if (unkeyed) this.write({ who: {}, what: 'audit.keyed', where: {}, details: unkeyed });
    }
    if (this.key) {
      // Keyed logs heal a torn tail (and say so in the log); an unkeyed one is left for `verify` to report.
      const torn = quarantineTornTail(this.file);
      if (torn) this.write({ who: {}, what: 'audit.tornTail', where: {}, details: { quarantined: torn.file, bytes: torn.bytes } });
    }
    return this.write(entry);
  }

  private write(entry: AuditEntry): AuditRecord {
    const last = lastRecord(this.file);
    const base = { seq: (last?.seq ?? 0) + 1, at: new Date().toISOString(), who: { operator: this.operator, ...entry.who }, what: entry.what, where: entry.where, details: entry.details, prevHash: last?.hash ?? GENESIS_HASH };
    const hash = recordHash(base);
    const record: AuditRecord = { ...base, hash, ...(this.key ? { mac: mac(this.key.key, recordMacInput(hash)) } : {}) };
    const fd = openSync(this.file, 'a', 0o600);
    try {
      writeSync(fd, `${canonicalJson(record)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const end = (kind: 'head' | 'anchor') => ({ seq: record.seq, hash, ...(this.key ? { mac: mac(this.key.key, endMacInput(kind, resolve(this.file), record.seq, hash)) } : {}) });
    writeAtomic(headFile(this.file), JSON.stringify(end('head')));
    if (this.key) writeAtomic(this.key.anchor, JSON.stringify(end('anchor')));
    return record;
  }
}

function writeAtomic(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  chmodSync(`${path}.tmp`, 0o600);
  renameSync(`${path}.tmp`, path);
}

const logs = new Map<string, AuditLog>();
/** One AuditLog per file and operator in a process, so every activity set shares its queue. */
export function auditLog(file: string, operator?: string, key?: AuditKey): AuditLog {
  const id = `${file}\u0000${operator ?? ''}\u0000${key?.anchor ?? ''}`;
  let l = logs.get(id);
  if (!l) logs.set(id, (l = new AuditLog(file, operator, key)));
  return l;
}
