// What the lease wrapper (programs/fence.ts, a script) and the watcher (activities/recovery.ts) agree on.
/** Exit code of a job stopped by its lease. */
export const FENCED_EXIT_CODE = 75;
/** Written by the wrapper when it fences, so that a program that exits 75 on its own is not taken for fenced. */
export const fencedMarker = (leaseFile: string) => `${leaseFile}.fenced`;
/**
 * How long the lease file may stay unreadable before the job is stopped. It holds the last expiry read
 * meanwhile, so this never extends a lease: contract/failover.ts's margin does not depend on it.
 */
export const DEFAULT_UNREADABLE_GRACE_MS = 2000;
