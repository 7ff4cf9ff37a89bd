// The one module that owns the Kubernetes connection: KubeConfig, the typed API clients, the watch
// client, and the mapping of API errors onto Tandem's failure classes (ARCHITECTURE.md, "How a stage runs": "could not
// observe" is never a job failure).
import { ApiException, AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';

export interface KubeConnectionOptions {
  /** A kubeconfig file; default: $KUBECONFIG, then ~/.kube/config, then in-cluster. */
  kubeconfigPath?: string;
  /** An already-built KubeConfig (tests point one at the fake API server). */
  kubeConfig?: KubeConfig;
  /** Namespace for objects whose stage names none; default: the context's namespace, else "default". */
  namespace?: string;
}

export class KubeClients {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly batch: BatchV1Api;
  readonly watcher: Watch;
  readonly namespace: string;

  constructor(opts: KubeConnectionOptions = {}) {
    const kc = opts.kubeConfig ?? new KubeConfig();
    if (!opts.kubeConfig) {
      if (opts.kubeconfigPath) kc.loadFromFile(opts.kubeconfigPath);
      else kc.loadFromDefault();
    }
    if (!kc.getCurrentCluster()) throw new Error('the kubeconfig has no current cluster: set KUBECONFIG or a current-context');
    this.kc = kc;
    this.core = kc.makeApiClient(CoreV1Api);
    this.apps = kc.makeApiClient(AppsV1Api);
    this.batch = kc.makeApiClient(BatchV1Api);
    this.watcher = new Watch(kc);
    this.namespace = opts.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  }

  /** The API server's URL, for messages. */
  get server(): string {
    return this.kc.getCurrentCluster()!.server;
  }
}

/** One field the API server refused (metav1.StatusCause), e.g. `spec.template.labels`. */
export interface KubeCause {
  field?: string;
  message: string;
}

/** A metav1.Status-shaped error, whatever the client threw. */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly retryAfterSeconds?: number,
    /** For 422 Invalid: each refused field, as the API server named it. */
    readonly causes: KubeCause[] = [],
  ) {
    super(message);
    this.name = 'KubeApiError';
  }

  /** 401/408/424/429/5xx and transport errors: the cluster could not be observed, try again. */
  get transient(): boolean {
    return this.code === 0 || this.code === 401 || this.code === 408 || this.code === 424 || this.code === 429 || this.code >= 500;
  }
}

interface StatusBody {
  kind?: string;
  reason?: string;
  message?: string;
  details?: { retryAfterSeconds?: number; causes?: { field?: string; message?: string; reason?: string }[] };
}

function statusBody(body: unknown): StatusBody | undefined {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as StatusBody;
    } catch {
      return { message: body };
    }
  }
  return body && typeof body === 'object' ? (body as StatusBody) : undefined;
}

/** Maps anything the client throws to a KubeApiError; `what` says which call, e.g. "create Job ns/x". */
export function kubeError(e: unknown, what: string): KubeApiError {
  if (e instanceof KubeApiError) return e;
  if (e instanceof ApiException) {
    const s = statusBody(e.body);
    // The same refusal can come once per label map the value was copied into: keep each once.
    const causes: KubeCause[] = [];
    const seen = new Set<string>();
    for (const c of s?.details?.causes ?? []) {
      const cause = { field: c.field || undefined, message: c.message ?? c.reason ?? '' };
      const key = `${cause.field} ${cause.message}`;
      if (!seen.has(key)) causes.push(cause);
      seen.add(key);
    }
    // A 422's message repeats every cause after `Kind "name" is invalid:`; the causes alone name the
    // fields, so they replace it. Never include the ApiException's own message: it embeds every
    // response header.
    const detail = causes.length ? `: ${causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join('; ')}` : ` ${s?.message ?? ''}`;
    const msg = `${what}: ${[e.code, s?.reason].filter(Boolean).join(' ')}${detail}`.replace(/\s+/g, ' ').trim();
    const retryAfter = s?.details?.retryAfterSeconds ?? (Number(e.headers?.['retry-after']) || undefined);
    return new KubeApiError(e.code, s?.reason ?? 'Unknown', msg, retryAfter, causes);
  }
  const err = e as Error & { statusCode?: number; cause?: Error };
  if (typeof err?.statusCode === 'number') return new KubeApiError(err.statusCode, 'Unknown', `${what}: ${err.statusCode} ${err.message}`);
  const detail = err?.cause instanceof Error ? err.cause.message : (err?.message ?? String(e));
  return new KubeApiError(0, 'Unreachable', `${what}: cannot reach the Kubernetes API server (${detail})`);
}

export const isNotFound = (e: unknown) => e instanceof KubeApiError && e.code === 404;
export const isConflict = (e: unknown) => e instanceof KubeApiError && e.code === 409;

/** Runs one API call and maps its error; `undefined` for 404 when `allowMissing`. */
export async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw kubeError(e, what);
  }
}

export async function callOrMissing<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (e) {
    const err = kubeError(e, what);
    if (err.code === 404) return undefined;
    throw err;
  }
}
