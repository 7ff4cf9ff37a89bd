// The tenant policy file (TANDEM_TENANT_POLICY): per tenant, which sites, partitions, QoS classes,
// Kubernetes namespaces and service accounts its pipelines may use, how many GPUs one job may ask for,
// and which of the variables a spec may not set (LD_PRELOAD, NODE_OPTIONS, …) its stages may set
// anyway. With a file, a tenant it does not name gets the "*" entry, and without one nothing: deny
// by default. Without a file nothing changes.
//
// Enforced twice with the same pure check (`checkTenantPolicy`): by the SDK before a run starts
// (sdk/client.ts `launch`), and by the worker's activities for runs started some other way
// (activities/tenant-policy.ts), so a client that starts `hybridPipeline` itself cannot skip it.
// Sandbox-safe (zod and contract/ only), like the other files' schemas.
import { z } from 'zod';
import { QOS_CLASSES, STAGES, deniedEnvName, DENIED_ENV, DENIED_ENV_PREFIXES, type PipelineSpec, type StageName } from './pipeline.js';
import { parse } from 'yaml';
import { SpecError, parsePipelineSpec, parseYamlWith, validatePipelineSpec } from './parse.js';
import { InputError, type InputIssue } from './input-error.js';
import { own } from './own.js';

const name = /^[a-z0-9][a-z0-9-]*$/;
const tenantKey = z.string().regex(/^(\*|[a-z0-9][a-z0-9-]*)$/, 'a tenant name (lower-case letters, digits and dashes) or "*"');
const siteName = z.string().regex(/^(\*|[a-z0-9][a-z0-9-]*)$/, 'a site name (lower-case letters, digits and dashes), or "*" for every site');
const partitionName = z.string().regex(/^[A-Za-z0-9._:+-]+$/, 'a partition name (letters, digits and . _ : + -)');
const k8sName = z.string().regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/, 'a Kubernetes name (lower-case letters, digits, "-" and ".")');
const envName = z.string().superRefine((v, ctx) => {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) ctx.addIssue({ code: 'custom', message: 'must be an environment variable name' });
  // Only the refused names need allowing: anything else a spec may set already, so listing it is a mistake.
  else if (!deniedEnvName(v)) ctx.addIssue({ code: 'custom', message: `${v} is not refused to specs; list only names they may not set by default (${DENIED_ENV_PREFIXES.map((p) => `${p}*`).join(', ')}, ${DENIED_ENV.join(', ')})` });
});
const list = <T extends z.ZodType>(item: T) => z.array(item).min(1, 'must name at least one (leave the field out for no restriction)');

export const TenantEntrySchema = z.strictObject({
  /** Sites the tenant's stages may run at ("local", a Slurm or Kubernetes site name, "*" for any). Required: deny by default. */
  sites: z.array(siteName),
  /** Partitions: one list for every site, or per site (a "*" key for the others; a site neither names: any). Omitted: any. */
  partitions: z.union([list(partitionName), z.record(siteName, z.array(partitionName))]).optional(),
  /** QoS classes the tenant's pipelines may ask for. Omitted: any. */
  qos: list(z.enum(QOS_CLASSES)).optional(),
  /** Namespaces and service accounts a stage's `kubernetes` options may name. Omitted: Tandem's defaults. */
  kubernetes: z.strictObject({ namespaces: list(k8sName).optional(), serviceAccounts: list(k8sName).optional() }).optional(),
  /** GPUs one job (nodes × gpusPerNode) may ask for. Omitted: no limit. */
  maxGpusPerJob: z.number().int().min(0).optional(),
  /** Variables the spec's deny-list refuses that this tenant's stages may set (e.g. LD_PRELOAD). */
  allowEnv: z.array(envName).optional(),
});
export type TenantEntry = z.output<typeof TenantEntrySchema>;

export const TenantPolicySchema = z.strictObject({ tenants: z.record(tenantKey, TenantEntrySchema) });
export type TenantPolicy = z.output<typeof TenantPolicySchema>;

export function parseTenantPolicy(text: string, source = 'tenant policy'): TenantPolicy {
  return parseYamlWith(TenantPolicySchema, text, source, 'tenant policy', 'with a "tenants" mapping of tenant → {sites, partitions, qos, kubernetes, maxGpusPerJob, allowEnv}');
}

/** The tenant's entry, else the "*" entry, else undefined (denied). Own entries only (contract/own.ts). */
export function tenantEntry(policy: TenantPolicy, tenant: string): TenantEntry | undefined {
  return own(policy.tenants, tenant) ?? own(policy.tenants, '*');
}

/** Whether the entry lets the tenant run at `site`. */
export function siteAllowed(entry: TenantEntry, site: string): boolean {
  return entry.sites.includes('*') || entry.sites.includes(site);
}

