// The worker's half of the tenant policy (contract/tenant-policy.ts). The SDK checks a launch before
// it starts, but anyone with access to the namespace can start `hybridPipeline` with a spec of their
// own. So the activities that place, submit or deploy check the run again here, on the spec the run
// was started with (its first history event, read once per run) and the sites this worker resolves
// its stages to. Nothing in the workflow changes, so recorded histories replay as they are; a refused
// run fails with a non-retryable TenantPolicyDenied at its first such activity, before any job exists,
// and the workflow's saga undoes whatever the run had done.
import { failure } from '../contract/failures.js';
import { STAGES, type PipelineSpec, type Runtime, type StageName } from '../contract/pipeline.js';
import { checkTenantPolicy, partitionsAllowed, policyRefusal, siteAllowed, tenantEntry, type TenantPolicy } from '../contract/tenant-policy.js';
import type { Inventory } from '../placement/index.js';
import { RunInputs, type StartInput } from './run-input.js';

/** The site this worker runs a stage of `runtime` at (undefined: no such backend, or placement decides). */
export type StageSite = (runtime: Runtime, stage: string) => string | undefined;

export class TenantGuard {

  constructor(
    readonly policy: TenantPolicy,
    private readonly stageSite: StageSite,
    private readonly inputs: RunInputs = new RunInputs(),
  ) {}

  /**
   * Refuses (TenantPolicyDenied) when the running pipeline's spec goes beyond its tenant's policy at
   * the sites this worker would run its stages at, plus `at` (placement's choice for one stage).
   * Activities called outside a pipeline run (another workflow type, a test harness) are not checked.
   */
  async enforce(at: Partial<Record<StageName, string>> = {}): Promise<PipelineSpec | undefined> {
    const input = await this.startInput();
    if (!input) return undefined;
    const sites: Partial<Record<StageName, string>> = {};
    for (const stage of STAGES) {
      if (stage === 'checkpoint') continue;
      const runtime = input.spec.stages[stage].runtime;
      if (runtime === 'auto') continue;
      const site = this.stageSite(runtime, stage);
      if (site !== undefined) sites[stage] = site;
    }
    const issues = checkTenantPolicy(input.spec, this.policy, { sites: { ...sites, ...at }, tuning: input.tuning });
    if (issues.length) throw failure('TenantPolicyDenied', policyRefusal(issues), { details: [{ tenant: input.spec.tenant, issues }] });
    return input.spec;
  }

  /** Of `sites` (failover's candidates), those the tenant may use. */
  allowedSites(tenant: string, sites: readonly string[]): string[] {
    const entry = tenantEntry(this.policy, tenant);
    return entry ? sites.filter((s) => siteAllowed(entry, s)) : [];
  }

  /** The part of `inventory` the tenant may be placed on: its sites, and at each its partitions. */
  restrict(inventory: Inventory, tenant: string): Inventory {
    const entry = tenantEntry(this.policy, tenant);
    if (!entry) return { sites: [] };
    const sites = inventory.sites
      .filter((s) => siteAllowed(entry, s.name))
      .map((s) => {
        const allowed = partitionsAllowed(entry, s.name);
        if (!allowed) return s;
        return { ...s, clusters: s.clusters.map((c) => ({ ...c, partitions: c.partitions.filter((p) => allowed.includes(p.name)) })).filter((c) => c.partitions.length) };
      })
      .filter((s) => s.clusters.length);
    return { sites };
  }

  /** The spec and tuning the current activity's run was started with (undefined outside a pipeline). */
  private startInput(): Promise<StartInput | undefined> {
    return this.inputs.current();
  }
}
