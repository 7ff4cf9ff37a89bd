// synchronization: the mutexes and semaphores a workflow or template names, as lock workflows
// (workflows/argo/lock.ts) shared by every run of the namespace. How a run takes and gives them back
// is lock-client.ts; this is their naming.
import type { Json } from '../../argo/lang/types.js';
import { arr, UserError } from './model.js';

/** One lock a `synchronization` block names: its lock workflow id and how to read its limit. */
export interface LockRef {
  id: string;
  /** Argo's name for it: `<ns>/Mutex/<name>` or `<ns>/ConfigMap/<configMap>/<key>`. */
  label: string;
  kind: 'mutex' | 'semaphore';
  namespace: string;
  configMap?: string;
  key?: string;
}

/**
 * The locks of a (substituted) `synchronization` block, sorted by id so that two holders needing
 * the same locks always take them in the same order (no lock-order deadlock). `mutex`/`semaphore`
 * (Argo ≤ 3.5) and `mutexes`/`semaphores` (3.6+) are both read; a `database` mutex is the same
 * namespace-wide mutex here (Tandem's locks are already shared by every worker of the namespace).
 */
export function syncLocks(sync: Json | undefined, namespace: string): LockRef[] {
  if (!sync) return [];
  const out = new Map<string, LockRef>();
  const one = (v: unknown): Json[] => (v && typeof v === 'object' && !Array.isArray(v) ? [v as Json] : []);
  for (const m of [...one(sync.mutex), ...arr(sync.mutexes)]) {
    if (typeof m.name !== 'string' || !m.name) throw new UserError('synchronization: a mutex needs a name');
    const ns = typeof m.namespace === 'string' && m.namespace ? m.namespace : namespace;
    const id = `argo-sync-${ns}-mutex-${m.name}`;
    out.set(id, { id, label: `${ns}/Mutex/${m.name}`, kind: 'mutex', namespace: ns });
  }
  for (const s of [...one(sync.semaphore), ...arr(sync.semaphores)]) {
    const ref = s.configMapKeyRef as Json | undefined;
    if (!ref) {
      if (s.database) throw new UserError("synchronization: database semaphores need Argo's synchronization database, which Tandem does not have; use a configMapKeyRef semaphore");
      throw new UserError('synchronization: a semaphore needs a configMapKeyRef');
    }
    if (typeof ref.name !== 'string' || typeof ref.key !== 'string') throw new UserError('synchronization: semaphore configMapKeyRef needs name and key');
    const ns = typeof s.namespace === 'string' && s.namespace ? s.namespace : namespace;
    const id = `argo-sync-${ns}-semaphore-${ref.name}/${ref.key}`;
    out.set(id, { id, label: `${ns}/ConfigMap/${ref.name}/${ref.key}`, kind: 'semaphore', namespace: ns, configMap: ref.name, key: ref.key });
  }
  return [...out.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The holder key a run (or one of its nodes) takes locks under: unique to the run, so that a retried
 * run never inherits its predecessor's holds.
 */
export function holderKey(run: { workflowId: string; runId: string }, nodeId?: string): string {
  return nodeId === undefined ? `${run.workflowId}/${run.runId}` : `${run.workflowId}/${run.runId}/${nodeId}`;
}

/** The entry of the run's granted set for `key` holding lock `lockId`. */
export const grantKey = (lockId: string, key: string): string => `${lockId}|${key}`;

/** Argo's Pending message while a holder waits for a lock. */
export const lockWaitMessage = (lock: LockRef, limit: number): string => `Waiting for ${lock.label} lock. Lock limit: ${limit}`;
