// Quota holds: before a stage submits its job, it books what the job holds at its site in that site's
// quotaLedger entity workflow (started on first use, through update-with-start); the hold is released
// when the stage ends or its saga runs. A site or tenant without a quota is not booked at all. Each
// hold names the run that booked it, so that the ledger can release it once that run has closed
// without doing so (closedQuotaHolders, which the ledger calls on the same task queue).
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { durationMs } from '../contract/duration.js';
import type { Runtime } from '../contract/pipeline.js';
import { quotaFor, type QuotasFile } from '../contract/quotas.js';
import { beyondQuota, type Amount, type LedgerActivities } from '../workflows/ledger.js';
import type { Audit } from './audit.js';

/** One ledger per site and task queue: it runs on the queue of the workers that admit to it, so every
 *  pipeline of that queue (whichever worker runs it) shares it. */
export const ledgerPrefix = (taskQueue: string) => `tandem-quota-${taskQueue}-`;
export const ledgerId = (taskQueue: string, site: string) => `${ledgerPrefix(taskQueue)}${site}`;

export interface AdmitQuotaInput extends Amount {
  holdId: string;
  tenant: string;
  stage: string;
  /** The site the job goes to when known (placement, failover); else the runtime's own site. */
  site?: string;
  runtime: Runtime;
}

/** The site whose ledger books a stage: the one its job will run at. */
export type SiteResolver = (runtime: Runtime, stage: string, site?: string) => string;

export type AdmitQuotaResult =
  | { admitted: true; managed: false; site: string }
  | { admitted: true; managed: true; site: string; usage: Amount; quota: Partial<Amount> }
  /** `never`: the stage alone exceeds the quota, so waiting cannot help. */
  | { admitted: false; never: boolean; site: string; reason: string; retryIntervalMs: number };

export function createQuotaActivities(file: QuotasFile | undefined, resolveSite: SiteResolver, audit?: Audit) {
  const retryIntervalMs = durationMs(file?.retryInterval ?? '30s');
  return {
    async admitQuota(input: AdmitQuotaInput): Promise<AdmitQuotaResult> {
      const { holdId, tenant } = input;
      const site = input.site ?? resolveSite(input.runtime, input.stage);
      const quota = quotaFor(file, site, tenant);
      if (!quota) return { admitted: true, managed: false, site };
      const over = beyondQuota(quota, input);
      if (over) return { admitted: false, never: true, site, retryIntervalMs, reason: `the stage needs ${input[over]} ${over}, more than tenant ${tenant}'s whole quota of ${quota[over]} at site ${site}` };
      const ctx = Context.current();
      // The workflow that asks is the holder (not an input, so pipelines' recorded commands stay as they are).
      const request = { holdId, tenant, cpus: input.cpus, gpus: input.gpus, memoryMB: input.memoryMB, quota, holder: ctx.info.workflowExecution?.workflowId };
      try {
        const r = await ctx.client.workflow.executeUpdateWithStart('admit', {
          args: [request],
          startWorkflowOperation: new WithStartWorkflowOperation('quotaLedger', {
            workflowId: ledgerId(ctx.info.taskQueue, site),
            taskQueue: ctx.info.taskQueue,
            args: [{ site, quotas: {}, holds: {} }],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        });
        await audit?.({ what: 'quota.admitted', tenant, where: { site }, details: { holdId, stage: input.stage, cpus: input.cpus, gpus: input.gpus, memoryMB: input.memoryMB } });
        return { admitted: true, managed: true, site, usage: (r as { usage: Amount }).usage, quota };
      } catch (e) {
        // The validator refused: the tenant's other stages hold the rest. Anything else is retried.
        if (e instanceof WorkflowUpdateFailedError) return { admitted: false, never: false, site, retryIntervalMs, reason: e.cause?.message ?? e.message };
        throw e;
      }
    },

    async releaseQuota({ site, holdId }: { site: string; holdId: string }): Promise<{ released: boolean }> {
      try {
        const ctx = Context.current();
        const r = (await ctx.client.workflow.getHandle(ledgerId(ctx.info.taskQueue, site)).executeUpdate('release', { args: [{ holdId }] })) as { released: boolean };
        if (r.released) await audit?.({ what: 'quota.released', where: { site }, details: { holdId } });
        return r;
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) return { released: false }; // no ledger: nothing was held
        throw e;
      }
    },

    /** Which of these workflows have no running run any more (closed, or gone from the server). Asked
     *  by workflow id, not run id: a run reset in place (`tandem runs retry`) keeps its holds. */
    async closedQuotaHolders({ holders }: Parameters<LedgerActivities['closedQuotaHolders']>[0]): Promise<string[]> {
      const { client } = Context.current();
      const closed: string[] = [];
      for (const id of holders) {
        try {
          if ((await client.workflow.getHandle(id).describe()).status.name !== 'RUNNING') closed.push(id);
        } catch (e) {
          if (e instanceof WorkflowNotFoundError) closed.push(id);
          else throw e;
        }
      }
      return closed;
    },
  };
}

export type QuotaActivities = ReturnType<typeof createQuotaActivities>;
