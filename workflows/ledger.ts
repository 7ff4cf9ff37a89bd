// A durable quota/reservation ledger per site, as an entity workflow. Pipelines admit a hold before
// they submit and release it when they finish; Temporal runs update handlers one at a time, so the
// validator's check and the handler's booking can never interleave and concurrent pipelines never
// push a tenant past its quota. Continues as new before the history grows large.
import { allHandlersFinished, condition, continueAsNew, defineQuery, defineUpdate, setHandler, workflowInfo } from '@temporalio/workflow';

export interface Amount {
  cpus: number;
  gpus: number;
  memoryMB: number;
}

export interface LedgerState {
  site: string;
  quotas: Record<string, Partial<Amount>>;
  holds: Record<string, { tenant: string } & Amount>;
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
}

export interface Usage extends Amount {
  tenant: string;
  quota: Partial<Amount>;
}

export const admitUpdate = defineUpdate<{ holdId: string; usage: Amount }, [AdmitRequest]>('admit');
export const releaseUpdate = defineUpdate<{ released: boolean }, [{ holdId: string }]>('release');
export const usageQuery = defineQuery<Usage[]>('usage');

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
  if (state.holds[req.holdId]) return undefined; // idempotent re-admit of the same hold
  if (req.cpus < 0 || req.gpus < 0 || req.memoryMB < 0) return 'amounts must not be negative';
  const q = req.quota ?? state.quotas[req.tenant];
  if (!q) return undefined;
  const u = usageOf(state, req.tenant);
  for (const k of AMOUNT_KEYS) {
    const cap = q[k];
    if (cap !== undefined && u[k] + req[k] > cap) return `tenant ${req.tenant} would use ${u[k] + req[k]} ${k} at site ${state.site}, above its quota of ${cap} (in use: ${u[k]})`;
  }
  return undefined;
}

export async function quotaLedger(input: LedgerInput): Promise<never> {
  const state: LedgerState = { site: input.site, quotas: input.quotas, holds: { ...input.holds } };
  const maxOps = input.maxOpsPerRun ?? 1000;
  let ops = 0;

  setHandler(
    admitUpdate,
    (req) => {
      if (req.quota) state.quotas[req.tenant] = req.quota;
      if (!state.holds[req.holdId]) {
        state.holds[req.holdId] = { tenant: req.tenant, cpus: req.cpus, gpus: req.gpus, memoryMB: req.memoryMB };
        ops++;
      }
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
    const released = holdId in state.holds;
    delete state.holds[holdId];
    if (released) ops++;
    return { released };
  });
  setHandler(usageQuery, () => {
    const tenants = new Set([...Object.keys(state.quotas), ...Object.values(state.holds).map((h) => h.tenant)]);
    return [...tenants].sort().map((tenant) => ({ tenant, ...usageOf(state, tenant), quota: state.quotas[tenant] ?? {} }));
  });

  await condition(() => ops >= maxOps || workflowInfo().continueAsNewSuggested);
  await condition(allHandlersFinished);
  return continueAsNew<typeof quotaLedger>({ ...state, maxOpsPerRun: input.maxOpsPerRun });
}
