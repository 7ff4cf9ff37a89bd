// The activities' side of the audit log (audit/log.ts): `audit(record)` appends one external side
// effect, filling in who from the activity's context: the run (its workflow id), the tenant (the run's
// TandemTenant search attribute, looked up once per run), the namespace, and the worker's operator.
// Two records per side effect: `audit.intent(r)` before it (details.phase "intent") — an append that
// fails there fails the activity before anything happened — and `audit(r)` after it succeeded, the
// outcome. An outcome append that fails fails the activity, whose retry finds the side effect done
// (submission adopts the job by name) and appends it then. The log is keyed (audit/log.ts): the key is
// loaded, or generated on a worker's first append, from AuditSettings.keyFile.
import { Context } from '@temporalio/activity';
import { dirname, join } from 'node:path';
import { failure } from '../contract/failures.js';
import { auditLog, AuditKeyError, loadAuditKey, type AuditLog, type AuditWhere } from '../audit/log.js';
import { SA_TENANT } from '../contract/search-attributes.js';

export interface AuditSettings {
  /** The log file (config/worker.ts TANDEM_AUDIT_LOG). */
  file: string;
  /** Who the worker acts as (TANDEM_AUDIT_OPERATOR; default user@host). */
  operator?: string;
  /** The log's HMAC key (TANDEM_AUDIT_KEY_FILE); default <log's directory>/keys/audit.key. */
  keyFile?: string;
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

/** Appends the outcome of a side effect; `intent` appends, before it, that it is about to happen. */
export type Audit = ((record: ActivityAuditRecord) => Promise<void>) & { intent(record: ActivityAuditRecord): Promise<void> };

export const defaultAuditSettings = (home: string): AuditSettings => ({ file: join(home, 'audit.jsonl'), keyFile: join(home, 'keys', 'audit.key') });

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
  let log: AuditLog | undefined;
  const open = (): AuditLog => {
    if (log) return log;
    try {
      log = auditLog(settings.file, settings.operator, loadAuditKey(settings.keyFile ?? join(dirname(settings.file), 'keys', 'audit.key'), settings.file, true));
    } catch (e) {
      // No side effect without its record: a worker that cannot key its log does nothing (retried, so a fixed key file heals it).
      throw failure('AuditUnavailable', `audit log ${settings.file}: ${e instanceof AuditKeyError ? e.message : (e as Error).message}`);
    }
    return log;
  };
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
  const append = async (r: ActivityAuditRecord, phase?: 'intent') => {
    const l = open();
    const ctx = activityContext();
    const run = r.run ?? ctx?.info.workflowExecution?.workflowId;
    const tenant = r.tenant ?? (ctx && run && r.run === undefined ? await tenantOf(ctx, run) : undefined);
    const details = phase ? { ...r.details, phase } : r.details;
    await l.append({ who: { tenant, run }, what: r.what, where: { namespace: ctx?.info.workflowNamespace, ...r.where }, details });
  };
  return Object.assign((r: ActivityAuditRecord) => append(r), { intent: (r: ActivityAuditRecord) => append(r, 'intent') });
}
