// A fake Kubernetes API server that speaks the real wire protocol to the real @kubernetes/client-node:
// REST paths for the resources Tandem uses, JSON bodies, metav1.Status errors (401/404/409/422),
// bearer-token auth, resourceVersion and generation, status subresources, pod logs, and watch
// streams (newline-delimited JSON events, BOOKMARKs, 410 Gone for compacted versions,
// timeoutSeconds). Controllers that make objects move live in controllers.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { ApiError, Store, type KObject, type StoreEvent } from './store.js';
import { validate } from './validation.js';

export interface ResourceDef {
  group: string;
  version: string;
  plural: string;
  kind: string;
  /** Subresources served besides the object itself. */
  status: boolean;
  /** Cluster-scoped resources (Nodes) live at /api/v1/<plural> with no namespace. */
  clusterScoped?: boolean;
}

export const RESOURCES: ResourceDef[] = [
  { group: '', version: 'v1', plural: 'pods', kind: 'Pod', status: true },
  { group: '', version: 'v1', plural: 'services', kind: 'Service', status: true },
  { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', status: true },
  { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', status: true },
  { group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', status: true },
  { group: '', version: 'v1', plural: 'nodes', kind: 'Node', status: true, clusterScoped: true },
  { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', status: false },
];

export interface RequestRecord {
  method: string;
  path: string;
  query: string;
  status: number;
}

interface Fault {
  method: string;
  path: RegExp;
  code: number;
  remaining: number;
  retryAfterSeconds?: number;
}

type Requirement = { key: string; op: '=' | '!=' | 'exists' | '!exists' | 'in' | 'notin'; values: string[] };

export function parseLabelSelector(sel: string | null): Requirement[] {
  if (!sel) return [];
  const parts = sel.match(/([^,(]+(\([^)]*\))?)/g) ?? [];
  return parts.map((raw) => {
    const p = raw.trim();
    let m = /^(\S+?)\s+(in|notin)\s+\(([^)]*)\)$/.exec(p);
    if (m) return { key: m[1]!, op: m[2] as 'in' | 'notin', values: m[3]!.split(',').map((v) => v.trim()) };
    m = /^(\S+?)\s*(==|=|!=)\s*(\S*)$/.exec(p);
    if (m) return { key: m[1]!, op: m[2] === '!=' ? '!=' : '=', values: [m[3]!] };
    if (p.startsWith('!')) return { key: p.slice(1), op: '!exists', values: [] };
    if (/^[A-Za-z0-9./_-]+$/.test(p)) return { key: p, op: 'exists', values: [] };
    throw new ApiError(400, 'BadRequest', `unable to parse requirement: ${p}`);
  });
}

export function matchesLabels(labels: Record<string, string> | undefined, reqs: Requirement[]): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.op) {
      case '=': return has && l[r.key] === r.values[0];
      case '!=': return !has || l[r.key] !== r.values[0];
      case 'exists': return has;
      case '!exists': return !has;
      case 'in': return has && r.values.includes(l[r.key]!);
      case 'notin': return !has || !r.values.includes(l[r.key]!);
    }
  });
}

function fieldMatcher(sel: string | null): (o: KObject) => boolean {
  if (!sel) return () => true;
  const reqs = sel.split(',').map((p) => {
    const m = /^([a-zA-Z.]+)(==|=|!=)(.*)$/.exec(p.trim());
    if (!m || !['metadata.name', 'metadata.namespace', 'status.phase'].includes(m[1]!)) throw new ApiError(400, 'BadRequest', `"${p}" is not a known field selector: only "metadata.name", "metadata.namespace", "status.phase"`);
    return { field: m[1]!, neg: m[2] === '!=', value: m[3]! };
  });
  return (o) =>
    reqs.every((r) => {
      const v = r.field === 'status.phase' ? String((o.status as { phase?: string } | undefined)?.phase ?? '') : String(o.metadata[r.field.split('.')[1]!] ?? '');
      return r.neg ? v !== r.value : v === r.value;
    });
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, 'BadRequest', 'the request body is not valid JSON');
  }
}

