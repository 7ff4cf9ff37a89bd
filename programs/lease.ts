// What the lease wrapper (runtime/fence.ts, a script) and the watcher (activities/recovery.ts) agree on.
/** Exit code of a job stopped by its lease. */
export const FENCED_EXIT_CODE = 75;
/** Written by the wrapper when it fences, so that a program that exits 75 on its own is not taken for fenced. */
export const fencedMarker = (leaseFile: string) => `${leaseFile}.fenced`;
