// The slurmrestd client: got over a unix socket (rest_auth/local) or TCP with Slurm JWTs. Shapes and
// paths come from slurmrestd-mapping.ts; errors are classified by errors.ts.
import got, { type Got, type Method } from 'got';
import { existsSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import type { BatchJob } from './script.js';
import type { SiteApi, SiteJob, SlurmNode } from './site-api.js';
import { classifyHttp, classifyTransport, withRetries, SlurmApiError, type BackoffPolicy } from './errors.js';
import { slurmrestdMapping, type SlurmrestdMapping } from './slurmrestd-mapping.js';
import { DEFAULTS } from '../../config/defaults.js';
import { observeSlurmRequest } from '../../observe/metrics.js';

export interface SlurmrestdOptions {
  /** unix socket path (rest_auth/local) … */
  socketPath?: string;
  /** … or a base URL such as http://slurm-api:6820 (rest_auth/jwt). */
  baseUrl?: string;
  /** For rest_auth/jwt: X-SLURM-USER-NAME / X-SLURM-USER-TOKEN. */
  user?: string;
  token?: string;
  apiVersion?: string;
  timeoutMs?: number;
  backoff?: BackoffPolicy;
}

export class SlurmrestdClient {
  private readonly http: Got;
  readonly mapping: SlurmrestdMapping;
  private readonly base: string;

  constructor(private readonly opts: SlurmrestdOptions) {
    if (!opts.socketPath && !opts.baseUrl) throw new Error('slurmrestd needs a socketPath or a baseUrl');
    this.mapping = slurmrestdMapping(opts.apiVersion ?? DEFAULTS.slurmrestdApiVersion);
    this.base = opts.socketPath ? `http://unix:${opts.socketPath}:` : opts.baseUrl!.replace(/\/+$/, '');
    this.http = got.extend({
      enableUnixSockets: true,
      retry: { limit: 0 }, // retries are ours (errors.ts), so that every failure is classified once
      // Never followed: the token headers would go wherever a Location points (got strips only
      // `authorization` across origins); a 3xx is reported by classifyHttp instead.
      followRedirect: false,
      throwHttpErrors: false,
      timeout: { request: opts.timeoutMs ?? DEFAULTS.httpTimeoutMs },
      headers: opts.token ? { 'X-SLURM-USER-NAME': opts.user ?? '', 'X-SLURM-USER-TOKEN': opts.token } : {},
    });
  }

  private async call(method: Method, path: string, body?: unknown): Promise<unknown> {
    let res;
    const t0 = performance.now(); // metrics
    try {
      res = await this.http(`${this.base}${path}`, { method, json: body, responseType: 'text' });
    } catch (e) {
      const err = classifyTransport(method, path, e);
      observeSlurmRequest('slurmrestd', method, path, t0, undefined, err.kind === 'observation');
      throw err;
    }
    observeSlurmRequest('slurmrestd', method, path, t0, res.statusCode, res.statusCode >= 300 && classifyHttp({ method, path, status: res.statusCode }).kind === 'observation');
    let parsed: unknown;
    try {
      parsed = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      parsed = undefined;
    }
    const errors = this.mapping.errors(parsed);
    if (res.statusCode >= 300) {
      throw classifyHttp({
        method,
        path,
        status: res.statusCode,
        serverMessage: errors.map((e) => e.description || e.error).join('; ') || undefined,
        retryAfter: res.headers['retry-after'],
        slurmErrors: errors.map((e) => e.error_number ?? e.error_code ?? e.errno ?? 0),
      });
    }
    return parsed;
  }

  private get<T = unknown>(path: string): Promise<T> {
    return withRetries(() => this.call('GET', path), this.opts.backoff) as Promise<T>;
  }

  ping(): Promise<unknown> {
    return this.get(this.mapping.paths.ping);
  }

  async listJobs(): Promise<SiteJob[]> {
    return this.mapping.jobs(await this.get(this.mapping.paths.jobs));
  }

  /** The cluster's nodes with their capacity and use (placement's inventory). */
  async nodes(): Promise<SlurmNode[]> {
    return this.mapping.nodes(await this.get(this.mapping.paths.nodes));
  }

  /**
   * Whether the node table changed at or after `since` (epoch seconds, slurmctld's clock): slurmrestd
   * answers `?update_time=` with 304 when it did not, without sending the nodes. Placement's kept
   * inventory asks this before each decision instead of reading every node (activities/placement-sources.ts).
   * Only a 304 means unchanged: 22.05's v0.0.38 answers a changed node table with 500 "Unspecified
   * error" when the partitions did not change (its handler loads them with the same update_time), and
   * any other answer or failure is taken as a change too, so the caller reads. Not retried: it is one
   * cheap question, and "changed" is always a safe answer.
   */
  async nodesChangedSince(since: number): Promise<boolean> {
    const path = this.mapping.paths.nodes;
    const t0 = performance.now(); // metrics
    try {
      const res = await this.http(`${this.base}${path}?update_time=${Math.max(0, Math.floor(since))}`, { method: 'GET', responseType: 'text' });
      // 22.05's 500 above is its normal answer to this question, not a failure; a refusal (an expired
      // token, 401/403) or another status is counted as one.
      observeSlurmRequest('slurmrestd', 'GET', path, t0, res.statusCode, ![200, 304, 500].includes(res.statusCode));
      return res.statusCode !== 304;
    } catch {
      observeSlurmRequest('slurmrestd', 'GET', path, t0, undefined, true);
      return true;
    }
  }

  async getJob(jobId: string): Promise<SiteJob | undefined> {
    try {
      return this.mapping.jobs(await this.get(this.mapping.paths.job(jobId)))[0];
    } catch (e) {
      if (e instanceof SlurmApiError && e.kind === 'not-found') return undefined;
      throw e;
    }
  }

  /** Not retried here: a retried POST could create a second job (the backend looks up by name). */
  async submit(job: BatchJob): Promise<string> {
    return this.mapping.submittedJobId(await this.call('POST', this.mapping.paths.submit, this.mapping.submitBody(job)));
  }

  async cancel(jobId: string): Promise<void> {
    await withRetries(() => this.call('DELETE', this.mapping.paths.job(jobId)), this.opts.backoff);
  }

  partitions(): Promise<unknown> {
    return this.get(this.mapping.paths.partitions);
  }

  reservations(): Promise<unknown> {
    return this.get(this.mapping.paths.reservations);
  }
}

function readTailLines(path: string, lines: number, maxBytes = 64 * 1024): string | undefined {
  if (!existsSync(path)) return undefined;
  const size = statSync(path).size;
  const len = Math.min(size, maxBytes);
  const buf = Buffer.alloc(len);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, len, size - len);
  } finally {
    closeSync(fd);
  }
  return buf.toString('utf8').replace(/\n$/, '').split('\n').slice(-lines).join('\n');
}

/**
 * slurmrestd has no file API: output tails and progress are read from the filesystem the worker shares
 * with the cluster (the usual set-up where slurmrestd is the way in: the worker runs on a login node).
 */
export class SlurmrestdSiteApi implements SiteApi {
  constructor(readonly client: SlurmrestdClient) {}
  listJobs() {
    return this.client.listJobs();
  }
  getJob(id: string) {
    return this.client.getJob(id);
  }
  submit(job: BatchJob) {
    return this.client.submit(job);
  }
  cancel(id: string) {
    return this.client.cancel(id);
  }
  async tail(path: string, lines: number) {
    return readTailLines(path, lines);
  }
  async readSmall(path: string) {
    return readTailLines(path, 1000, 256 * 1024);
  }
}
