// The fake API server's storage: etcd-like semantics that the real apiserver gives clients. One
// global resourceVersion counter, optimistic concurrency on update (409 Conflict), generation bumped
// on spec changes only, status written only through the status subresource, a bounded event history
// for watches (older versions answer 410 Gone), and owner-reference garbage collection on delete.
import { randomUUID } from 'node:crypto';

export interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
  [k: string]: unknown;
}

export interface KObject {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  spec?: Record<string, unknown> & object;
  status?: Record<string, unknown> & object;
  [k: string]: unknown;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  rv: number;
  type: EventType;
  resource: string;
  object: KObject;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly causes?: { field: string; message: string; reason?: string }[],
    readonly details?: { name?: string; kind?: string; group?: string },
  ) {
    super(message);
  }

  status() {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      details: this.details || this.causes ? { ...this.details, causes: this.causes } : undefined,
      code: this.code,
    };
  }
}

const clone = <T>(v: T): T => structuredClone(v);

/** JSON with sorted keys: equality that does not depend on the order a client serialized fields in. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === 'object' && !Array.isArray(val) ? Object.fromEntries(Object.entries(val as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => a.localeCompare(b))) : val,
  );
}
const HISTORY = 2000;

export class Store {
  private rv = 1000;
  private readonly objects = new Map<string, KObject>();
  private history: StoreEvent[] = [];
  private readonly listeners = new Set<(e: StoreEvent) => void>();

  private key(resource: string, ns: string, name: string) {
    return `${resource}/${ns}/${name}`;
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  /** The oldest resourceVersion a watch may still start from. */
  get oldestWatchable(): number {
    return this.history[0]?.rv ?? this.rv;
  }

  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  eventsSince(rv: number): StoreEvent[] {
    return this.history.filter((e) => e.rv > rv);
  }

  /** Drops history (as etcd compaction does): older watch versions then get 410 Gone. */
  compact(): void {
    this.history = [];
  }

  private emit(type: EventType, resource: string, object: KObject): void {
    const e: StoreEvent = { rv: Number(object.metadata.resourceVersion), type, resource, object: clone(object) };
    this.history.push(e);
    if (this.history.length > HISTORY) this.history.shift();
    for (const l of this.listeners) l(e);
  }

  get(resource: string, ns: string, name: string): KObject | undefined {
    const o = this.objects.get(this.key(resource, ns, name));
    return o ? clone(o) : undefined;
  }

  mustGet(resource: string, ns: string, name: string, kind: string, group = ''): KObject {
    const o = this.get(resource, ns, name);
    if (!o) throw new ApiError(404, 'NotFound', `${resource}${group ? `.${group}` : ''} "${name}" not found`, undefined, { name, kind: resource, group });
    return o;
  }

  list(resource: string, ns: string | undefined, filter: (o: KObject) => boolean = () => true): KObject[] {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`${resource}/${ns === undefined ? '' : `${ns}/`}`))
      .map(([, o]) => o)
      .filter(filter)
      .map(clone)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  create(resource: string, ns: string, obj: KObject, group = ''): KObject {
    const name = obj.metadata.name;
    if (this.objects.has(this.key(resource, ns, name))) {
      throw new ApiError(409, 'AlreadyExists', `${resource}${group ? `.${group}` : ''} "${name}" already exists`, undefined, { name, kind: resource, group });
    }
    const o = clone(obj);
    o.metadata = {
      ...o.metadata,
      namespace: ns || undefined, // '' = a cluster-scoped object (Node): no namespace
      uid: randomUUID(),
      resourceVersion: String(++this.rv),
      generation: 1,
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    delete o.metadata.deletionTimestamp;
    this.objects.set(this.key(resource, ns, name), o);
    this.emit('ADDED', resource, o);
    return clone(o);
  }

  /**
   * PUT semantics. `subresource: 'status'` changes only .status; the main resource keeps the stored
   * status. A resourceVersion in the body must match (409 Conflict otherwise).
   */
  update(resource: string, ns: string, obj: KObject, opts: { subresource?: 'status'; group?: string } = {}): KObject {
    const name = obj.metadata.name;
    const current = this.mustGet(resource, ns, name, resource, opts.group);
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== current.metadata.resourceVersion) {
      throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${resource}${opts.group ? `.${opts.group}` : ''} "${name}": the object has been modified; please apply your changes to the latest version and try again`, undefined, { name, kind: resource, group: opts.group });
    }
    const next: KObject =
      opts.subresource === 'status'
        ? { ...current, status: clone(obj.status) }
        : {
            ...clone(obj),
            metadata: { ...clone(obj.metadata), resourceVersion: current.metadata.resourceVersion, uid: current.metadata.uid, namespace: ns || undefined, creationTimestamp: current.metadata.creationTimestamp, generation: current.metadata.generation, deletionTimestamp: current.metadata.deletionTimestamp },
            status: current.status,
          };
    if (opts.subresource !== 'status' && canonical(next.spec) !== canonical(current.spec)) next.metadata.generation = (current.metadata.generation ?? 1) + 1;
    if (canonical(next) === canonical(current)) return current; // a no-op write does not bump resourceVersion
    next.metadata.resourceVersion = String(++this.rv);
    this.objects.set(this.key(resource, ns, name), next);
    this.emit('MODIFIED', resource, next);
    return clone(next);
  }

  /** Deletes the object; dependents (ownerReferences) go too unless `orphan`. */
  delete(resource: string, ns: string, name: string, opts: { orphan?: boolean; group?: string } = {}): KObject {
    const current = this.mustGet(resource, ns, name, resource, opts.group);
    this.objects.delete(this.key(resource, ns, name));
    current.metadata.resourceVersion = String(++this.rv);
    current.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    this.emit('DELETED', resource, current);
    if (!opts.orphan) {
      for (const [k, o] of [...this.objects.entries()]) {
        if (o.metadata.ownerReferences?.some((r) => r.uid === current.metadata.uid)) {
          const [res, dns, dname] = k.split('/') as [string, string, string];
          if (this.objects.has(k)) this.delete(res, dns, dname);
        }
      }
    }
    return current;
  }
}