export interface FakeApiServerOptions {
  token: string;
  /** How often open watches get a BOOKMARK (keeps the client's 30 s inactivity timer alive). */
  bookmarkMs?: number;
}

export class FakeApiServer {
  readonly store = new Store();
  readonly requests: RequestRecord[] = [];
  /** Pod logs, written by the simulated kubelet: `${ns}/${pod}/${container}` → text. */
  readonly logs = new Map<string, string>();
  private readonly faults: Fault[] = [];
  private readonly watches = new Set<{ resource: string; res: ServerResponse; end: () => void }>();
  private server?: Server;
  url = '';

  constructor(private readonly opts: FakeApiServerOptions) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const w of this.watches) w.end();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }

  /** Answers the next `times` matching requests with `code` (e.g. 500, or 429 with Retry-After). */
  injectFault(method: string, path: RegExp, code: number, times = 1, retryAfterSeconds?: number): void {
    this.faults.push({ method, path, code, remaining: times, retryAfterSeconds });
  }

  openWatches(plural: string): number {
    return [...this.watches].filter((w) => w.resource === plural).length;
  }

  /** Ends every open watch stream, as an apiserver restart would. */
  dropWatches(): void {
    for (const w of this.watches) w.end();
  }

  countRequests(method: string, path: RegExp, status?: number): number {
    return this.requests.filter((r) => r.method === method && path.test(r.path) && (status === undefined || r.status === status)).length;
  }

  private send(res: ServerResponse, code: number, body: unknown, rec: RequestRecord, headers: Record<string, string> = {}): void {
    rec.status = code;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(code, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const rec: RequestRecord = { method: req.method ?? 'GET', path: url.pathname, query: url.search, status: 0 };
    this.requests.push(rec);
    try {
      if (req.headers.authorization !== `Bearer ${this.opts.token}`) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
      const fault = this.faults.find((f) => f.remaining > 0 && f.method === rec.method && f.path.test(url.pathname));
      if (fault) {
        fault.remaining--;
        const e = new ApiError(fault.code, fault.code === 429 ? 'TooManyRequests' : 'InternalError', `injected fault ${fault.code}`);
        return this.send(res, fault.code, { ...e.status(), details: fault.retryAfterSeconds ? { retryAfterSeconds: fault.retryAfterSeconds } : undefined }, rec, fault.retryAfterSeconds ? { 'retry-after': String(fault.retryAfterSeconds) } : {});
      }
      await this.route(req, res, url, rec);
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(500, 'InternalError', `fake apiserver: ${(e as Error).stack ?? e}`);
      if (!res.headersSent) this.send(res, err.code, err.status(), rec);
      else res.end();
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, rec: RequestRecord): Promise<void> {
    // API discovery (GET /api/v1, /apis/<group>/v1): what KubernetesObjectApi reads to find a kind's path.
    const disc = /^\/(?:api\/(v1)|apis\/([a-z0-9.]+)\/(v1))\/?$/.exec(url.pathname);
    if (disc && (req.method ?? 'GET') === 'GET') {
      const group = disc[2] ?? '';
      const defs = RESOURCES.filter((r) => r.group === group);
      if (!defs.length) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      const verbs = ['create', 'delete', 'get', 'list', 'update', 'watch'];
      const resources = defs.flatMap((r) => [
        { name: r.plural, singularName: r.kind.toLowerCase(), namespaced: !r.clusterScoped, kind: r.kind, verbs },
        ...(r.status ? [{ name: `${r.plural}/status`, singularName: '', namespaced: !r.clusterScoped, kind: r.kind, verbs: ['get', 'update'] }] : []),
      ]);
      return this.send(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/v1` : 'v1', resources }, rec);
    }
    const m = /^\/(?:api\/v1|apis\/([a-z0-9.]+)\/(v1))(?:\/namespaces\/([a-z0-9-]+))?\/([a-z]+)(?:\/([a-z0-9.-]+))?(?:\/(status|log))?$/.exec(url.pathname);
    if (!m) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const [, group = '', , namespace, plural, name, sub] = m as unknown as [string, string | undefined, string, string | undefined, string, string | undefined, 'status' | 'log' | undefined];
    const def = RESOURCES.find((r) => r.group === group && r.plural === plural);
    // Namespaced resources only under /namespaces/<ns>/, cluster-scoped ones (Nodes) only outside it.
    if (!def || (namespace === undefined) !== (def.clusterScoped ?? false)) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const ns = namespace ?? '';
    const method = req.method ?? 'GET';
    const q = url.searchParams;
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;

    if (!name) {
      if (method === 'GET' && (q.get('watch') === 'true' || q.get('watch') === '1')) return this.watch(res, rec, def, ns, q);
      if (method === 'GET') {
        const labels = parseLabelSelector(q.get('labelSelector'));
        const fields = fieldMatcher(q.get('fieldSelector'));
        const items = this.store.list(def.plural, ns, (o) => matchesLabels(o.metadata.labels, labels) && fields(o));
        return this.send(res, 200, { kind: `${def.kind}List`, apiVersion, metadata: { resourceVersion: this.store.resourceVersion }, items }, rec);
      }
      if (method === 'POST') {
        const body = (await readBody(req)) as KObject;
        if (!body || typeof body !== 'object') throw new ApiError(400, 'BadRequest', 'no object in the request body');
        if (body.kind !== def.kind || body.apiVersion !== apiVersion) throw new ApiError(400, 'BadRequest', `the API version in the data (${body.apiVersion}) or kind (${body.kind}) does not match the expected ${apiVersion} ${def.kind}`);
        if (!def.clusterScoped && body.metadata?.namespace && body.metadata.namespace !== ns) throw new ApiError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
        // metadata.generateName: the server picks the name (prefix + 5 random characters).
        if (!body.metadata?.name && body.metadata?.generateName) body.metadata = { ...body.metadata, name: `${body.metadata.generateName}${randomBytes(4).toString('hex').slice(0, 5)}` };
        validate(def, body);
        const rest = { ...body };
        delete rest.status; // status is set by controllers, never on create
        return this.send(res, 201, this.store.create(def.plural, ns, { ...rest, metadata: { ...rest.metadata, namespace: ns || undefined } } as KObject, def.group), rec);
      }
      throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
    }

    if (sub === 'log') {
      if (def.plural !== 'pods' || method !== 'GET') throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      const pod = this.store.mustGet('pods', ns, name, 'pods');
      const containers = ((pod.spec as { containers?: { name: string }[] }).containers ?? []).map((c) => c.name);
      const container = q.get('container') ?? (containers.length === 1 ? containers[0] : undefined);
      if (!container) throw new ApiError(400, 'BadRequest', `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`);
      if (!containers.includes(container)) throw new ApiError(400, 'BadRequest', `container ${container} is not valid for pod ${name}`);
      let text = this.logs.get(`${ns}/${name}/${container}`) ?? '';
      const tail = q.get('tailLines');
      if (tail) text = text.split('\n').filter((l, i, a) => l || i < a.length - 1).slice(-Number(tail)).join('\n') + (text ? '\n' : '');
      return this.send(res, 200, text, rec);
    }

    if (method === 'GET') return this.send(res, 200, this.store.mustGet(def.plural, ns, name, def.plural, def.group), rec);
    if (method === 'PUT') {
      const body = (await readBody(req)) as KObject;
      if (body?.metadata?.name !== name) throw new ApiError(400, 'BadRequest', 'the name of the object does not match the name on the URL');
      if (sub !== 'status') {
        validate(def, body);
        validateImmutable(def, this.store.mustGet(def.plural, ns, name, def.plural, def.group), body);
      }
      return this.send(res, 200, this.store.update(def.plural, ns, body, { subresource: sub, group: def.group }), rec);
    }
    if (method === 'DELETE') {
      const body = ((await readBody(req)) ?? {}) as { propagationPolicy?: string; orphanDependents?: boolean };
      const policy = q.get('propagationPolicy') ?? body.propagationPolicy ?? (def.plural === 'jobs' ? 'Orphan' : 'Background'); // batch/v1 Jobs default to orphaning their pods
      const gone = this.store.delete(def.plural, ns, name, { orphan: policy === 'Orphan', group: def.group });
      // Services answer with the deleted object; the others with a Status (as the typed client expects).
      if (def.plural === 'services') return this.send(res, 200, gone, rec);
      return this.send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: def.group, kind: def.plural, uid: gone.metadata.uid } }, rec);
    }
    if (method === 'PATCH') throw new ApiError(415, 'UnsupportedMediaType', 'the fake API server does not implement PATCH');
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  }

  private watch(res: ServerResponse, rec: RequestRecord, def: ResourceDef, ns: string, q: URLSearchParams): void {
    const labels = parseLabelSelector(q.get('labelSelector'));
    const fields = fieldMatcher(q.get('fieldSelector'));
    const matches = (o: KObject) => (o.metadata.namespace ?? '') === ns && matchesLabels(o.metadata.labels, labels) && fields(o);
    const rvParam = q.get('resourceVersion');
    rec.status = 200;
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const write = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    const bookmark = () => write('BOOKMARK', { kind: def.kind, apiVersion, metadata: { resourceVersion: this.store.resourceVersion } });
    let ended = false;
    const entry = {
      resource: def.plural,
      res,
      end: () => {
        if (ended) return;
        ended = true;
        unsubscribe();
        clearInterval(bookmarks);
        clearTimeout(timeout);
        this.watches.delete(entry);
        res.end();
      },
    };
    const onEvent = (e: StoreEvent) => {
      if (e.resource === def.plural && matches(e.object)) write(e.type, e.object);
    };
    const unsubscribe = this.store.subscribe(onEvent);
    const bookmarks = setInterval(() => q.get('allowWatchBookmarks') === 'true' && bookmark(), this.opts.bookmarkMs ?? 5000);
    const timeout = setTimeout(entry.end, Math.min(Number(q.get('timeoutSeconds') ?? 1800), 1800) * 1000);
    this.watches.add(entry);
    res.on('close', entry.end);

    if (!rvParam || rvParam === '0') {
      // No version: the current state as synthetic ADDED events, then changes.
      for (const o of this.store.list(def.plural, ns, matches)) write('ADDED', o);
      return;
    }
    const from = Number(rvParam);
    const current = Number(this.store.resourceVersion);
    if (!Number.isInteger(from)) {
      write('ERROR', new ApiError(400, 'BadRequest', `invalid resource version "${rvParam}"`).status());
      return entry.end();
    }
    if (from < current && from + 1 < this.store.oldestWatchable) {
      write('ERROR', new ApiError(410, 'Expired', `too old resource version: ${from} (${this.store.oldestWatchable - 1})`).status());
      return entry.end();
    }
    for (const e of this.store.eventsSince(from)) onEvent(e);
  }
}

function validateImmutable(def: ResourceDef, current: KObject, next: KObject): void {
  const spec = (o: KObject) => o.spec as Record<string, unknown>;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (def.plural === 'deployments' && !same(spec(current).selector, spec(next).selector)) {
    throw new ApiError(422, 'Invalid', `Deployment.apps "${current.metadata.name}" is invalid: spec.selector: Invalid value: field is immutable`, [{ field: 'spec.selector', message: 'field is immutable', reason: 'FieldValueInvalid' }], { name: current.metadata.name, kind: 'Deployment', group: 'apps' });
  }
  if (def.plural === 'jobs' && !same(spec(current).template, spec(next).template)) {
    throw new ApiError(422, 'Invalid', `Job.batch "${current.metadata.name}" is invalid: spec.template: Invalid value: field is immutable`, [{ field: 'spec.template', message: 'field is immutable', reason: 'FieldValueInvalid' }], { name: current.metadata.name, kind: 'Job', group: 'batch' });
  }
}
