// `tandem ui`: Tandem's own read-only web view, an HTTP server on loopback (127.0.0.1 by default).
// GET only; every page is read through the SDK at request time (sdk/runs.ts for listings and history
// reports, with the client's payload codec; argo/client.ts for an Argo run's live status), so the view
// holds no state and shows what `tandem runs list/show` and `tandem argo get` would.
// A request needs `Authorization: Bearer <token>`, or `?token=<token>` once, which sets an HttpOnly
// SameSite=Strict cookie for the links that follow (browsers cannot send headers on links). Without a
// token only when asked for (`noAuth`), and only bound to loopback. A request with another site's
// Origin is refused (403), on loopback a Host that is not a loopback name too (421: DNS rebinding).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { TandemClient } from '../sdk/client.js';
import { Runs, RunError, RUN_STATUSES, type RunStatusFilter } from '../sdk/runs.js';
import type { ArgoStatus } from '../argo/lang/types.js';
import { localJobDir } from '../argo/client.js';
import { argoPage, errorPage, logsPage, runPage, runsPage, type PageContext } from './pages.js';
import { timelineSvg } from './timeline-svg.js';
import { readTail, trainingView } from './training.js';
import { liveWatches, type LiveWatch } from './live.js';
import { jobAttempts } from './attempts.js';
import type { RunReport } from '../sdk/history.js';

export interface ArgoStatusSource {
  status(name: string): Promise<ArgoStatus>;
  wait(name: string): Promise<ArgoStatus>;
}

export interface UiOptions {
  tandem: TandemClient;
  argo?: ArgoStatusSource;
  /** The workers' TANDEM_HOME when this host can read it: checkpoints, job output, Argo pod logs. */
  home?: string;
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** Required on every request (bearer, ?token= once, or its cookie) unless noAuth. */
  token?: string;
  /** No token: refused unless the view is bound to loopback. */
  noAuth?: boolean;
  temporalUi?: string;
  /** How long to wait for an Argo run's status query (a closed run needs a worker to answer it). */
  queryTimeoutMs?: number;
  /**
   * A job attempt's output where its backend keeps it (`tandem ui` passes `tandem logs`' reader:
   * local, Slurm, Kubernetes). Without it, local jobs are read from `home`.
   */
  jobOutput?: (job: JobOutputRef) => Promise<{ stdout: string; stderr?: string }>;
  /** Runs a page of the listing holds (default 50). */
  pageSize?: number;
}

/** The job attempt whose output is asked for, as the run's history names it. */
export interface JobOutputRef {
  stage: string;
  attempt: number;
  runtime: string;
  site: string;
  jobId: string;
}

/** Job output shown on a page: its last 256 KiB. */
const OUTPUT_MAX = 256 * 1024;

export interface UiServer {
  url: string;
  close(): Promise<void>;
}

