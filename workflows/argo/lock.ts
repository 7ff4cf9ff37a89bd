// argoLock: one entity workflow per Argo synchronization lock (a mutex, or a semaphore whose limit
// comes from a ConfigMap key), shared by every argoWorkflow run that names it. Holders are granted
// in FIFO order up to the limit; requests and releases are idempotent per holder key (workflow id,
// run id and node id), so a replayed or repeated acquire never takes a second slot.
//
// Protocol (workflows cannot send Updates, and an activity waiting for a grant would pin a slot
// and a heartbeat for as long as the queue is long): the interpreter signals `argo.sync.acquire`
// to the lock (starting it as an abandoned child when it does not run yet), waits for the lock's
// `argo.sync.granted` signal addressed to its own run, and signals `argo.sync.release` in a
// non-cancellable `finally`. A grant that cannot be delivered (the holder's run has closed) frees
// the slot at once. The lock completes when nobody holds or waits, and continues as new before its
// history grows large.
import { allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal, getExternalWorkflowHandle, isCancellation, setHandler, workflowInfo } from '@temporalio/workflow';

export interface LockRequest {
  /** Unique per holder: `<workflowId>/<runId>` for a workflow-level lock, plus `/<nodeId>` for a template. */
  key: string;
  workflowId: string;
  runId: string;
  /** The limit the requester read (1 for a mutex; the ConfigMap value for a semaphore): latest wins. */
  limit: number;
  /** Human-readable holder, for `argo.sync.state`: `<workflow name>/<node name>`. */
  holder?: string;
}

export interface LockState {
  /** The lock's workflow id, e.g. `argo-sync-default-mutex-welcome`. */
  id: string;
  limit: number;
  holders: LockRequest[];
  queue: LockRequest[];
}

export interface LockInput extends LockState {
  /** Continue as new after this many acquires/releases (Temporal may suggest it earlier). */
  maxOpsPerRun?: number;
}

export const lockAcquireSignal = defineSignal<[LockRequest]>('argo.sync.acquire');
export const lockReleaseSignal = defineSignal<[{ key: string }]>('argo.sync.release');
/** Sent by the lock to a holder's run when its request is granted. */
export const lockGrantedSignal = defineSignal<[{ lock: string; key: string }]>('argo.sync.granted');
export const lockStateQuery = defineQuery<LockState>('argo.sync.state');

export async function argoLock(input: LockInput): Promise<void> {
  const st: LockState = { id: input.id, limit: input.limit, holders: [...input.holders], queue: [...input.queue] };
  const maxOps = input.maxOpsPerRun ?? 500;
  let ops = 0;
  let dirty = true;
  const regrant = new Set<string>();
  setHandler(lockStateQuery, () => st);
  setHandler(lockAcquireSignal, (req) => {
    ops++;
    dirty = true;
    if (Number.isInteger(req.limit) && req.limit >= 0) st.limit = req.limit;
    if (st.holders.some((h) => h.key === req.key)) regrant.add(req.key); // a repeated acquire: say yes again
    else if (!st.queue.some((q) => q.key === req.key)) st.queue.push(req);
  });
  setHandler(lockReleaseSignal, ({ key }) => {
    ops++;
    dirty = true;
    st.holders = st.holders.filter((h) => h.key !== key);
    st.queue = st.queue.filter((q) => q.key !== key);
    regrant.delete(key);
  });

  for (;;) {
    await condition(() => dirty);
    dirty = false;
    const grants: LockRequest[] = [];
    while (st.holders.length < st.limit && st.queue.length) {
      const r = st.queue.shift()!;
      st.holders.push(r);
      grants.push(r);
    }
    for (const key of regrant) {
      const h = st.holders.find((x) => x.key === key);
      if (h && !grants.includes(h)) grants.push(h);
    }
    regrant.clear();
    await Promise.all(
      grants.map(async (r) => {
        try {
          await getExternalWorkflowHandle(r.workflowId, r.runId).signal(lockGrantedSignal, { lock: st.id, key: r.key });
        } catch (e) {
          if (isCancellation(e)) throw e;
          // The holder's run has closed (terminated, or finished without releasing): free its slot.
          st.holders = st.holders.filter((h) => h.key !== r.key);
          dirty = true;
        }
      }),
    );
    if (dirty) continue;
    if (st.holders.length === 0 && st.queue.length === 0) return;
    if (ops >= maxOps || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof argoLock>({ ...st, maxOpsPerRun: input.maxOpsPerRun });
    }
  }
}
