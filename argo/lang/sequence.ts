// withSequence's range as Argo's controller reads it (workflow/controller/operator.go expandSequence),
// and the most items one loop may have. One home for the interpreter (which expands the items) and
// the linter (which checks literal values before anything starts). Sandbox-safe: no Node built-ins.

/**
 * The most items one loop (withItems, withParam or withSequence) may have: twice the largest loop
 * measured end to end (50,000 items in 100 child workflows, docs/argo-scale.md). A count from a typo
 * or a hostile parameter (`count: "100000000"`) would otherwise build its items in the workflow's
 * memory and time out every workflow task, retried without end; Argo has no bound of its own and
 * stops at etcd's object size instead.
 */
export const MAX_LOOP_ITEMS = 100_000;

/** A step or task that runs once per item (withItems, withParam or withSequence). */
export const isLoopStep = (step: Record<string, unknown>): boolean => step.withItems !== undefined || step.withParam !== undefined || step.withSequence !== undefined;

export type SequenceRange = { start: number; end: number } | { empty: true };

/**
 * Go's strconv.Atoi as Argo applies it to start, end and count: an optional sign and decimal digits,
 * nothing else ("1.5", "1e3", " 7" and "" are errors). Values are substituted before this.
 */
function atoi(field: string, v: unknown): number {
  const text = typeof v === 'number' ? String(v) : typeof v === 'string' ? v : JSON.stringify(v);
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new SequenceError(`withSequence.${field}: ${JSON.stringify(text)} is not a whole number`);
  return Number(text);
}

export class SequenceError extends Error {}

/**
 * The sequence's first and last value (inclusive; counting down when end < start), or empty for a
 * count of 0. As Argo: start defaults to 0; end wins over count when both are given at run time (the
 * linter refuses both); a negative count counts down from start to start + count - 1. Throws
 * SequenceError naming the field: not a whole number, neither end nor count, or more than
 * MAX_LOOP_ITEMS items.
 */
export function sequenceRange(seq: Record<string, unknown>): SequenceRange {
  const start = seq.start !== undefined ? atoi('start', seq.start) : 0;
  let end: number;
  if (seq.end !== undefined) end = atoi('end', seq.end);
  else if (seq.count !== undefined) {
    const count = atoi('count', seq.count);
    if (count === 0) return { empty: true };
    end = start + count - 1;
  } else throw new SequenceError('withSequence: neither end nor count was specified');
  const items = Math.abs(end - start) + 1;
  if (items > MAX_LOOP_ITEMS) throw new SequenceError(`withSequence: ${items} items (start ${start}, end ${end}), over the limit of ${MAX_LOOP_ITEMS} a loop may have`);
  return { start, end };
}

/** A loop of `n` items is over MAX_LOOP_ITEMS: what to say (`what` names the loop's field). */
export function loopTooLarge(what: string, n: number): string | undefined {
  return n > MAX_LOOP_ITEMS ? `${what}: ${n} items, over the limit of ${MAX_LOOP_ITEMS} a loop may have` : undefined;
}
