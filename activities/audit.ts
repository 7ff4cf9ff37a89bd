// The activities' side of the audit log (audit/log.ts): `audit(record)` appends one external side
// effect, filling in who from the activity's context: the run (its workflow id), the tenant (the run's
// TandemTenant search attribute, looked up once per run), the namespace, and the worker's operator.
// Appended after the side effect succeeded; an append that fails fails the activity, whose retry then
// finds the side effect done (submission adopts the job by name) — the log may then lack that one
// record, but never holds one for something that did not happen.
import { Context } from '@temporalio/activity';
import { join } from 'node:path';
import { auditLog, type AuditWhere } from '../audit/log.js';
import { SA_TENANT } from '../contract/search-attributes.js';

export interface AuditSettings {
  /** The log file (config/worker.ts TANDEM_AUDIT_LOG). */
  file: string;
  /** Who the worker acts as (TANDEM_AUDIT_OPERATOR; default user@host). */
  operator?: string;
}

export interface ActivityAuditRecord {
  /** job.submitted, job.cancelled, deployment.rolledOut, deployment.rolledBack, partition.changed, checkpoint.copied, checkpoint.pruned, quota.admitted, quota.released, … */
  what: string;
  where?: AuditWhere;
  /** Default: the run's tenant (its search attribute). */
  tenant?: string;
  /** Default: the activity's workflow id. */
  run?: string;
  /** Names, ids and amounts only: never an environment, a command line or a secret. */
  details?: Record<string, unknown>;
}

export type Audit = (record: ActivityAuditRecord) => Promise<void>;

export const defaultAuditSettings = (home: string): AuditSettings => ({ file: join(home, 'audit.jsonl') });

/** Outside an activity (a unit test calling the function directly) there is no context to read. */
function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

const TENANT_CACHE_MAX = 1000;

export function activityAuditor(settings: AuditSettings): Audit {
  const log = auditLog(settings.file, settings.operator);
  const tenants = new Map<string, Promise<string | undefined>>();
  const tenantOf = (ctx: Context, run: string): Promise<string | undefined> => {
    let t = tenants.get(run);
    if (!t) {
      if (tenants.size >= TENANT_CACHE_MAX) tenants.delete(tenants.keys().next().value!);
      // A run started without the attribute (or a context without a client) has no tenant to name.
      t = (async () => (await ctx.client.workflow.getHandle(run).describe()).typedSearchAttributes.get(SA_TENANT))().catch(() => undefined);
      tenants.set(run, t);
    }
    return t;
  };
  return async (r) => {
    const ctx = activityContext();
    const run = r.run ?? ctx?.info.workflowExecution?.workflowId;
    const tenant = r.tenant ?? (ctx && run && r.run === undefined ? await tenantOf(ctx, run) : undefined);
    await log.append({ who: { tenant, run }, what: r.what, where: { namespace: ctx?.info.workflowNamespace, ...r.where }, details: r.details });
  };
}
