// The quotas file (TANDEM_QUOTAS_FILE): per site, how much each tenant's running stages may hold at
// once. A site is a Slurm or Kubernetes site name, "local", or "*": a tenant's quota at a site is
// that site's entry for it, else its "*" entry, else unlimited. Enforced by one quotaLedger entity
// workflow per site (workflows/ledger.ts), so concurrent pipelines of a tenant never exceed its
// quota, whichever worker runs them.
import { z } from 'zod';
import { parseDuration } from './duration.js';
import { parseYamlWith } from './parse.js';
import { own } from './own.js';

const amount = z.number().int().min(0);
export const QuotaSchema = z.strictObject({ cpus: amount.optional(), gpus: amount.optional(), memoryMB: amount.optional() });
export type Quota = z.output<typeof QuotaSchema>;

const key = z.string().regex(/^(\*|[a-z0-9][a-z0-9-]*)$/, 'a site name (lower-case letters, digits and dashes) or "*"');
const tenant = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'a tenant name (lower-case letters, digits and dashes)');

export const QuotasFileSchema = z.strictObject({
  quotas: z.record(key, z.record(tenant, QuotaSchema)),
  /** How often a stage waiting for quota asks again (grows ×2 up to 10× this). */
  retryInterval: z.string().refine((v) => !!parseDuration(v), { message: 'must be a duration such as "30s" or "5m"' }).default('30s'),
});
export type QuotasFile = z.output<typeof QuotasFileSchema>;

export function parseQuotasFile(text: string, source = 'quotas file'): QuotasFile {
  return parseYamlWith(QuotasFileSchema, text, source, 'quotas file', 'with a "quotas" mapping of site → tenant → {cpus, gpus, memoryMB}');
}

/** The tenant's quota at `site`; undefined means unlimited. */
export function quotaFor(file: Pick<QuotasFile, 'quotas'> | undefined, site: string, tenantName: string): Quota | undefined {
  // Own entries only: tenant or site `constructor` must not find Object's (contract/own.ts).
  return own(own(file?.quotas, site), tenantName) ?? own(own(file?.quotas, '*'), tenantName);
}
