// withItems / withParam / withSequence: a step or task that runs once per item, and how the items'
// results add up to the loop node's.
import { stringify, substitute, substituteDeep, type Scope } from '../../argo/lang/tags.js';
import type { Json, NodeOutputs, Phase } from '../../argo/lang/types.js';
import { emptyOutputs, failed, tryJson, UserError, type NodeResult } from './model.js';
import { loopTooLarge, sequenceRange, SequenceError, type SequenceRange } from '../../argo/lang/sequence.js';

/**
 * The items a step loops over (substituted), or undefined when it is not a loop. `checked`
 * (ARGO_PATCHES.loopChecks): withSequence's values are read as Argo reads them (whole numbers, end or
 * count required) and no loop may have more than MAX_LOOP_ITEMS items; each is a UserError (the
 * node's Error) instead of items made up from NaN, two items from a missing count, or a count that
 * builds its items until the workflow task times out. Runs recorded before it replay unchecked.
 */
export function expandItems(step: Json, scope: Scope, checked = true): unknown[] | undefined {
  const bounded = (what: string, items: unknown[]) => {
    const problem = checked ? loopTooLarge(what, items.length) : undefined;
    if (problem) throw new UserError(problem);
    return items;
  };
  if (step.withItems !== undefined) return bounded('withItems', substituteDeep(step.withItems as unknown[], scope));
  if (step.withParam !== undefined) {
    const text = substitute(String(step.withParam), scope);
    let list: unknown;
    try {
      list = JSON.parse(text);
    } catch {
      throw new UserError(`withParam value could not be parsed as a JSON list: ${text}`);
    }
    if (!Array.isArray(list)) throw new UserError(`withParam value is not a JSON list: ${text}`);
    return bounded('withParam', list);
  }
  if (step.withSequence !== undefined) {
    const seq = substituteDeep(step.withSequence as Json, scope);
    if (seq.count !== undefined && seq.end !== undefined) throw new UserError('withSequence: only one of count or end may be set');
    let start: number;
    let end: number;
    if (checked) {
      let range: SequenceRange;
      try {
        range = sequenceRange(seq);
      } catch (e) {
        if (e instanceof SequenceError) throw new UserError(e.message);
        throw e;
      }
      if ('empty' in range) return [];
      ({ start, end } = range);
    } else {
      start = seq.start !== undefined ? Number(seq.start) : 0;
      end = seq.end !== undefined ? Number(seq.end) : start + Number(seq.count ?? 0) - 1;
    }
    const out: string[] = [];
    const fmt = seq.format !== undefined ? String(seq.format) : undefined;
    const step1 = end >= start ? 1 : -1;
    for (let i = start; step1 > 0 ? i <= end : i >= end; i += step1) out.push(fmt ? printf(fmt, i) : String(i));
    return out;
  }
  return undefined;
}

/** printf for withSequence `format` (%d, %02d, %x, %s…). */
export function printf(fmt: string, n: number): string {
  return fmt.replace(/%(0?)(\d*)([dsxXo])/g, (_m, zero: string, width: string, conv: string) => {
    const s = conv === 'x' ? n.toString(16) : conv === 'X' ? n.toString(16).toUpperCase() : conv === 'o' ? n.toString(8) : String(n);
    return width ? s.padStart(Number(width), zero ? '0' : ' ') : s;
  });
}

/** One item's scope: `item`, and `item.<key>` for an object item. */
export function itemScope(scope: Scope, item: unknown): Scope {
  const s: Scope = { ...scope, item: stringify(item) };
  if (item && typeof item === 'object' && !Array.isArray(item)) for (const [k, v] of Object.entries(item)) s[`item.${k}`] = stringify(v);
  return s;
}

/** How an item appears in its node's name, `step(<i>:<label>)`, as Argo writes it. */
export function itemLabel(item: unknown): string {
  if (item && typeof item === 'object' && !Array.isArray(item)) return Object.entries(item).map(([k, v]) => `${k}:${stringify(v)}`).join(',');
  return stringify(item);
}

/**
 * The loop node's outcome: the first failed item's phase and message (Skipped when every item was),
 * `outputs.result` and each output parameter as JSON lists over the items that produced them.
 * `argo` (ARGO_PATCHES.loopAggregate): aggregated as Argo's processAggregateNodeOutputs does — only
 * Succeeded items count; each result is read as JSON (`[2,4]`, not `["2","4"]`; a result that is not
 * JSON stays a string); a parameter's list nests its values only when every one is a JSON object or
 * list (aggregatedJSONValueList); the per-item maps are key-sorted (Go marshals map keys sorted);
 * `result` is `[]` when no item produced one.
 */
export function loopOutcome(results: NodeResult[], argo = false): { phase: Phase; message?: string; outputs: NodeOutputs; itemParameters: Record<string, string>[] } {
  const outputs = emptyOutputs();
  const counted = argo ? results.filter((r) => r.phase === 'Succeeded') : results;
  const resultList = counted.filter((r) => r.outputs.result !== undefined).map((r) => r.outputs.result!);
  if (resultList.length || (argo && counted.length)) outputs.result = JSON.stringify(resultList.map((x) => (argo ? jsonItem(x) : tryJson(x))));
  const paramNames = new Set(counted.flatMap((r) => Object.keys(r.outputs.parameters)));
  for (const p of argo ? [...paramNames].sort() : paramNames) {
    const values = counted.filter((r) => p in r.outputs.parameters).map((r) => r.outputs.parameters[p]!);
    outputs.parameters[p] = argo ? aggregatedValueList(values) : JSON.stringify(values);
  }
  // Argo's aggregate: in item order, one map per item that produced any parameter.
  const itemParameters = counted.filter((r) => Object.keys(r.outputs.parameters).length > 0).map((r) => (argo ? sortedKeys(r.outputs.parameters) : { ...r.outputs.parameters }));
  const bad = results.find((r) => failed(r.phase));
  const allSkipped = results.length > 0 && results.every((r) => r.phase === 'Skipped');
  return { phase: bad ? bad.phase : allSkipped ? 'Skipped' : 'Succeeded', message: bad?.message, outputs, itemParameters };
}

/** A loop item's result as Argo's wfv1.Item reads it: any JSON value; text that is not JSON stays a string. */
function jsonItem(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

/** Argo's aggregatedJSONValueList: nested when every value is a JSON object or list, else a list of strings. */
function aggregatedValueList(values: string[]): string {
  const parsed: unknown[] = [];
  for (const v of values) {
    const x = jsonItem(v);
    if (x === null || typeof x !== 'object') return JSON.stringify(values);
    parsed.push(x);
  }
  // Go re-marshals the decoded maps with their keys sorted.
  return JSON.stringify(parsed, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));
}

function sortedKeys(m: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k]!]));
}
