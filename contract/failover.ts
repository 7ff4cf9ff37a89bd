// Failover timing rules shared by the SDK (checked at launch) and the workflow (checked again there).
/** How long a site may stay unobservable before its job is given up there, by default. */
export const DEFAULT_GRACE_MS = 60_000;
/** How far inside the grace window a failover job's lease must end (the fence's SIGKILL grace and polling). */
export const LEASE_MARGIN_MS = 3000;

export const defaultLeaseMs = (graceMs: number) => Math.floor(graceMs / 2);

/** Renewals of a lease per TTL: a watch observes (and so renews) a job under a lease at least this often,
 *  however long it has been queued, so that one slow or failed observation does not let the lease lapse. */
export const RENEWALS_PER_LEASE = 3;

/** The longest pause between two observations of a job under a lease (never below 200 ms). */
export const leasePollCapMs = (leaseTtlMs: number) => Math.max(200, Math.floor(leaseTtlMs / RENEWALS_PER_LEASE));

/** Why these timings could let two training jobs of one pipeline run at once, or undefined. */
export function leaseProblem(graceMs: number, leaseTtlMs: number): string | undefined {
  if (leaseTtlMs + LEASE_MARGIN_MS <= graceMs) return undefined;
  return `the failover lease (${leaseTtlMs} ms) must end at least ${LEASE_MARGIN_MS} ms inside the grace window (${graceMs} ms), or two training jobs could run at once`;
}