/** The partitions allowed at `site` (undefined: any); without a site, every partition any site allows. */
export function partitionsAllowed(entry: TenantEntry, site?: string): readonly string[] | undefined {
  const p = entry.partitions;
  if (p === undefined || Array.isArray(p)) return p;
  // Without a site (placement decides), any partition some site allows, unless a site is unrestricted.
  if (site === undefined) return own(p, '*') === undefined && entry.sites.some((s) => s === '*' || own(p, s) === undefined) ? undefined : [...new Set(Object.values(p).flat())];
  // A site the mapping does not name (and no "*" key) is not restricted: `sites` already says where.
  return own(p, site) ?? own(p, '*');
}

/** The tenant's Kubernetes lists in the form contract/kubernetes.ts takes (`KubernetesPolicy`). */
export function kubernetesPolicyOf(entry: TenantEntry | undefined): { namespaces?: string[]; serviceAccounts?: string[] } {
  return { namespaces: entry?.kubernetes?.namespaces, serviceAccounts: entry?.kubernetes?.serviceAccounts };
}

/** What the check knows beyond the spec: where each stage runs, the launch's failover sites. */
export interface PolicyContext {
  /** The site a stage runs at, when known (the worker's backend for its runtime, placement's choice). */
  sites?: Partial<Record<StageName, string>>;
  tuning?: { failover?: { sites?: readonly string[] } };
}

const shown = (l: readonly string[]) => l.join(', ') || 'none';
const JOB_STAGES = STAGES.filter((s): s is 'preprocess' | 'train' | 'deploy' => s !== 'checkpoint');

/**
 * Every way `spec` goes beyond its tenant's policy, each with the field it is at
 * (`stages.train.resources.partition: tenant "a" may not use partition "gpu" at site zurich (allowed: debug)`).
 * Pure and deterministic; an empty list means the spec is allowed.
 */
export function checkTenantPolicy(spec: PipelineSpec, policy: TenantPolicy, ctx: PolicyContext = {}): InputIssue[] {
  const t = spec.tenant;
  const entry = tenantEntry(policy, t);
  if (!entry) return [{ path: 'tenant', message: `tenant "${t}" is not in the tenant policy (no entry for it and no "*" entry): it may not run pipelines here` }];
  const issues: InputIssue[] = [];
  const add = (path: string, message: string) => issues.push({ path, message });
  if (entry.qos && !entry.qos.includes(spec.qos)) add('qos', `tenant "${t}" may not use QoS "${spec.qos}" (allowed: ${shown(entry.qos)})`);
  for (const stage of JOB_STAGES) {
    const cfg = spec.stages[stage];
    const at = `stages.${stage}`;
    // A stage pinned to the local runtime runs at site "local"; others are known only to the worker.
    const site = ctx.sites?.[stage] ?? (cfg.runtime === 'local' ? 'local' : undefined);
    if (site !== undefined && !siteAllowed(entry, site)) add(`${at}.runtime`, `tenant "${t}" may not use site "${site}" (runtime ${cfg.runtime} runs there; allowed: ${shown(entry.sites)})`);
    const partitions = partitionsAllowed(entry, site);
    const r = cfg.resources;
    if (partitions && r.partition !== undefined && !partitions.includes(r.partition)) {
      add(`${at}.resources.partition`, `tenant "${t}" may not use partition "${r.partition}"${site ? ` at site ${site}` : ''} (allowed: ${shown(partitions)})`);
    } else if (partitions && r.partition === undefined && cfg.runtime === 'slurm') {
      // Without a partition Slurm picks the site's default one, which the policy may not allow.
      add(`${at}.resources.partition`, `must name a partition: tenant "${t}" may use only ${shown(partitions)}${site ? ` at site ${site}` : ''}, and a Slurm job without one goes to the site's default partition`);
    }
    const gpus = r.nodes * r.gpusPerNode;
    if (entry.maxGpusPerJob !== undefined && gpus > entry.maxGpusPerJob) {
      add(`${at}.resources.gpusPerNode`, `tenant "${t}" may ask for at most ${entry.maxGpusPerJob} GPUs per job; this one asks for ${gpus} (${r.nodes} node(s) × ${r.gpusPerNode})`);
    }
    const k = cfg.kubernetes;
    const ns = entry.kubernetes?.namespaces;
    if (ns && k?.namespace !== undefined && !ns.includes(k.namespace)) add(`${at}.kubernetes.namespace`, `tenant "${t}" may not use Kubernetes namespace "${k.namespace}" (allowed: ${shown(ns)})`);
    const sa = entry.kubernetes?.serviceAccounts;
    if (sa && k?.serviceAccountName !== undefined && !sa.includes(k.serviceAccountName)) add(`${at}.kubernetes.serviceAccountName`, `tenant "${t}" may not use service account "${k.serviceAccountName}" (allowed: ${shown(sa)})`);
    for (const v of Object.keys(cfg.env ?? {})) {
      if (deniedEnvName(v) && !entry.allowEnv?.includes(v)) add(`${at}.env.${v}`, `tenant "${t}" may not set ${v} (it changes the programs Tandem runs around the job; allowed overrides: ${shown(entry.allowEnv ?? [])})`);
    }
  }
  ctx.tuning?.failover?.sites?.forEach((s, i) => {
    if (!siteAllowed(entry, s)) add(`tuning.failover.sites[${i}]`, `tenant "${t}" may not use site "${s}" (allowed: ${shown(entry.sites)})`);
  });
  return issues;
}

