// Failover timing rules shared by the SDK (checked at launch) and the workflow (checked again there).
/** How long a site may stay unobservable before its job is given up there, by default. */
export const DEFAULT_GRACE_MS = 60_000;
/** How far inside the grace window a failover job's lease must end (the fence's SIGKILL grace and polling). */
export const LEASE_MARGIN_MS = 3000;

export const defaultLeaseMs = (graceMs: number) => Math.floor(graceMs / 2);

/** Why these timings could let two training jobs of one pipeline run at once, or undefined. */
export function leaseProblem(graceMs: number, leaseTtlMs: number): string | undefined {
  if (leaseTtlMs + LEASE_MARGIN_MS <= graceMs) return undefined;
  return `the failover lease (${leaseTtlMs} ms) must end at least ${LEASE_MARGIN_MS} ms inside the grace window (${graceMs} ms), or two training jobs could run at once`;
}
