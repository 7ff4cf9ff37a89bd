// A durable quota/reservation ledger per site, as an entity workflow. Pipelines admit a hold before
// they submit and release it when they finish; Temporal runs update handlers one at a time, so the
// validator's check and the handler's booking can never interleave and concurrent pipelines never
// push a tenant past its quota. A hold whose run closed without releasing it (terminated, timed out)
// is released by the ledger itself: every LEDGER_RECONCILE_MS it asks which holders have closed.
// Continues as new before the history grows large.
import { allHandlersFinished, condition, continueAsNew, defineQuery, defineUpdate, isCancellation, log, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { PATCHES } from './pipeline/patches.js';
import { hasOwn, own } from '../contract/own.js';
import { observeQuota } from './observe.js';

export interface Amount {
  cpus: number;
  gpus: number;
  memoryMB: number;
}

export interface Hold extends Amount {
  tenant: string;
  /** The workflow id of the run that booked it; holds booked before holders were recorded have none
   *  and are only released by their run or an operator (`tandem quotas release`). */
  holder?: string;
}

export interface LedgerState {
  site: string;
  quotas: Record<string, Partial<Amount>>;
  holds: Record<string, Hold>;
}

export interface LedgerInput extends LedgerState {
  /** Continue as new after this many admits/releases (Temporal also suggests it by history size). */
  maxOpsPerRun?: number;
}

export interface AdmitRequest extends Amount {
  holdId: string;
  tenant: string;
  /** The tenant's quota as the admitting worker is configured now; it replaces the recorded one, so
   *  an edited quotas file takes effect without restarting the ledger. */
  quota?: Partial<Amount>;
  /** The booking run's workflow id (the quota activity fills it in from its caller). */
  holder?: string;
}

export interface Usage extends Amount {
  tenant: string;
  quota: Partial<Amount>;
}

export const admitUpdate = defineUpdate<{ holdId: string; usage: Amount }, [AdmitRequest]>('admit');
/** Idempotent: releasing a hold that is not held answers `released: false`. */
export const releaseUpdate = defineUpdate<{ released: boolean; hold?: Hold }, [{ holdId: string }]>('release');
export const usageQuery = defineQuery<Usage[]>('usage');
export const holdsQuery = defineQuery<Record<string, Hold>>('holds');

/** How often the ledger looks for holds whose run has closed without releasing them. */
export const LEDGER_RECONCILE_MS = 30_000;

/** What the ledger asks its workers (activities/quota.ts serves it on the ledger's task queue). */
export interface LedgerActivities {
  /** Which of these workflow ids have no running run any more. */
  closedQuotaHolders(input: { holders: string[] }): Promise<string[]>;
}

const zero = (): Amount => ({ cpus: 0, gpus: 0, memoryMB: 0 });
export const AMOUNT_KEYS = ['cpus', 'gpus', 'memoryMB'] as const;

/** The first amount in which `req` alone exceeds `quota` (waiting can never admit it), if any. */
export function beyondQuota(quota: Partial<Amount>, req: Amount): (typeof AMOUNT_KEYS)[number] | undefined {
  return AMOUNT_KEYS.find((k) => quota[k] !== undefined && req[k] > quota[k]!);
}

export function usageOf(state: LedgerState, tenant: string): Amount {
  const u = zero();
  for (const h of Object.values(state.holds)) {
    if (h.tenant !== tenant) continue;
    u.cpus += h.cpus;
    u.gpus += h.gpus;
    u.memoryMB += h.memoryMB;
  }
  return u;
}

/** Why `req` cannot be admitted, or undefined when it can. */
export function refusal(state: LedgerState, req: AdmitRequest): string | undefined {
  // Own entries only (contract/own.ts): a tenant or hold named like an Object member is just a name.
  if (hasOwn(state.holds, req.holdId)) return undefined; // idempotent re-admit of the same hold
  if (req.cpus < 0 || req.gpus < 0 || req.memoryMB < 0) return 'amounts must not be negative';
  // `__proto__` is no tenant name (contract/pipeline.ts) and would replace the records' prototype.
  if (req.tenant === '__proto__' || req.holdId === '__proto__') return 'invalid tenant or hold id "__proto__"';
  const q = req.quota ?? own(state.quotas, req.tenant);
  if (!q) return undefined;
  const u = usageOf(state, req.tenant);
  for (const k of AMOUNT_KEYS) {
    const cap = q[k];
    if (cap !== undefined && u[k] + req[k] > cap) return `tenant ${req.tenant} would use ${u[k] + req[k]} ${k} at site ${state.site}, above its quota of ${cap} (in use: ${u[k]})`;
  }
  return undefined;
}

/** Releases the holds whose run has closed (the ledger's workers answer which); returns how many. */
async function releaseClosedHolders(state: LedgerState): Promise<number> {
  // A quick describe per holder; one that keeps failing is asked again next interval.
  const { closedQuotaHolders } = proxyActivities<LedgerActivities>({ startToCloseTimeout: '1m', retry: { maximumAttempts: 3 } });
  const holders = [...new Set(Object.values(state.holds).flatMap((h) => (h.holder ? [h.holder] : [])))].sort();
  let closed: string[];
  try {
    closed = await closedQuotaHolders({ holders });
  } catch (e) {
    if (isCancellation(e)) throw e;
    log.warn('could not tell which quota holders have closed; asking again next interval', { error: String(e) });
    return 0;
  }
  let released = 0;
  for (const [holdId, h] of Object.entries(state.holds)) {
    if (!h.holder || !closed.includes(h.holder)) continue;
    delete state.holds[holdId];
    publishUsage(state, h.tenant);
    released++;
    log.info('released the quota hold of a closed run', { holdId, holder: h.holder, site: state.site });
  }
  return released;
}

/** The tenant's usage and quota at this site, for the worker's tandem_quota_* gauges (a sink: no command). */
function publishUsage(state: LedgerState, tenant: string): void {
  observeQuota(state.site, tenant, usageOf(state, tenant), own(state.quotas, tenant));
}

export async function quotaLedger(input: LedgerInput): Promise<never> {
  const state: LedgerState = { site: input.site, quotas: input.quotas, holds: { ...input.holds } };
  const maxOps = input.maxOpsPerRun ?? 1000;
  let ops = 0;

  setHandler(
    admitUpdate,
    (req) => {
      if (req.quota) state.quotas[req.tenant] = req.quota;
      if (!hasOwn(state.holds, req.holdId)) {
        state.holds[req.holdId] = { tenant: req.tenant, cpus: req.cpus, gpus: req.gpus, memoryMB: req.memoryMB, ...(req.holder ? { holder: req.holder } : {}) };
        ops++;
      }
      publishUsage(state, req.tenant);
      return { holdId: req.holdId, usage: usageOf(state, req.tenant) };
    },
    {
      // Rejected updates leave no trace in history.
      validator: (req) => {
        const why = refusal(state, req);
        if (why) throw new Error(why);
      },
    },
  );
  setHandler(releaseUpdate, ({ holdId }) => {
    const hold = own(state.holds, holdId);
    if (hold) delete state.holds[holdId];
    if (hold) ops++;
    if (hold) publishUsage(state, hold.tenant);
    return hold ? { released: true, hold } : { released: false };
  });
  setHandler(holdsQuery, () => state.holds);
  setHandler(usageQuery, () => {
    const tenants = new Set([...Object.keys(state.quotas), ...Object.values(state.holds).map((h) => h.tenant)]);
    return [...tenants].sort().map((tenant) => ({ tenant, ...usageOf(state, tenant), quota: own(state.quotas, tenant) ?? {} }));
  });

  // A new run (continued as new, or a restarted worker replaying it) states where every tenant stands.
  for (const tenant of new Set([...Object.keys(state.quotas), ...Object.values(state.holds).map((h) => h.tenant)])) publishUsage(state, tenant);

  const newRunDue = () => ops >= maxOps || workflowInfo().continueAsNewSuggested;
  // Ledgers started before reconciliation only wait for their next run (which reconciles).
  if (patched(PATCHES.ledgerReconcile)) {
    const watched = () => Object.values(state.holds).some((h) => h.holder);
    for (;;) {
      await condition(() => newRunDue() || watched());
      if (newRunDue() || (await condition(newRunDue, LEDGER_RECONCILE_MS))) break;
      ops += await releaseClosedHolders(state);
    }
  } else {
    await condition(newRunDue);
  }
  await condition(allHandlersFinished);
  return continueAsNew<typeof quotaLedger>({ ...state, maxOpsPerRun: input.maxOpsPerRun });
}
