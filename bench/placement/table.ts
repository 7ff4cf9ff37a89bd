// What the bench tables share: number formatting, the all-policies-off baseline the rows build on, and
// Tandem's default order as a row.
import { policy, type PolicyConfig } from '../../placement/index.js';

export const fmt = (x: number, d = 2) => x.toFixed(d);
export const hours = (s: number) => fmt(s / 3600, 1);

/** Every switchable policy off: a row turns on exactly what it names. */
export const ALL_OFF = { quotas: false, fairShare: false, qos: false, preemption: false, topology: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;

/** Tandem's default queue order as a table-(a) row: 'score' with fair share, the given backfill, and any override (e.g. `starvation: 0`). */
export const tandemDefault = (backfill: PolicyConfig['backfill'], overrides: Partial<PolicyConfig> = {}) => policy({ ...ALL_OFF, order: 'score', fairShare: true, backfill, ...overrides });
