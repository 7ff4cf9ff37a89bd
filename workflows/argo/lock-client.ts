// A run's side of the lock protocol (the lock itself is lock.ts): queue for each lock, wait for its
// grant signal, and release however the holder ends.
import { CancellationScope, ChildWorkflowCancellationType, condition, getExternalWorkflowHandle, isCancellation, ParentClosePolicy, sleep, startChild } from '@temporalio/workflow';
import type { RunContext } from './context.js';
import { argoLock, lockAcquireSignal, lockReleaseSignal, type LockRequest } from './lock.js';
import { grantKey, lockWaitMessage, type LockRef } from './sync.js';

/** Puts `req` in the lock's queue: signals the running lock, or starts it with `req` queued. */
async function sendAcquire(lock: LockRef, req: LockRequest): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    // Another run started the lock just before us (signal it at once), or it keeps completing
    // between our signal and our start (back off).
    if (attempt > 1) await sleep(Math.min(50 * 2 ** (attempt - 2), 5000));
    try {
      await getExternalWorkflowHandle(lock.id).signal(lockAcquireSignal, req);
      return;
    } catch (e) {
      if (isCancellation(e)) throw e;
    }
    try {
      await startChild(argoLock, {
        workflowId: lock.id,
        args: [{ id: lock.id, limit: req.limit, holders: [], queue: [req] }],
        // The lock outlives whichever run happened to start it.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        cancellationType: ChildWorkflowCancellationType.ABANDON,
        memo: { argoLock: lock.label },
      });
      return;
    } catch (e) {
      if (isCancellation(e) || (e as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw e;
    }
  }
}

export async function releaseLocks(ctx: RunContext, held: LockRef[], key: string): Promise<void> {
  await CancellationScope.nonCancellable(async () => {
    for (const l of held) {
      try {
        await getExternalWorkflowHandle(l.id).signal(lockReleaseSignal, { key });
      } catch (e) {
        // The lock is gone: nothing is held there any more.
        void e;
      }
      ctx.granted.delete(grantKey(l.id, key));
    }
  });
}

/**
 * Takes every lock in order, waiting (Pending, with Argo's message) until each is granted. On any
 * failure or cancellation the locks already taken or queued for are released before rethrowing.
 */
export async function acquireLocks(ctx: RunContext, locks: LockRef[], key: string, holder: string, waiting: (msg?: string) => void): Promise<LockRef[]> {
  const held: LockRef[] = [];
  try {
    for (const l of locks) {
      const limit = l.kind === 'mutex' ? 1 : await ctx.acts.argoSyncLimit({ namespace: l.namespace, configMap: l.configMap!, key: l.key! });
      held.push(l);
      await CancellationScope.nonCancellable(() => sendAcquire(l, { key, workflowId: ctx.info.workflowId, runId: ctx.info.runId, limit, holder }));
      if (!ctx.granted.has(grantKey(l.id, key))) {
        waiting(lockWaitMessage(l, limit));
        await condition(() => ctx.granted.has(grantKey(l.id, key)));
      }
    }
    waiting(undefined);
    return held;
  } catch (e) {
    await releaseLocks(ctx, held, key);
    throw e;
  }
}
