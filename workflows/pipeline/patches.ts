// The pipeline's (and its quota ledger's) patch ids. A run started before a patch replays the old path, so an id is never
// renamed or reused once it has shipped.

/** Patch ids, newest last; each has recorded histories on both sides in test/histories/. */
export const PATCHES = { searchAttributes: 'tandem-search-attributes', placement: 'tandem-placement', failover: 'tandem-failover', quota: 'tandem-quota', fenceOnFailover: 'tandem-fence-on-failover', jobIdentity: 'tandem-job-identity', deadlineTimer: 'tandem-deadline-timer', ledgerReconcile: 'tandem-ledger-reconcile', migrationRouting: 'tandem-migration-routing', placementActions: 'tandem-placement-actions', servingEndpoint: 'tandem-serving-endpoint', siteQueues: 'tandem-site-queues', deploySaga: 'tandem-deploy-saga' } as const;
