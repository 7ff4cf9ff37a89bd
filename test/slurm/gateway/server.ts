// A FirecREST v2-compatible gateway for tests and benchmarks. Every request and response is checked
// against the official OpenAPI document (violations are collected; tests assert there are none), each
// API call needs a valid, not-about-to-expire JWT from the built-in token endpoint, and the work is done
// for real by an executor (the local Slurm, the host filesystem). Faults are injected by configuration.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Contract, type Matched } from './openapi.js';
import { TokenIssuer, type TokenIssuerOptions } from './tokens.js';
import { HttpError, type SystemExecutor } from './executor.js';
import * as fs from './fs-ops.js';

export type FaultKind = '500' | '502' | '503' | '429' | '408' | 'drop' | 'slow';

export interface FaultConfig {
  /** Probability that an API request gets a fault. */
  rate: number;
  kinds: FaultKind[];
  retryAfterS?: number;
  slowMs?: number;
  /** Deterministic pseudo-random sequence. */
  seed?: number;
}

export interface GatewayOptions {
  systems: SystemExecutor[];
  tokens: TokenIssuerOptions;
  faults?: FaultConfig;
}

export interface GatewayStats {
  requests: number;
  byOperation: Record<string, number>;
  faults: Record<string, number>;
  unauthorized: number;
  tokenRequests: number;
}

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function multipartFile(contentType: string, body: Buffer): { name?: string; fileName?: string; data: Buffer } | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!boundary) return undefined;
  const sep = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  let pos = body.indexOf(sep);
  while (pos >= 0) {
    const next = body.indexOf(sep, pos + sep.length);
    if (next < 0) break;
    const part = body.subarray(pos + sep.length + 2, next - 2);
    const headEnd = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, headEnd).toString();
    const name = /name="([^"]*)"/.exec(head)?.[1];
    if (name === 'file') return { name, fileName: /filename="([^"]*)"/.exec(head)?.[1], data: part.subarray(headEnd + 4) };
    pos = next;
  }
  return undefined;
}

export class FirecrestGateway {
  readonly contract = new Contract();
  readonly issuer: TokenIssuer;
  readonly violations: string[] = [];
  readonly stats: GatewayStats = { requests: 0, byOperation: {}, faults: {}, unauthorized: 0, tokenRequests: 0 };
  faults: FaultConfig | undefined;
  private random: () => number;
  private server: Server | undefined;
  private readonly systems: Map<string, SystemExecutor>;

  constructor(opts: GatewayOptions) {
    this.issuer = new TokenIssuer(opts.tokens);
    this.faults = opts.faults;
    this.random = rng(opts.faults?.seed ?? 42);
    this.systems = new Map(opts.systems.map((s) => [s.name, s]));
  }

  setFaults(f: FaultConfig | undefined): void {
    this.faults = f;
    this.random = rng(f?.seed ?? 42);
  }

