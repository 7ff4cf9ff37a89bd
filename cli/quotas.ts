// `tandem quotas`: what each tenant holds at each site against its quota, read from the sites'
// quotaLedger entity workflows (one per site on the CLI's task queue); `tandem quotas release` frees
// a hold by hand (the ledger frees those of closed runs itself, within LEDGER_RECONCILE_MS).
import type { Command } from 'commander';
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { TandemClient } from '../sdk/client.js';
import { ledgerId, ledgerPrefix } from '../activities/quota.js';
import { amounts } from '../workflows/pipeline/messages.js';
import { holdsQuery, releaseUpdate, usageQuery, type Hold, type Usage } from '../workflows/ledger.js';
import { table } from './runs.js';
import { hasOwn } from '../contract/own.js';
import { describeExecution, listExecutions } from '../sdk/list.js';

/** Bad operator input (an unknown hold or site): printed as `tandem: <message>`, exit 2. */
export class QuotaError extends Error {
  override name = 'QuotaError';
}

export interface SiteUsage {
  site: string;
  tenants: Usage[];
}

/** The running ledgers of the CLI's task queue, found through visibility (eventually consistent). */
async function* ledgers(tandem: TandemClient): AsyncGenerator<{ site: string; handle: WorkflowHandle }> {
  const prefix = ledgerPrefix(tandem.taskQueue);
  for await (const w of listExecutions(tandem.client, `WorkflowType = 'quotaLedger' AND ExecutionStatus = 'Running'`)) {
    if (w.workflowId.startsWith(prefix)) yield { site: w.workflowId.slice(prefix.length), handle: tandem.client.workflow.getHandle(w.workflowId) };
  }
}

export async function quotaUsage(tandem: TandemClient): Promise<SiteUsage[]> {
  const out: SiteUsage[] = [];
  for await (const { site, handle } of ledgers(tandem)) out.push({ site, tenants: await handle.query(usageQuery) });
  return out.sort((a, b) => a.site.localeCompare(b.site));
}

export interface ReleasedHold {
  site: string;
  holdId: string;
  hold: Hold;
  /** The holder run's status (RUNNING, TERMINATED, …), or "gone" when the server no longer has it. */
  holderStatus?: string;
}

/**
 * Releases a hold by hand, through the ledger's release Update: at `site` when given (addressed by
 * its id, so a ledger visibility has not indexed yet is found too), else at every site that holds it.
 */
export async function releaseHold(tandem: TandemClient, holdId: string, opts: { site?: string } = {}): Promise<ReleasedHold[]> {
  const sites: { site: string; handle: WorkflowHandle }[] = [];
  if (opts.site) sites.push({ site: opts.site, handle: tandem.client.workflow.getHandle(ledgerId(tandem.taskQueue, opts.site)) });
  else for await (const l of ledgers(tandem)) sites.push(l);
  const known: string[] = [];
  const released: ReleasedHold[] = [];
  for (const { site, handle } of sites) {
    let holds: Record<string, Hold>;
    try {
      holds = await handle.query(holdsQuery);
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) throw new QuotaError(`no quota ledger for site "${opts.site}" on task queue ${tandem.taskQueue} (it starts with the first stage that holds quota there)`);
      throw e;
    }
    if (!hasOwn(holds, holdId)) {
      known.push(...Object.keys(holds).map((h) => `${h} (${site})`));
      continue;
    }
    const r = await handle.executeUpdate(releaseUpdate, { args: [{ holdId }] });
    // Released meanwhile by its run or the ledger's reconciliation: nothing left to report.
    if (r.released && r.hold) released.push({ site, holdId, hold: r.hold, holderStatus: r.hold.holder ? await holderStatus(tandem, r.hold.holder) : undefined });
  }
  if (!released.length) {
    const where = opts.site ? `at site ${opts.site}` : 'at any site';
    throw new QuotaError(`no quota hold "${holdId}" ${where}; ${known.length ? `holds: ${known.sort().join(', ')}` : 'nothing is held'}`);
  }
  return released;
}

async function holderStatus(tandem: TandemClient, workflowId: string): Promise<string> {
  try {
    return (await describeExecution(tandem.client, workflowId)).status;
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return 'gone';
    throw e;
  }
}

export function formatReleased(r: ReleasedHold): string {
  const by = r.hold.holder ? `; held by ${r.hold.holder} (${r.holderStatus === 'RUNNING' ? 'still running: its job now runs outside the quota' : (r.holderStatus ?? 'unknown').toLowerCase()})` : '';
  return `released quota hold ${r.holdId} at ${r.site}: ${amounts(r.hold)} of tenant ${r.hold.tenant}'s quota${by}`;
}

const of = (used: number, cap: number | undefined) => (cap === undefined ? `${used}` : `${used}/${cap}`);

export function formatQuotaUsage(sites: SiteUsage[]): string {
  if (!sites.length) return 'no quota ledgers yet (they start with the first stage that holds quota)';
  return table([
    ['SITE', 'TENANT', 'CPUS', 'GPUS', 'MEMORY MB'],
    ...sites.flatMap((s) => s.tenants.map((t) => [s.site, t.tenant, of(t.cpus, t.quota.cpus), of(t.gpus, t.quota.gpus), of(t.memoryMB, t.quota.memoryMB)])),
  ]);
}

export function registerQuotaCommands(program: Command, connect: () => Promise<TandemClient>): void {
  const quotas = program
    .command('quotas')
    .description("what each tenant holds at each site, against its quota (TANDEM_QUOTAS_FILE of the workers)")
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const tandem = await connect();
      try {
        const usage = await quotaUsage(tandem);
        console.log(o.json ? JSON.stringify(usage, null, 2) : formatQuotaUsage(usage));
      } finally {
        await tandem.close();
      }
    });
  quotas
    .command('release <hold>')
    .description('release a quota hold by hand (its id is <workflow id>/<stage>; the ledger releases holds of closed runs by itself)')
    .option('--site <site>', 'only at this site')
    .option('--json', 'machine-readable output')
    .action(async (holdId: string, o: { site?: string; json?: boolean }) => {
      const tandem = await connect();
      try {
        const released = await releaseHold(tandem, holdId, { site: o.site });
        console.log(o.json ? JSON.stringify(released, null, 2) : released.map(formatReleased).join('\n'));
      } finally {
        await tandem.close();
      }
    });
}
