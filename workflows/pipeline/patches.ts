// The pipeline's (and its quota ledger's) patch ids. A run started before a patch replays the old path, so an id is never
// renamed or reused once it has shipped.

/** Patch ids, newest last; each has recorded histories on both sides in test/histories/. */
export const PATCHES = { searchAttributes: 'tandem-search-attributes', placement: 'tandem-placement', failover: 'tandem-failover', quota: 'tandem-quota', fenceOnFailover: 'tandem-fence-on-failover', jobIdentity: 'tandem-job-identity', deadlineTimer: 'tandem-deadline-timer', ledgerReconcile: 'tandem-ledger-reconcile', migrationRouting: 'tandem-migration-routing', placementActions: 'tandem-placement-actions', servingEndpoint: 'tandem-serving-endpoint', siteQueues: 'tandem-site-queues', leanHistory: 'tandem-lean-history', deploySaga: 'tandem-deploy-saga' } as const;

export type PatchId = (typeof PATCHES)[keyof typeof PATCHES];

/**
 * The pipeline's patches before PATCHES.leanHistory. A run that has leanHistory (one marker, in its
 * first workflow task) has all of them without a marker each: each cost a marker and a
 * TemporalChangeVersion upsert (two events and a visibility write) per run. Patches added later are
 * not in this list and record their own markers.
 */
export const LEAN_COVERS: ReadonlySet<PatchId> = new Set([PATCHES.searchAttributes, PATCHES.placement, PATCHES.failover, PATCHES.quota, PATCHES.fenceOnFailover, PATCHES.jobIdentity, PATCHES.deadlineTimer, PATCHES.migrationRouting, PATCHES.placementActions, PATCHES.servingEndpoint, PATCHES.siteQueues]);