  async listen(port = 0): Promise<{ baseUrl: string; tokenUrl: string }> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((e) => {
        this.violations.push(`gateway crashed on ${req.method} ${req.url}: ${(e as Error).stack}`);
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    this.server.keepAliveTimeout = 5000;
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    const { port: p } = this.server.address() as AddressInfo;
    return { baseUrl: `http://127.0.0.1:${p}`, tokenUrl: `http://127.0.0.1:${p}/auth/token` };
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const body = await readBody(req);
    const method = req.method ?? 'GET';
    if (url.pathname === '/auth/token' && method === 'POST') {
      this.stats.tokenRequests++;
      const [status, json] = this.issuer.grant(req.headers.authorization, new URLSearchParams(body.toString()));
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(json));
      return;
    }
    this.stats.requests++;
    const m = this.contract.match(method, url.pathname);
    if (!m) {
      this.violations.push(`${method} ${url.pathname}: no such operation in the FirecREST v2 spec`);
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not Found' }));
      return;
    }
    const op = m.route.operation.operationId;
    this.stats.byOperation[op] = (this.stats.byOperation[op] ?? 0) + 1;
    const params = this.contract.params(m, url.searchParams);
    const contentType = req.headers['content-type'] ?? '';
    let json: unknown;
    if (body.length && contentType.startsWith('application/json')) {
      try {
        json = JSON.parse(body.toString());
      } catch {
        params.errors.push('request body is not JSON');
      }
    }
    const bodyErrors = m.route.operation.requestBody || body.length ? this.contract.body(m, contentType, body.length ? (json ?? {}) : undefined) : [];
    const requestErrors = [...params.errors, ...bodyErrors];
    if (requestErrors.length) {
      this.violations.push(`${method} ${url.pathname}: request violates the spec: ${requestErrors.join('; ')}`);
      return this.send(res, m, 422, { message: `request does not match the API: ${requestErrors.join('; ')}`, errorType: 'error' });
    }

    // Fault injection happens after validation, so that a malformed request is never hidden by a fault.
    const fault = this.pickFault();
    if (fault) {
      this.stats.faults[fault] = (this.stats.faults[fault] ?? 0) + 1;
      if (fault === 'slow') await new Promise((r) => setTimeout(r, this.faults?.slowMs ?? 1500));
      else if (fault === 'drop') {
        // Half the drops happen after the work is done (the answer is lost): the client cannot tell which.
        if (this.random() < 0.5) await this.execute(m, params.values, json, contentType, body, req).catch(() => undefined);
        req.socket.destroy();
        return;
      } else {
        const headers: Record<string, string> = fault === '429' || fault === '503' ? { 'retry-after': String(this.faults?.retryAfterS ?? 1) } : {};
        return this.send(res, m, Number(fault), { message: `injected fault ${fault}`, errorType: 'error' }, headers);
      }
    }

    if (m.route.operation.security) {
      const auth = this.issuer.verify(req.headers.authorization);
      if ('error' in auth) {
        this.stats.unauthorized++;
        return this.send(res, m, 401, { message: `unauthorized: ${auth.error}`, errorType: 'error' });
      }
    }
    try {
      const out = await this.execute(m, params.values, json, contentType, body, req);
      if (out.raw) {
        this.check(m, out.status, 'application/octet-stream', out.raw);
        res.writeHead(out.status, { 'content-type': 'application/octet-stream' }).end(out.raw);
      } else this.send(res, m, out.status, out.json);
    } catch (e) {
      if (e instanceof HttpError) return this.send(res, m, e.status, { message: e.message, errorType: 'error' });
      throw e;
    }
  }

  private pickFault(): FaultKind | undefined {
    const f = this.faults;
    if (!f || f.rate <= 0 || f.kinds.length === 0) return undefined;
    if (this.random() >= f.rate) return undefined;
    return f.kinds[Math.floor(this.random() * f.kinds.length)];
  }

  private check(m: Matched, status: number, contentType: string | undefined, payload: Buffer): void {
    const errors = this.contract.response(m, status, contentType, payload);
    if (errors.length) this.violations.push(`${m.route.method} ${m.route.template} → ${status}: response violates the spec: ${errors.join('; ')}`);
  }