const COOKIE = 'tandem_ui_token';
// No scripts, no external anything: the pages are self-contained.
const HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const digest = (s: string) => createHash('sha256').update(s).digest();
const sameToken = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms (is a worker polling the run's task queue?)`)), ms)));
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

export async function startUiServer(opts: UiOptions): Promise<UiServer> {
  const runs = new Runs(opts.tandem);
  const pageSize = opts.pageSize ?? 50;
  const ctx: PageContext = { namespace: opts.tandem.namespace, temporalUi: opts.temporalUi, pageSize };
  const jobOutput =
    opts.jobOutput ??
    (async (j: JobOutputRef) => {
      if (j.runtime !== 'local') throw new Error(`job ${j.jobId} ran on ${j.runtime}: this view reads only local job output unless started by \`tandem ui\``);
      if (!opts.home) throw new Error("the workers' home is not readable here: pass --home");
      const dir = join(opts.home, 'jobs', j.jobId);
      return { stdout: readTail(join(dir, 'stdout'), OUTPUT_MAX), stderr: readTail(join(dir, 'stderr'), OUTPUT_MAX) };
    });
  const host = opts.host ?? '127.0.0.1';
  const queryTimeoutMs = opts.queryTimeoutMs ?? 5000;

  const send = (res: ServerResponse, code: number, body: string, type = 'text/html; charset=utf-8', extra: Record<string, string> = {}) => {
    res.writeHead(code, { ...HEADERS, 'content-type': type, ...extra });
    res.end(body);
  };

  const authorised = (req: IncomingMessage, url: URL): { ok: boolean; setCookie?: string } => {
    if (!opts.token) return { ok: true }; // noAuth, on loopback (checked at start)
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer && sameToken(bearer, opts.token)) return { ok: true };
    const cookie = (req.headers.cookie ?? '').split(/;\s*/).find((c) => c.startsWith(`${COOKIE}=`))?.slice(COOKIE.length + 1);
    if (cookie && sameToken(decodeOr(cookie), opts.token)) return { ok: true };
    const q = url.searchParams.get('token');
    if (q && sameToken(q, opts.token)) return { ok: true, setCookie: `${COOKIE}=${encodeURIComponent(q)}; HttpOnly; SameSite=Strict; Path=/` };
    return { ok: false };
  };

  async function argoStatus(id: string): Promise<{ st?: ArgoStatus; error?: string }> {
    if (!opts.argo) return { error: 'this view was started without an Argo client' };
    try {
      return { st: await withTimeout(opts.argo.status(id), queryTimeoutMs, 'the argo.status query') };
    } catch (e) {
      // A closed run's final status is its result, readable without a worker.
      const final = await withTimeout(opts.argo.wait(id), queryTimeoutMs, 'the run result').catch(() => undefined);
      return final ? { st: final } : { error: (e as Error).message };
    }
  }

  function podLogs(st: ArgoStatus | undefined): Map<string, string> {
    const logs = new Map<string, string>();
    if (!opts.home || !st) return logs;
    for (const n of Object.values(st.nodes)) {
      if (n.type !== 'Pod' || !n.jobName || !/^[A-Za-z0-9._-]+$/.test(n.jobName)) continue;
      const text = readTail(join(localJobDir(opts.home, n.jobName), 'stdout'), 16 * 1024);
      if (text) logs.set(n.id, text);
    }
    return logs;
  }

  /** A running run's watches as their last heartbeats tell them; without them the Gantt draws the watch whole. */
  const watchesOf = (report: RunReport & { runId: string }) => withTimeout(liveWatches(opts.tandem, report), queryTimeoutMs, 'the pending activities').catch(() => new Map<number, LiveWatch>());
  const liveOf = async (report: RunReport & { runId: string }) => {
    const out = new Map<number, NonNullable<LiveWatch['observed']>>();
    for (const [id, w] of await watchesOf(report)) if (w.observed) out.set(id, w.observed);
    return out;
  };

  // Bound to loopback, the view answers only loopback names: a page on another site whose name was
  // rebound to 127.0.0.1 (DNS rebinding) sends its own name as Host and is refused.
  const loopback = ['127.0.0.1', '::1', 'localhost'].includes(host);
  if (!opts.token && !opts.noAuth) throw new Error('tandem ui needs a token (--token-file, or the one it makes up); --no-auth only on loopback');
  if (!opts.token && !loopback) throw new Error(`tandem ui without a token may listen on loopback only, not ${host}`);
  const hostOk = (h: string | undefined): boolean => {
    if (!loopback) return true;
    const name = (h ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1').toLowerCase();
    return name === 'localhost' || name === '127.0.0.1' || name === '::1';
  };

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostOk(req.headers.host)) return send(res, 421, errorPage(421, `this view answers only to its loopback address, not Host ${JSON.stringify(req.headers.host ?? '')}`));
    // Browsers send Origin on cross-origin fetches (and on form posts): only the view's own pages may.
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`) return send(res, 403, errorPage(403, `requests from origin ${origin} are refused`));
    const url = new URL(req.url ?? '/', 'http://ui.invalid');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, errorPage(405, 'this view is read-only'), undefined, { allow: 'GET, HEAD' });
    if (url.pathname === '/healthz') return send(res, 200, 'ok\n', 'text/plain; charset=utf-8');
    const auth = authorised(req, url);
    if (!auth.ok) return send(res, 401, errorPage(401, 'a token is required: Authorization: Bearer <token>, or ?token=<token>'), undefined, { 'www-authenticate': 'Bearer' });
    const cookie: Record<string, string> = auth.setCookie ? { 'set-cookie': auth.setCookie } : {};
    let parts: string[];
    try {
      parts = url.pathname.split('/').filter(Boolean).map((p) => decodeURIComponent(p));
    } catch {
      return send(res, 400, errorPage(400, `the path ${url.pathname} has a malformed %-encoding`), undefined, cookie);
    }
    if (parts.length === 0) {
      const s = url.searchParams.get('status') || undefined;
      const tenant = url.searchParams.get('tenant') || undefined;
      const pipeline = url.searchParams.get('pipeline') || undefined;
      const pageToken = url.searchParams.get('page') || undefined;
      if (s !== undefined && !Object.hasOwn(RUN_STATUSES, s)) return send(res, 400, errorPage(400, `status must be one of ${Object.keys(RUN_STATUSES).join(', ')}`), undefined, cookie);
      const filter = { status: s as RunStatusFilter | undefined, tenant, pipeline };
      let listed;
      try {
        listed = await runs.listPage({ ...filter, pageSize, pageToken });
      } catch (e) {
        if (pageToken && e instanceof RunError) return send(res, 400, errorPage(400, e.message), undefined, cookie);
        throw e;
      }
      // A completed Argo run shows Argo's phase (as `tandem argo list` does): its result says whether the
      // Argo workflow Succeeded, Failed or Errored. Read from the result, which needs no worker.
      const argo = opts.argo;
      if (argo) {
        await Promise.all(
          listed.runs.map(async (r) => {
            if (r.type !== 'argoWorkflow' || !/^completed$/i.test(r.status)) return;
            const final = await withTimeout(argo.wait(r.id), queryTimeoutMs, 'the run result').catch(() => undefined);
            if (final?.phase) r.status = final.phase;
          }),
        );
      }
      return send(res, 200, runsPage(listed.runs, { ...filter, page: pageToken }, ctx, listed.nextPageToken), undefined, cookie);
    }
    if (parts[0] === 'runs' && parts.length === 5 && parts[2] === 'logs') {
      const attempt = Number(parts[4]);
      if (!/^[1-9]\d{0,5}$/.test(parts[4]!)) return send(res, 400, errorPage(400, `the attempt must be a whole number from 1, not ${JSON.stringify(parts[4])}`), undefined, cookie);
      const report = await runs.show(parts[1]!);
      const a = jobAttempts(report).find((j) => j.stage === parts[3] && j.attempt === attempt);
      if (!a) return send(res, 404, errorPage(404, `run ${report.workflowId} has no job for ${parts[3]} attempt ${attempt}`), undefined, cookie);
      const running = report.status === 'Running' && !a.final;
      const out = await jobOutput({ stage: a.stage, attempt: a.attempt, runtime: a.runtime, site: a.site, jobId: a.jobId }).then(
        (o) => ({ stdout: o.stdout.slice(-OUTPUT_MAX), stderr: o.stderr?.slice(-OUTPUT_MAX), truncated: o.stdout.length > OUTPUT_MAX }),
        (e: unknown) => ({ error: e instanceof Error ? e.message : String(e) }),
      );
      return send(res, 200, logsPage(report, a, out, running), undefined, cookie);
    }
    if (parts[0] === 'runs' && parts.length === 2) {
      const report = await runs.show(parts[1]!);
      if (report.type === 'argoWorkflow') {
        const { st, error } = await argoStatus(report.workflowId);
        return send(res, 200, argoPage(report, st, error, podLogs(st), ctx), undefined, cookie);
      }
      const [training, watches] = await Promise.all([trainingView(report, opts.home), watchesOf(report)]);
      return send(res, 200, runPage(report, training, ctx, watches), undefined, cookie);
    }
    if (parts[0] === 'runs' && parts.length === 3 && parts[2] === 'timeline.svg') {
      const report = await runs.show(parts[1]!);
      return send(res, 200, timelineSvg(report, new Date(), await liveOf(report)), 'image/svg+xml; charset=utf-8', cookie);
    }
    return send(res, 404, errorPage(404, `no page ${url.pathname}`), undefined, cookie);
  }

  function decodeOr(v: string): string {
    try {
      return decodeURIComponent(v);
    } catch {
      return v; // a malformed cookie is just not the token
    }
  }

  const server = createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      // A message, never a stack trace; RunError is the SDK's "no such run" and friends.
      const code = e instanceof RunError ? 404 : 500;
      if (!res.headersSent) send(res, code, errorPage(code, e instanceof Error ? e.message : String(e)));
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
