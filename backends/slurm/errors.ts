// Every error the Slurm clients raise is classified here, and only here (ARCHITECTURE.md, "How a stage runs"):
//   observation  401/408/424/429/5xx, timeouts, dropped connections: we could not look; never a job failure
//   placement    403 from a QOS/association limit: back off and let placement choose again
//   not-found    404 (and slurmrestd's "Invalid job id"): the job is gone or not yet visible
//   invalid      other 4xx, and 3xx (redirects are never followed: requests carry tokens): retrying cannot help
// The error's `name` is the Temporal failure type an activity reports, so the workflow's retry policy
// (nonRetryableErrorTypes) sees the classification without this module importing Temporal.
// Messages carry method, path and the server's own message only: never headers, tokens or secrets.
import { FAILURES } from '../../contract/failures.js';

export type ErrorKind = 'observation' | 'placement' | 'not-found' | 'invalid';

export class SlurmApiError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly status?: number,
    /** Server-requested delay before the next attempt (Retry-After), in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = kind === 'observation' ? FAILURES.ObservationFailed.type : kind === 'placement' ? FAILURES.PlacementBackoff.type : kind === 'not-found' ? FAILURES.JobNotFound.type : FAILURES.InvalidRequest.type;
  }

  get retryable(): boolean {
    return this.kind === 'observation' || this.kind === 'placement';
  }
}

export class InvalidRequestError extends SlurmApiError {
  constructor(message: string) {
    super('invalid', message);
  }
}

/** Retry-After is either delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const QOS_HINT = /qos|quota|limit|association|MaxSubmit|MaxJobs|AssocGrp|QOSGrp/i;

export interface HttpFailure {
  method: string;
  /** Path only (no host, no query secrets). */
  path: string;
  status: number;
  /** The server's message (FirecREST ApiResponseError.message, slurmrestd errors[].error). */
  serverMessage?: string;
  retryAfter?: string | string[];
  /** slurmrestd's error_number values. */
  slurmErrors?: number[];
}

// Slurm's own error numbers that mean "no such job" (ESLURM_INVALID_JOB_ID, ESLURM_ALREADY_DONE).
const SLURM_NO_SUCH_JOB = new Set([2017, 2021]);

export function classifyHttp(f: HttpFailure): SlurmApiError {
  const what = `${f.method} ${f.path} → ${f.status}${f.serverMessage ? `: ${truncate(f.serverMessage)}` : ''}`;
  const retryAfterMs = parseRetryAfter(f.retryAfter);
  // The clients do not follow redirects (requests carry tokens); the site's URL must be the API's own.
  if (f.status >= 300 && f.status < 400) return new SlurmApiError('invalid', `request refused (${what}): a redirect, not followed because requests carry credentials; configure the API's final URL`, f.status);
  if (f.slurmErrors?.some((n) => SLURM_NO_SUCH_JOB.has(n))) return new SlurmApiError('not-found', what, f.status);
  // slurmrestd answers 500 for requests Slurm itself refused (ESLURM_* numbers 2000–2999): not an outage.
  const refused = f.slurmErrors?.find((n) => n >= 2000 && n < 3000);
  if (refused !== undefined) {
    return QOS_HINT.test(f.serverMessage ?? '') ? new SlurmApiError('placement', `site refused the job for now (${what})`, f.status, retryAfterMs) : new SlurmApiError('invalid', `request refused (${what})`, f.status);
  }
  if (f.status === 401 || f.status === 408 || f.status === 424 || f.status === 429 || f.status >= 500) {
    return new SlurmApiError('observation', `could not observe Slurm (${what})`, f.status, retryAfterMs);
  }
  if (f.status === 403 && QOS_HINT.test(f.serverMessage ?? '')) return new SlurmApiError('placement', `site refused the job for now (${what})`, f.status, retryAfterMs);
  if (f.status === 404) return new SlurmApiError('not-found', what, f.status);
  return new SlurmApiError('invalid', `request refused (${what})`, f.status);
}

/** Transport failures: timeouts, refused or dropped connections. Only the error code is kept. */
export function classifyTransport(method: string, path: string, e: unknown): SlurmApiError {
  if (e instanceof SlurmApiError) return e;
  const code = (e as { code?: string }).code ?? (e as Error).name ?? 'ERROR';
  return new SlurmApiError('observation', `could not observe Slurm (${method} ${path}: ${code})`);
}

function truncate(s: string, max = 300): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

export interface BackoffPolicy {
  attempts: number;
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { attempts: 6, initialMs: 200, maxMs: 10_000 };

/**
 * Runs `fn`, retrying retryable classifications with exponential backoff (honouring Retry-After).
 * Only for idempotent operations: submit is made idempotent by the backend's look-up by name.
 */
export async function withRetries<T>(fn: () => Promise<T>, policy: BackoffPolicy = DEFAULT_BACKOFF, sleep: (ms: number) => Promise<void> = defaultSleep): Promise<T> {
  let delay = policy.initialMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof SlurmApiError) || e.kind !== 'observation' || attempt >= policy.attempts) throw e;
      await sleep(Math.min(Math.max(e.retryAfterMs ?? 0, delay), Math.max(policy.maxMs, e.retryAfterMs ?? 0)));
      delay = Math.min(delay * 2, policy.maxMs);
    }
  }
}

export const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
