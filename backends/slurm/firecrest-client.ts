// The FirecREST v2 client, on got. Every call goes through one request path: bearer token from the
// client-credentials source (a 401 refreshes it once and retries), errors classified by errors.ts,
// idempotent calls retried with backoff honouring Retry-After. Submit is never retried here.
import got, { type Got, type Method, type Response } from 'got';
import type * as T from './firecrest-types.js';
import { ClientCredentialsTokenSource, type ClientCredentials, type TokenSourceOptions } from './auth.js';
import { classifyHttp, classifyTransport, withRetries, SlurmApiError, type BackoffPolicy } from './errors.js';
import { DEFAULTS } from '../../config/defaults.js';
import { observeSlurmRequest } from '../../observe/metrics.js';

export interface FirecrestOptions {
  /** e.g. https://api.cscs.ch/hpc/firecrest/v2 */
  baseUrl: string;
  credentials: ClientCredentials;
  token?: TokenSourceOptions;
  timeoutMs?: number;
  backoff?: BackoffPolicy;
}

type Query = Record<string, string | number | boolean | undefined>;

export class FirecrestClient {
  private readonly http: Got;
  readonly tokens: ClientCredentialsTokenSource;
  /** Requests sent (the benchmark reports them per job-hour). */
  requests = 0;

  constructor(private readonly opts: FirecrestOptions) {
    this.tokens = new ClientCredentialsTokenSource(opts.credentials, opts.token);
    this.http = got.extend({
      prefixUrl: opts.baseUrl.replace(/\/+$/, ''),
      retry: { limit: 0 },
      // Never followed: every request carries the bearer token; a 3xx is reported by classifyHttp.
      followRedirect: false,
      throwHttpErrors: false,
      timeout: { request: opts.timeoutMs ?? DEFAULTS.httpTimeoutMs },
      responseType: 'text',
    });
  }

  private async once(method: Method, path: string, query: Query | undefined, body: { json?: unknown; form?: FormData } | undefined, raw: boolean): Promise<unknown> {
    const searchParams = query ? Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as Record<string, string | number | boolean> : undefined;
    for (let authAttempt = 1; ; authAttempt++) {
      const token = await this.tokens.token();
      let res: Response<string | Buffer>;
      const t0 = performance.now(); // metrics
      try {
        this.requests++;
        res = await this.http(path.replace(/^\//, ''), {
          method,
          searchParams,
          json: body?.json,
          body: body?.form,
          headers: { authorization: `Bearer ${token}` },
          responseType: raw ? 'buffer' : 'text',
        }) as Response<string | Buffer>;
      } catch (e) {
        const err = classifyTransport(method, path, e);
        observeSlurmRequest('firecrest', method, path, t0, undefined, err.kind === 'observation');
        throw err;
      }
      observeSlurmRequest('firecrest', method, path, t0, res.statusCode, res.statusCode >= 300 && classifyHttp({ method, path, status: res.statusCode }).kind === 'observation');
      if (res.statusCode === 401 && authAttempt === 1) {
        this.tokens.invalidate(token); // expired or revoked under us: one refresh, one retry
        continue;
      }
      if (res.statusCode >= 300) {
        let message: string | undefined;
        try {
          message = (JSON.parse(res.body.toString()) as T.ApiResponseError).message;
        } catch {
          message = undefined;
        }
        throw classifyHttp({ method, path, status: res.statusCode, serverMessage: message, retryAfter: res.headers['retry-after'] });
      }
      if (raw) return res.body;
      const text = res.body as string;
      return text ? JSON.parse(text) : undefined;
    }
  }

  private get<R>(path: string, query?: Query): Promise<R> {
    return withRetries(() => this.once('GET', path, query, undefined, false), this.opts.backoff) as Promise<R>;
  }

  // ---- status
  systems() {
    return this.get<T.GetSystemsResponse>('/status/systems');
  }
  nodes(system: string) {
    return this.get<T.GetNodesResponse>(`/status/${enc(system)}/nodes`);
  }
  partitions(system: string) {
    return this.get<T.GetPartitionsResponse>(`/status/${enc(system)}/partitions`);
  }
  reservations(system: string) {
    return this.get<T.GetReservationsResponse>(`/status/${enc(system)}/reservations`);
  }
  userinfo(system: string) {
    return this.get<T.UserInfoResponse>(`/status/${enc(system)}/userinfo`);
  }

