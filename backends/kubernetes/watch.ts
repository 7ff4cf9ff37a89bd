// Watching one named object until a condition holds, the way controllers do it: read (which gives a
// resourceVersion), then watch from that version; on a dropped stream re-watch from the last version
// seen; on 410 Gone (the version was compacted away) read again. Nothing is missed and nothing is
// assumed from a stale read.
import { kubeError, type KubeClients } from './client.js';

interface Versioned {
  metadata?: { resourceVersion?: string };
}

export interface WatchObjectOptions<T extends Versioned, R> {
  clients: KubeClients;
  /** The collection URL path, e.g. /apis/apps/v1/namespaces/ns/deployments. */
  path: string;
  name: string;
  /** A fresh read; undefined when the object does not exist. */
  read: () => Promise<T | undefined>;
  /** Returns a result to stop watching; called with every observed version (undefined: deleted). */
  until: (obj: T | undefined) => R | undefined;
  signal?: AbortSignal;
  /** Server-side timeout of one watch request; the stream is re-opened after it. */
  timeoutSeconds?: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

export class WatchAborted extends Error {
  constructor() {
    super('watch aborted');
    this.name = 'WatchAborted';
  }
}

export async function watchObject<T extends Versioned, R>(o: WatchObjectOptions<T, R>): Promise<R> {
  let backoff = 200;
  for (;;) {
    if (o.signal?.aborted) throw new WatchAborted();
    const current = await o.read();
    const early = o.until(current);
    if (early !== undefined) return early;
    let rv = current?.metadata?.resourceVersion;
    // Re-watch from the last version seen until the stream says the version is gone.
    for (let gone = false; !gone; ) {
      if (o.signal?.aborted) throw new WatchAborted();
      const outcome = await new Promise<{ result?: R; gone?: boolean; error?: unknown }>((resolve) => {
        let settled = false;
        let controller: AbortController | undefined;
        const finish = (v: { result?: R; gone?: boolean; error?: unknown }) => {
          if (settled) return;
          settled = true;
          o.signal?.removeEventListener('abort', onAbort);
          controller?.abort();
          resolve(v);
        };
        const onAbort = () => finish({ error: new WatchAborted() });
        o.signal?.addEventListener('abort', onAbort, { once: true });
        const query: Record<string, string | number | boolean> = { fieldSelector: `metadata.name=${o.name}`, allowWatchBookmarks: true, timeoutSeconds: o.timeoutSeconds ?? 60 };
        if (rv) query.resourceVersion = rv;
        o.clients.watcher
          .watch(
            o.path,
            query,
            (type, obj: T & { code?: number }) => {
              if (type === 'ERROR') {
                // A Status object inside the stream: 410 means "re-read"; anything else too, after a pause.
                finish({ gone: true, error: obj.code === 410 ? undefined : new Error(`watch error ${obj.code ?? ''}`) });
                return;
              }
              if (obj?.metadata?.resourceVersion) rv = obj.metadata.resourceVersion;
              if (type === 'BOOKMARK') return;
              const r = o.until(type === 'DELETED' ? undefined : obj);
              if (r !== undefined) finish({ result: r });
            },
            (err) => finish({ error: err ?? undefined }),
          )
          .then((c) => {
            controller = c;
            if (settled) c.abort();
          })
          .catch((err) => finish({ error: err }));
      });
      if (outcome.result !== undefined) return outcome.result;
      if (outcome.error instanceof WatchAborted || o.signal?.aborted) throw new WatchAborted();
      if (outcome.gone) gone = true;
      if (outcome.error) {
        // A dropped or refused stream: could not observe, which is never a verdict. Back off and resume.
        const e = kubeError(outcome.error, `watch ${o.path}/${o.name}`);
        if (!e.transient && e.code !== 0) throw e;
        await sleep(backoff, o.signal);
        backoff = Math.min(backoff * 2, 5000);
        gone = true; // re-read: the object may have moved on while we could not see it
      } else {
        backoff = 200;
      }
    }
  }
}
