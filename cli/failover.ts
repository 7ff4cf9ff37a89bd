// `tandem run --failover`: turns the command line's failover options into the pipeline's tuning.
import { InvalidArgumentError } from 'commander';
import { parseDuration } from '../contract/duration.js';
import type { FailoverTuning } from '../contract/tuning.js';

export interface FailoverFlags {
  /** true: every site the worker has (TANDEM_SITES_FILE); a string: these sites, in preference order. */
  failover?: boolean | string;
  failoverGrace?: string;
  maxFailovers?: string;
}

export function failoverTuning(o: FailoverFlags): FailoverTuning | undefined {
  // `--failover ""` names no site: refused below, not read as "no failover".
  if (o.failover === undefined || o.failover === false) {
    if (o.failoverGrace || o.maxFailovers) throw new InvalidArgumentError('--failover-grace and --max-failovers need --failover');
    return undefined;
  }
  const out: FailoverTuning = {};
  if (typeof o.failover === 'string') {
    const sites = o.failover.split(',').map((s) => s.trim()).filter(Boolean);
    if (!sites.length) throw new InvalidArgumentError('--failover takes a comma-separated list of site names, e.g. --failover zurich,lugano');
    out.sites = sites;
  }
  if (o.failoverGrace !== undefined) {
    const ms = parseDuration(o.failoverGrace);
    if (ms === undefined || ms <= 0) throw new InvalidArgumentError(`--failover-grace ${JSON.stringify(o.failoverGrace)} is not a duration such as 90s or 5m`);
    out.graceMs = ms;
  }
  if (o.maxFailovers !== undefined) {
    const n = Number(o.maxFailovers);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`--max-failovers ${JSON.stringify(o.maxFailovers)} must be a whole number ≥ 0`);
    out.maxFailovers = n;
  }
  return out;
}
