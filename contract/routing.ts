// Phase 2 routing of a migrating Slurm site: which pool (Tandem's partition or the legacy one) a
// pipeline's jobs go to. The migration writes the site's share (activities/routing-store.ts); each
// pipeline reads it through an activity and decides here, from its workflow id alone, so the same
// pipeline always routes the same way at a given share and a replay sees the same decision.
// Sandbox-safe: no imports.

/** A site's routing as the migration sets it. `pools` is present while the site migrates. */
export interface Routing {
  percent: number;
  policies: string[];
  /** The partitions the share splits between; absent when the site is not (or no longer) migrating. */
  pools?: { tandem: string; legacy: string };
}

export type Pool = 'tandem' | 'legacy';

/** What a pipeline decided for one site, kept in its status and timeline. */
export interface RouteDecision {
  site: string;
  pool: Pool;
  partition: string;
  /** The share in force when the decision was made (percent of new pipelines through Tandem). */
  percent: number;
  /** The pipeline's fixed position in [0, 100): routed to Tandem iff bucket < percent. */
  bucket: number;
  reason: string;
}

/**
 * The pipeline's bucket in [0, 100), two decimals: FNV-1a (32 bit) of the workflow id. Uniform enough
 * that N pipelines at share p put ~Binomial(N, p) on Tandem's pool, and fixed per pipeline, so raising
 * the share only ever adds pipelines to Tandem's pool (those already there stay).
 */
export function routingBucket(workflowId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < workflowId.length; i++) {
    h ^= workflowId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return (h % 10_000) / 100;
}

/** The pool for a pipeline at a migrating site (`routing.pools` set), with the reason in words. */
export function decideRoute(workflowId: string, site: string, routing: Routing & { pools: { tandem: string; legacy: string } }): RouteDecision {
  const bucket = routingBucket(workflowId);
  const pool: Pool = bucket < routing.percent ? 'tandem' : 'legacy';
  const cmp = pool === 'tandem' ? '<' : '≥';
  return { site, pool, partition: routing.pools[pool], percent: routing.percent, bucket, reason: `bucket ${bucket.toFixed(2)} ${cmp} share ${routing.percent}%` };
}

/**
 * Whether a Slurm job name is one of Tandem's pipeline jobs (`tandem-<run>-<stage>-<attempt>`, see
 * workflows/pipeline/identity.ts) rather than the migration's own benchmarks (`tandem-mig-…`) or anybody
 * else's: the SLO gate measures these only.
 */
export function isPipelineJobName(name: string): boolean {
  return name.startsWith('tandem-') && !name.startsWith('tandem-mig-') && /-(preprocess|train)-\d+(-|$)/.test(name);
}