  private send(res: ServerResponse, m: Matched, status: number, json: unknown, headers: Record<string, string> = {}): void {
    const payload = json === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(json));
    const contentType = json === undefined ? undefined : 'application/json';
    this.check(m, status, contentType, payload);
    res.writeHead(status, { ...(contentType ? { 'content-type': contentType } : {}), ...headers }).end(payload);
  }

  private system(name: unknown): SystemExecutor {
    const s = this.systems.get(String(name));
    if (!s) throw new HttpError(404, `system ${String(name)} not found`);
    return s;
  }

  private async execute(m: Matched, p: Record<string, unknown>, json: unknown, contentType: string, body: Buffer, req: IncomingMessage): Promise<{ status: number; json?: unknown; raw?: Buffer }> {
    const op = `${m.route.method} ${m.route.template}`;
    const user = (() => {
      const v = this.issuer.verify(req.headers.authorization);
      return 'user' in v ? v.user : 'anonymous';
    })();
    const path = p.path as string;
    switch (op) {
      case 'GET /status/liveness/':
        return { status: 200, json: { healthcheckRuns: {}, lastUpdate: null } };
      case 'GET /status/systems':
        return { status: 200, json: { systems: [...this.systems.keys()].map(systemModel) } };
      case 'GET /status/{system_name}/nodes':
        return { status: 200, json: { nodes: await this.system(p.system_name).nodes() } };
      case 'GET /status/{system_name}/partitions':
        return { status: 200, json: { partitions: await this.system(p.system_name).partitions() } };
      case 'GET /status/{system_name}/reservations':
        return { status: 200, json: { reservations: await this.system(p.system_name).reservations() } };
      case 'GET /status/{system_name}/userinfo':
        return { status: 200, json: await this.system(p.system_name).userinfo(user) };
      case 'GET /compute/{system_name}/jobs':
        return { status: 200, json: { jobs: await this.system(p.system_name).listJobs(user) } };
      case 'POST /compute/{system_name}/jobs': {
        const job = (json as { job: Parameters<SystemExecutor['submit']>[0] }).job;
        if (!job.script && !job.scriptPath) throw new HttpError(400, 'give either script or scriptPath');
        return { status: 201, json: { jobId: await this.system(p.system_name).submit(job) } };
      }
      case 'GET /compute/{system_name}/jobs/{job_id}': {
        const j = await this.system(p.system_name).getJob(String(p.job_id));
        if (!j) throw new HttpError(404, `job ${String(p.job_id)} not found`);
        return { status: 200, json: { jobs: [j] } };
      }
      case 'GET /compute/{system_name}/jobs/{job_id}/metadata': {
        const j = await this.system(p.system_name).metadata(String(p.job_id));
        if (!j) throw new HttpError(404, `job ${String(p.job_id)} not found`);
        return { status: 200, json: { jobs: [j] } };
      }
      case 'DELETE /compute/{system_name}/jobs/{job_id}':
        if (!(await this.system(p.system_name).cancel(String(p.job_id)))) throw new HttpError(404, `job ${String(p.job_id)} not found`);
        return { status: 204 };
      case 'GET /filesystem/{system_name}/ops/ls':
        this.system(p.system_name);
        return { status: 200, json: { output: fs.ls(path, p.showHidden === true) } };
      case 'GET /filesystem/{system_name}/ops/stat':
        this.system(p.system_name);
        return { status: 200, json: { output: fs.stat(path, p.dereference === true) } };
      case 'GET /filesystem/{system_name}/ops/checksum':
        this.system(p.system_name);
        return { status: 200, json: { output: fs.checksum(path) } };
      case 'GET /filesystem/{system_name}/ops/head':
      case 'GET /filesystem/{system_name}/ops/tail': {
        this.system(p.system_name);
        const which = op.endsWith('head') ? 'head' : 'tail';
        const skip = (which === 'head' ? p.skipTrailing : p.skipHeading) === true;
        return { status: 200, json: { output: fs.part(path, which, { lines: p.lines as number | undefined, bytes: p.bytes as number | undefined, skip }) } };
      }
      case 'GET /filesystem/{system_name}/ops/view':
        this.system(p.system_name);
        return { status: 200, json: { output: fs.view(path, (p.size as number | undefined) ?? 5_242_880, (p.offset as number | undefined) ?? 0) } };
      case 'POST /filesystem/{system_name}/ops/mkdir': {
        this.system(p.system_name);
        const b = json as { sourcePath: string | null; parent?: boolean };
        if (!b.sourcePath) throw new HttpError(400, 'sourcePath is required');
        return { status: 201, json: { output: fs.mkdir(b.sourcePath, b.parent ?? false) } };
      }
      case 'POST /filesystem/{system_name}/ops/upload': {
        this.system(p.system_name);
        const file = multipartFile(contentType, body);
        if (!file) throw new HttpError(400, 'multipart body has no "file" part');
        fs.upload(path, file.fileName, file.data);
        return { status: 204 };
      }
      case 'GET /filesystem/{system_name}/ops/download':
        this.system(p.system_name);
        return { status: 200, raw: fs.download(path) };
      default:
        throw new HttpError(501, `${op} is not served by the test gateway`);
    }
  }
}

function systemModel(name: string) {
  return {
    name,
    ssh: { host: '127.0.0.1', port: 22 },
    scheduler: { type: 'slurm', version: '22.05.8', apiVersion: '0.0.38', connectionMode: 'ssh' },
    probing: { intervalCheck: 120 },
    servicesHealth: [{ serviceType: 'scheduler', healthy: true, message: null, lastChecked: new Date().toISOString(), latency: 0.01 }],
    fileSystems: [{ path: '/tmp', dataType: 'scratch', defaultWorkDir: true }],
  };
}
