// `tandem quotas`: what each tenant holds at each site against its quota, read from the sites'
// quotaLedger entity workflows (one per site on the CLI's task queue).
import type { Command } from 'commander';
import type { TandemClient } from '../sdk/client.js';
import { ledgerPrefix } from '../activities/quota.js';
import { usageQuery, type Usage } from '../workflows/ledger.js';
import { table } from './runs.js';

export interface SiteUsage {
  site: string;
  tenants: Usage[];
}

export async function quotaUsage(tandem: TandemClient): Promise<SiteUsage[]> {
  const prefix = ledgerPrefix(tandem.taskQueue);
  const out: SiteUsage[] = [];
  for await (const w of tandem.client.workflow.list({ query: `WorkflowType = 'quotaLedger' AND ExecutionStatus = 'Running'` })) {
    if (!w.workflowId.startsWith(prefix)) continue;
    const tenants = await tandem.client.workflow.getHandle(w.workflowId).query(usageQuery);
    out.push({ site: w.workflowId.slice(prefix.length), tenants });
  }
  return out.sort((a, b) => a.site.localeCompare(b.site));
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
  program
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
}
