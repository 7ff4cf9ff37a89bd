// The pipeline's patch ids. A run started before a patch replays the old path, so an id is never
// renamed or reused once it has shipped.

/** Patch ids, newest last; each has recorded histories on both sides in test/histories/. */
export const PATCHES = { searchAttributes: 'tandem-search-attributes', placement: 'tandem-placement', failover: 'tandem-failover', quota: 'tandem-quota', fenceOnFailover: 'tandem-fence-on-failover' } as const;
