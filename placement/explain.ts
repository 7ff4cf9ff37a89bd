// Placement decisions as a person reads them: where (site/partition, node count), why, when and at
// what price. Times are relative to `now` here ("in 12 min"); the wall-clock time a reservation begins
// needs the reader's timezone, which only the caller has (the activity passes `clock`). Pure.
import type { Decision } from './types.js';

/** A span of seconds for people: "45 s", "12 min", "2 h 5 min", "3 d 4 h". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** "in 12 min", or "now" for a time that has come. */
export function inTime(seconds: number): string {
  return seconds <= 0.5 ? 'now' : `in ${duration(seconds)}`;
}

export interface ExplainOptions {
  /** The engine's clock (seconds), as the decision was made against. */
  now: number;
  /** Renders an engine time (seconds) as the reader's wall-clock time, e.g. "14:05". */
  clock(seconds: number): string;
  /** How to name a preemption victim (its run, its priority), by engine job id. */
  victim?(jobId: string): string;
}

const price = (p: number) => (p > 0 ? `; estimated price ${p}` : '');

/** One line for the run's timeline: no engine epochs, no topology the inventory does not have. */
export function explainDecision(d: Decision, o: ExplainOptions): string {
  switch (d.kind) {
    case 'start':
      return d.explanation + price(d.price);
    case 'preempt': {
      const prefix = `preempt ${d.victims.join(', ')} and start on `;
      const rest = d.explanation.startsWith(prefix) ? d.explanation.slice(prefix.length) : d.explanation;
      return `preempt ${d.victims.map((v) => o.victim?.(v) ?? v).join(', ')} to start on ${rest}${price(d.price)}`;
    }
    case 'reserve': {
      const when = `from ${o.clock(d.at)} (${inTime(d.at - o.now)})`;
      if (!d.placement) return `waits ${when}: ${d.explanation}`;
      const p = d.placement;
      const partitions = p.cluster === p.site ? `${p.site}/${p.partition}` : `${p.site}/${p.cluster}/${p.partition}`;
      return `reserved ${p.nodes.length} node(s) on ${partitions} ${when}: the capacity it needs is busy until then (running jobs end by their estimates)${price(d.price)}`;
    }
    case 'reject':
      return d.explanation;
  }
}
