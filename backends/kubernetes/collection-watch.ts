// Watching a whole collection (every Node, a namespace's Pods) for the fields one consumer reads, the
// way an informer does: list (which gives a resourceVersion), then watch from it; a stream that ends is
// watched again from the last version seen; 410 Gone or a failed stream means list again. Each object
// is reduced to a fingerprint of what the consumer reads, and `version` moves only when a fingerprint
// changes, appears or goes: a node's heartbeat (its conditions' times) moves nothing.
//
// Placement's Kubernetes source (activities/placement-sources.ts) uses two as its generation, so an
// unchanged cluster is not listed again on every decision. The watch runs only while it is asked: it
// starts on the first `current()`, stops after IDLE_MS without one (at the next stream end, so a
// stream may stay open up to WATCH_SECONDS longer) and on `close()`; a later `current()` starts it
// again. Its pauses are unref'd, its open stream is not: whoever starts one closes it (the worker does).
// A stream that ends within a second, or a refusal (401/403: RBAC that lets the worker list but not
// watch), is not retried at once: the first backs off, the second waits a minute and is logged once.
import type { KubernetesObject } from '@kubernetes/client-node';
import { kubeError, type KubeClients } from './client.js';

/** Server-side length of one watch request; the stream is opened again after it. */
const WATCH_SECONDS = 60;
/** Not asked for this long: the watch stops at its next stream end (a later `current()` starts it again). */
const IDLE_MS = 5 * 60_000;
/** After the server refused the watch (401/403): how long before asking again. */
const REFUSED_MS = 60_000;
/** A stream shorter than this counts as a failure (backoff), not as the server's normal end. */
const SHORT_STREAM_MS = 1000;

export interface CollectionWatchOptions<T extends KubernetesObject> {
  clients: KubeClients;
  /** The collection URL path, e.g. /api/v1/nodes or /api/v1/namespaces/ns/pods. */
  path: string;
  list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>;
  /** What the consumer reads of an object; undefined: the object does not count (as if absent). */
  fingerprint: (obj: T) => string | undefined;
  /** For tests: the clock idleness is measured with. */
  now?: () => number;
}

const pause = (ms: number) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref();
  });

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class CollectionWatch<T extends KubernetesObject> {
  /** Moves whenever a fingerprint changes, appears or goes (and at each fresh list that differs). */
  private version = 0;
  private synced = false;
  private loopRunning = false;
  private closed = false;
  private lastAsked = 0;
  private stream: AbortController | undefined;
  private readonly prints = new Map<string, string>();
  private refusedOnce = false;
  /** Lists and stream openings so far (tests and benches: what the watch cost). */
  lists = 0;
  private readonly now: () => number;

  constructor(private readonly o: CollectionWatchOptions<T>) {
    this.now = o.now ?? Date.now;
  }

  /**
   * The collection's version while the watch is up; undefined while it is starting or its stream is
   * down (the caller then reads the collection itself). Starts the watch if it is not running.
   */
  current(): number | undefined {
    this.lastAsked = this.now();
    this.closed = false; // closed by a worker that stopped; asked again by the next one
    if (!this.loopRunning) {
      this.loopRunning = true;
      void this.loop();
    }
    return this.synced ? this.version : undefined;
  }

  /** Whether the watch runs (a stream open, or about to be). */
  get running(): boolean {
    return this.loopRunning;
  }

  /** Stops the watch (a stream open is aborted); the next `current()` starts it again. */
  close(): void {
    this.closed = true;
    this.synced = false;
    this.stream?.abort();
  }

  private set(key: string, print: string | undefined): void {
    const was = this.prints.get(key);
    if (was === print) return;
    if (print === undefined) this.prints.delete(key);
    else this.prints.set(key, print);
    this.version++;
  }

  private async loop(): Promise<void> {
    let backoff = 200;
    try {
      while (!this.closed && this.now() - this.lastAsked < IDLE_MS) {
        try {
          const l = await this.o.list();
          this.lists++;
          const seen = new Set<string>();
          for (const obj of l.items) {
            seen.add(keyOf(obj));
            this.set(keyOf(obj), this.o.fingerprint(obj));
          }
          for (const k of [...this.prints.keys()]) if (!seen.has(k)) this.set(k, undefined);
          let rv = l.metadata?.resourceVersion;
          // Watch again from the last version seen until the stream fails or says the version is gone.
          for (;;) {
            if (this.closed || this.now() - this.lastAsked >= IDLE_MS) return;
            const opened = Date.now();
            const end = await this.watchOnce(rv, (v) => (rv = v));
            if (end === 'gone') break;
            if (Date.now() - opened < SHORT_STREAM_MS) throw new Error('the watch stream ended at once');
            backoff = 200;
          }
        } catch (e) {
          // Could not observe: the caller reads the collection itself until the watch is back.
          this.synced = false;
          if (this.closed) return;
          const err = kubeError(e, `watch ${this.o.path}`);
          if (err.code === 401 || err.code === 403) {
            if (!this.refusedOnce) console.warn(`tandem: placement cannot watch ${this.o.path} (${err.code}: ${err.message}); it reads the cluster on every decision instead. Grant the worker "watch" on it (templates/kubernetes/worker-rbac.yaml).`);
            this.refusedOnce = true;
            await pause(REFUSED_MS);
          } else {
            await pause(err.transient || err.code === 0 ? backoff : Math.max(backoff, 5000));
          }
          backoff = Math.min(backoff * 2, 5000);
        }
        this.synced = false;
      }
    } finally {
      this.synced = false;
      this.loopRunning = false;
      this.stream = undefined;
    }
  }

  /** One watch request: 'ended' when the server closed it (time up), 'gone' when the version is gone; throws when it failed. */
  private watchOnce(rv: string | undefined, onVersion: (rv: string) => void): Promise<'ended' | 'gone'> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (f: () => void) => {
        if (settled) return;
        settled = true;
        this.synced = false;
        this.stream?.abort();
        this.stream = undefined;
        f();
      };
      const query: Record<string, string | number | boolean> = { allowWatchBookmarks: true, timeoutSeconds: WATCH_SECONDS };
      if (rv) query.resourceVersion = rv;
      this.o.clients.watcher
        .watch(
          this.o.path,
          query,
          (type, obj: T & { code?: number }) => {
            if (type === 'ERROR') {
              // A Status inside the stream: 410 says list again; anything else too, after a pause.
              finish(() => (obj.code === 410 ? resolve('gone') : reject(new Error(`watch error ${obj.code ?? ''}: ${(obj as { message?: string }).message ?? ''}`))));
              return;
            }
            if (obj?.metadata?.resourceVersion) onVersion(obj.metadata.resourceVersion);
            if (type === 'BOOKMARK') return;
            this.set(keyOf(obj), type === 'DELETED' ? undefined : this.o.fingerprint(obj));
          },
          (err) => finish(() => (err && !this.closed ? reject(err) : resolve('ended'))),
        )
        .then((c) => {
          if (settled || this.closed) {
            c.abort();
            if (!settled) finish(() => resolve('ended'));
            return;
          }
          // The stream is open from `rv`: nothing after the list is missed from here on.
          this.stream = c;
          this.synced = true;
        })
        .catch((err) => finish(() => reject(err)));
    });
  }
}