  // ---- compute
  /** Not retried: the caller decides (a lost answer may still have created the job). */
  async submitJob(system: string, job: T.JobDescriptionModel): Promise<string> {
    const res = (await this.once('POST', `/compute/${enc(system)}/jobs`, undefined, { json: { job } satisfies T.PostJobSubmitRequest }, false)) as T.PostJobSubmissionResponse;
    if (!res?.jobId) throw new SlurmApiError('observation', `POST /compute/${system}/jobs → 201 without a jobId`);
    return String(res.jobId);
  }
  /** The calling user's jobs. FirecREST v2 has no name filter: `jobsByName` filters this list. */
  async listJobs(system: string, opts: { allusers?: boolean; account?: string } = {}): Promise<T.JobModel[]> {
    return (await this.get<T.GetJobResponse>(`/compute/${enc(system)}/jobs`, { allusers: opts.allusers, account: opts.account })).jobs ?? [];
  }
  async jobsByName(system: string, name: string): Promise<T.JobModel[]> {
    return (await this.listJobs(system)).filter((j) => j.name === name);
  }
  async getJob(system: string, jobId: string): Promise<T.JobModel | undefined> {
    try {
      return (await this.get<T.GetJobResponse>(`/compute/${enc(system)}/jobs/${enc(jobId)}`)).jobs?.[0];
    } catch (e) {
      if (e instanceof SlurmApiError && e.kind === 'not-found') return undefined;
      throw e;
    }
  }
  async jobMetadata(system: string, jobId: string): Promise<T.JobMetadataModel | undefined> {
    return (await this.get<T.GetJobMetadataResponse>(`/compute/${enc(system)}/jobs/${enc(jobId)}/metadata`)).jobs?.[0];
  }
  async cancelJob(system: string, jobId: string): Promise<void> {
    await withRetries(() => this.once('DELETE', `/compute/${enc(system)}/jobs/${enc(jobId)}`, undefined, undefined, false), this.opts.backoff);
  }

  // ---- filesystem
  async ls(system: string, path: string, opts: { showHidden?: boolean; recursive?: boolean } = {}): Promise<T.File[]> {
    return (await this.get<T.GetDirectoryLsResponse>(`/filesystem/${enc(system)}/ops/ls`, { path, ...opts })).output ?? [];
  }
  async stat(system: string, path: string): Promise<T.FileStat | undefined> {
    return (await this.get<T.GetFileStatResponse>(`/filesystem/${enc(system)}/ops/stat`, { path })).output ?? undefined;
  }
  async checksum(system: string, path: string): Promise<T.FileChecksum | undefined> {
    return (await this.get<T.GetFileChecksumResponse>(`/filesystem/${enc(system)}/ops/checksum`, { path })).output ?? undefined;
  }
  async head(system: string, path: string, lines = 10): Promise<string> {
    return (await this.get<T.GetFileHeadResponse>(`/filesystem/${enc(system)}/ops/head`, { path, lines })).output?.content ?? '';
  }
  async tail(system: string, path: string, lines = 10): Promise<string> {
    return (await this.get<T.GetFileTailResponse>(`/filesystem/${enc(system)}/ops/tail`, { path, lines })).output?.content ?? '';
  }
  async view(system: string, path: string, size?: number): Promise<string> {
    return (await this.get<{ output?: string | null }>(`/filesystem/${enc(system)}/ops/view`, { path, size })).output ?? '';
  }
  async mkdir(system: string, path: string, parent = true): Promise<T.File | undefined> {
    const body: T.PostMakeDirRequest = { sourcePath: path, parent };
    const res = (await withRetries(() => this.once('POST', `/filesystem/${enc(system)}/ops/mkdir`, undefined, { json: body }, false), this.opts.backoff)) as T.PostMkdirResponse;
    return res?.output ?? undefined;
  }
  /** Small files only (FirecREST's max_ops_file_size); larger ones go through /transfer. */
  async upload(system: string, path: string, content: Buffer | string, fileName = 'file'): Promise<void> {
    await withRetries(() => {
      const form = new FormData();
      form.append('file', new Blob([typeof content === 'string' ? Buffer.from(content) : content]), fileName);
      return this.once('POST', `/filesystem/${enc(system)}/ops/upload`, { path }, { form }, false);
    }, this.opts.backoff);
  }
  async download(system: string, path: string): Promise<Buffer> {
    return (await withRetries(() => this.once('GET', `/filesystem/${enc(system)}/ops/download`, { path }, undefined, true), this.opts.backoff)) as Buffer;
  }
}

const enc = encodeURIComponent;
