// Phase 2 of a staged migration, seen from a pipeline: a job bound for a migrating Slurm site goes to
// Tandem's pool or the legacy partition by the site's current share (contract/routing.ts decides from
// the workflow id, so the decision replays and the same pipeline routes the same way at a given share).
// The share is read through an activity (the routing file the migration writes, activities/routing.ts)
// before every submission: a pipeline whose site has fallen back to 0% goes to the legacy partition
// with its next job, and one at a site past cut-over follows it to Tandem's.
import type { Resources, Runtime } from '../../contract/pipeline.js';
import { decideRoute, type RouteDecision } from '../../contract/routing.js';
import { SA_POOL } from '../../contract/search-attributes.js';
import type { PipelineRun } from './context.js';
import type { JobStage } from './job-shape.js';
import { PATCHES } from './patches.js';

/** Per run and site, the last decision and the legacy partition it may fall back to. */
const decided = new WeakMap<PipelineRun, Map<string, { decision: RouteDecision; legacy: string }>>();

/**
 * The job's resources with the partition its pool gives, when the job goes to a migrating Slurm site;
 * otherwise unchanged. A partition the spec names itself is kept: the user chose.
 */
export async function routedResources(run: PipelineRun, stage: JobStage, attempt: number, runtime: Runtime, site: string | undefined, resources: Resources): Promise<Resources> {
  if (runtime === 'local' || runtime === 'kubernetes' || resources.partition !== undefined) return resources;
  if (!run.has(PATCHES.migrationRouting)) return resources;
  const found = await run.bookkeeping.siteRouting({ runtime, stage, site });
  if (!found) return resources;
  let bySite = decided.get(run);
  if (!bySite) decided.set(run, (bySite = new Map()));
  const prior = bySite.get(found.site);
  const { routing } = found;
  let next: RouteDecision;
  if (routing.pools) {
    next = decideRoute(run.workflowId, found.site, { ...routing, pools: routing.pools });
    bySite.set(found.site, { decision: next, legacy: routing.pools.legacy });
  } else if (prior) {
    // The site no longer routes (Phase 2 fell back, or the migration was rolled back): a run routed
    // there before keeps to the site's legacy partition rather than the scheduler's default.
    next = { ...prior.decision, pool: 'legacy', partition: prior.legacy, percent: routing.percent, reason: 'the site routes nothing through Tandem any more (fallen back or rolled back)' };
    bySite.set(found.site, { decision: next, legacy: prior.legacy });
  } else {
    return resources; // not migrating
  }
  const changed = !prior || prior.decision.pool !== next.pool;
  run.status.routing = next;
  if (changed) {
    run.searchAttribute({ key: SA_POOL, value: next.pool });
    const pool = next.pool === 'tandem' ? "Tandem's pool" : 'the legacy pool';
    run.record({ kind: 'routing', stage, attempt, site: next.site, message: `routed to ${pool} (partition ${next.partition}) at migrating site ${next.site}: ${next.reason}` });
  }
  return { ...resources, partition: next.partition };
}