/** A spec (or launch) its tenant's policy refuses: every violation, each naming its field. */
export class TenantPolicyError extends InputError {
  constructor(issues: InputIssue[], source = 'spec') {
    super('tenant policy', issues, { message: `${source}: refused by the tenant policy\n${issues.map((i) => `  - ${i.path}: ${i.message}`).join('\n')}` });
    this.name = 'TenantPolicyError';
  }
}

/** The message a worker's refusal carries (activities/tenant-policy.ts): the same lines the SDK prints. */
export function policyRefusal(issues: InputIssue[]): string {
  return `refused by the tenant policy:\n${issues.map((i) => `  - ${i.path}: ${i.message}`).join('\n')}`;
}

/**
 * validatePipelineSpec, except that the variables the tenant's `allowEnv` lists pass the spec's
 * deny-list. The schema refuses those names outright, so they are validated under stand-in names
 * (their values still get every check, and the entry count still counts them) and given back their
 * own names afterwards; an error about a value names the real variable.
 */
export function validateSpecUnderPolicy(input: unknown, policy: TenantPolicy | undefined, source = 'spec'): PipelineSpec {
  const allowed = allowedOverrides(input, policy);
  if (!allowed.size) return validatePipelineSpec(input, source);
  const raw = input as { stages?: Record<string, { env?: Record<string, unknown> } | undefined> };
  const renamed: Record<string, Map<string, string>> = {};
  const stages: Record<string, unknown> = { ...raw.stages };
  for (const [stage, cfg] of Object.entries(raw.stages ?? {})) {
    if (!cfg?.env || typeof cfg.env !== 'object') continue;
    const names = new Map<string, string>();
    const env: Record<string, unknown> = {};
    let n = 0;
    for (const [k, v] of Object.entries(cfg.env)) {
      if (!allowed.has(k)) {
        env[k] = v;
        continue;
      }
      let stand: string;
      do stand = `TANDEM_POLICY_ALLOWED_${n++}`;
      while (Object.prototype.hasOwnProperty.call(cfg.env, stand));
      names.set(stand, k);
      env[stand] = v;
    }
    if (names.size) {
      renamed[stage] = names;
      stages[stage] = { ...cfg, env };
    }
  }
  const back = (path: string) => path.replace(/^stages\.(\w+)\.env\.(TANDEM_POLICY_ALLOWED_\d+)/, (m, s: string, k: string) => (own(renamed, s)?.has(k) ? `stages.${s}.env.${renamed[s]!.get(k)}` : m));
  let valid: PipelineSpec;
  try {
    valid = validatePipelineSpec({ ...(input as object), stages }, source);
  } catch (e) {
    if (e instanceof SpecError) throw new SpecError(source, e.issues.map((i) => ({ ...i, path: back(i.path) })));
    throw e;
  }
  for (const [stage, names] of Object.entries(renamed)) {
    const cfg = valid.stages[stage as 'train'];
    // The same order as written: the stand-in takes its variable's place.
    cfg.env = Object.fromEntries(Object.entries(cfg.env ?? {}).map(([k, v]) => [names.get(k) ?? k, v]));
  }
  return valid;
}

/**
 * parsePipelineSpec for a spec file under a policy: when the only problems are variables the tenant's
 * `allowEnv` lists, the file (whose YAML passed every other check) is validated as validateSpecUnderPolicy does.
 */
export function parseSpecUnderPolicy(text: string, policy: TenantPolicy | undefined, source = 'spec'): PipelineSpec {
  try {
    return parsePipelineSpec(text, source);
  } catch (e) {
    if (!(e instanceof SpecError) || !policy || !e.issues.some((i) => i.path.includes('.env.'))) throw e;
    // The YAML itself passed (keys, aliases): only the schema refused something.
    let input: unknown;
    try {
      input = parse(text, { maxAliasCount: 100 });
    } catch {
      throw e; // a duplicate key: the first parse's error names it at its line
    }
    const allowed = allowedOverrides(input, policy);
    const isAllowed = (i: InputIssue) => {
      const m = /^stages\.\w+\.env\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(i.path);
      return m !== null && allowed.has(m[1]!) && /may not be set by a pipeline spec/.test(i.message);
    };
    const rest = e.issues.filter((i) => !isAllowed(i));
    if (rest.length === e.issues.length) throw e;
    // The other problems, at their lines, without the refusals the policy lifts.
    if (rest.length) throw new SpecError(source, rest);
    return validateSpecUnderPolicy(input, policy, source);
  }
}

/** The refused names the input's tenant may set (its entry's `allowEnv`), read from the raw input. */
function allowedOverrides(input: unknown, policy: TenantPolicy | undefined): Set<string> {
  if (!policy || input === null || typeof input !== 'object') return new Set();
  const tenant = (input as { tenant?: unknown }).tenant ?? 'default';
  if (typeof tenant !== 'string' || !name.test(tenant)) return new Set();
  return new Set(tenantEntry(policy, tenant)?.allowEnv ?? []);
}
