// The one logger of a Tandem process. It is installed as Temporal's Runtime logger (workers/main.ts,
// `tandem dev`), so everything lands here: the SDK's own messages, Core's (forwarded), workflow `log`
// calls (through Temporal's logger sink, carrying workflowId/runId) and activity `Context.log` calls
// (carrying the activity's workflow, attempt, and the stage/site the activity interceptor adds).
//
// Two formats: `text` (the default: one readable line) and `json` (one object a line: time, level, msg,
// then workflowId, runId, stage, site, attempt where known, then the rest). Secrets never reach a
// line: every value the configuration marks secret (config/worker.ts `secretValues`) is replaced
// wherever it appears, fields named like credentials are dropped, and Temporal's activity task token
// (a capability to complete the activity) is not logged.
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';

export type LogFormat = 'text' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];
const LEVELS: Record<LogLevel, number> = { TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4 };

export interface LoggerOptions {
  format?: LogFormat;
  /** Lowest level written; default INFO. */
  level?: LogLevel;
  /** Values that must never appear in a line (API keys, tokens, client secrets, codec keys). */
  secrets?: Iterable<string>;
  /** Where lines go; default stderr. */
  write?: (line: string) => void;
  /** Clock, for tests. */
  now?: () => Date;
}

/** Field names whose values are credentials whatever they hold. */
const CREDENTIAL_KEY = /(^|_|-)(token|secret|password|passwd|apikey|api_key|authorization|credential|privatekey|private_key)s?$|^(taskToken|apiKey|clientSecret|accessToken|refreshToken)$/i;
/** Temporal's names for the fields every line leads with. */
const FIRST: [string, string[]][] = [
  ['workflowId', ['workflowId']],
  ['runId', ['runId', 'workflowRunId']],
  ['stage', ['stage']],
  ['site', ['site']],
  ['attempt', ['attempt']],
];
const REDACTED = '[redacted]';
/** @temporalio/worker's LogTimestamp (nanoseconds since the epoch, a bigint). */
const LOG_TIMESTAMP = Symbol.for('log_timestamp');

export class TandemLogger implements Logger {
  readonly format: LogFormat;
  private readonly min: number;
  private readonly write: (line: string) => void;
  private readonly now: () => Date;
  private secrets: string[];

  constructor(o: LoggerOptions = {}) {
    this.format = o.format ?? 'text';
    this.min = LEVELS[o.level ?? 'INFO'];
    this.write = o.write ?? ((line) => void process.stderr.write(`${line}\n`));
    this.now = o.now ?? (() => new Date());
    this.secrets = [];
    this.addSecrets(o.secrets ?? []);
  }

  /** More values never to print (a sites file's secrets, once loaded). Short values are ignored: a
   *  one-character "secret" would redact every line. */
  addSecrets(values: Iterable<string>): void {
    for (const v of values) if (typeof v === 'string' && v.length >= 4 && !this.secrets.includes(v)) this.secrets.push(v);
    this.secrets.sort((a, b) => b.length - a.length); // longest first: a secret containing another is hidden whole
  }

  log(level: LogLevel, message: string, meta: LogMetadata = {}): void {
    if ((LEVELS[level] ?? LEVELS.INFO) < this.min) return;
    this.write(this.line(level, message, meta));
  }
  trace(message: string, meta?: LogMetadata) {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata) {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata) {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata) {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata) {
    this.log('ERROR', message, meta);
  }

  /** One line, redacted; exported through `log` for tests of the format. */
  line(level: LogLevel, message: string, meta: LogMetadata): string {
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(meta)) {
      if (v === undefined || CREDENTIAL_KEY.test(k)) continue;
      rest[k] = v;
    }
    const lead: Record<string, unknown> = {};
    for (const [name, keys] of FIRST) {
      for (const k of keys) {
        if (rest[k] === undefined) continue;
        lead[name] ??= rest[k];
        delete rest[k];
      }
    }
    // The time Temporal stamped the entry with (forwarded Core logs, workflow logs), under its symbol key.
    const ns = (meta as Record<symbol, unknown>)[LOG_TIMESTAMP];
    const time = typeof ns === 'bigint' ? new Date(Number(ns / 1_000_000n)) : this.now();
    if (this.format === 'json') {
      return this.redact(JSON.stringify({ time: time.toISOString(), level: level.toLowerCase(), msg: message, ...lead, ...rest }, jsonValue));
    }
    const fields = Object.entries({ ...lead, ...rest }).map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v, jsonValue)}`);
    return this.redact(`${time.toISOString()} ${level.padEnd(5)} ${message}${fields.length ? ` ${fields.join(' ')}` : ''}`);
  }

  private redact(line: string): string {
    for (const s of this.secrets) {
      // Also as JSON would escape it (a secret with a quote or backslash in it).
      const escaped = JSON.stringify(s).slice(1, -1);
      line = line.split(s).join(REDACTED);
      if (escaped !== s) line = line.split(escaped).join(REDACTED);
    }
    return line;
  }
}

/** Errors as their message (and type), bigints as strings: JSON.stringify handles neither. */
function jsonValue(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Error) return { name: v.name, message: v.message };
  return v;
}

/** The process's logger: text to stderr until the entry point configures it (configureLogger). */
export let logger = new TandemLogger();

/** Called once by an entry point (workers/main.ts, the CLI) before the Runtime is installed. */
export function configureLogger(o: LoggerOptions): TandemLogger {
  logger = new TandemLogger(o);
  return logger;
}

/** A line for the person who started the process: as it is in text format (stdout), a log line in json. */
export function announce(line: string, meta?: LogMetadata): void {
  if (logger.format === 'json') logger.info(line, meta);
  else console.log(line);
}
