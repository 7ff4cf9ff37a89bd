// Argo's parameter values are `AnyString` (pkg/apis/workflow/v1alpha1/anystring.go): its JSON decoder
// keeps a string, writes a number or boolean as text, and leaves anything else — a list, a mapping —
// as the empty string, without an error. So `value: []` in a real example
// (workflow-event-binding/github-path-filter-workflowtemplate.yaml) is accepted by `argo lint` and runs
// with "". Tandem reads the same documents the same way, and says so in a note instead of in silence.
import type { Json } from './load.js';

/** A Parameter's AnyString fields, and ValueFrom's. */
const FIELDS = ['value', 'default', 'description'] as const;
/** Subtrees that are not Argo's types: a plugin's body is the plugin's own, a manifest or source is text. */
const OPAQUE = new Set(['plugin', 'manifest', 'source', 'metadata']);

export interface AnyStringChange {
  path: (string | number)[];
  /** What the document held: `a list` or `a mapping`. */
  was: string;
}

const kindOf = (v: unknown) => (Array.isArray(v) ? 'a list' : 'a mapping');
const nonScalar = (v: unknown) => v !== null && typeof v === 'object';

/**
 * Replaces, in place, every list or mapping where Argo's decoder expects an AnyString (a Parameter's
 * value, default, description and enum entries, a valueFrom's default) by "", as Argo's decoder does,
 * and returns where it did. Runs before the schema check, which then sees what Argo sees.
 */
export function decodeAnyStrings(doc: Json): AnyStringChange[] {
  const changes: AnyStringChange[] = [];
  const visit = (v: unknown, path: (string | number)[]) => {
    if (Array.isArray(v)) return v.forEach((x, i) => visit(x, [...path, i]));
    if (!v || typeof v !== 'object') return;
    for (const [k, child] of Object.entries(v as Json)) {
      if (OPAQUE.has(k)) continue;
      if (k === 'parameters' && Array.isArray(child)) child.forEach((p, i) => parameter(p, [...path, k, i]));
      visit(child, [...path, k]);
    }
  };
  const parameter = (p: unknown, path: (string | number)[]) => {
    if (!p || typeof p !== 'object' || Array.isArray(p)) return;
    const param = p as Json;
    for (const f of FIELDS) {
      if (nonScalar(param[f])) {
        changes.push({ path: [...path, f], was: kindOf(param[f]) });
        param[f] = '';
      }
    }
    if (Array.isArray(param.enum)) {
      param.enum.forEach((e, i) => {
        if (nonScalar(e)) {
          changes.push({ path: [...path, 'enum', i], was: kindOf(e) });
          (param.enum as unknown[])[i] = '';
        }
      });
    }
    const from = param.valueFrom;
    if (from && typeof from === 'object' && !Array.isArray(from) && nonScalar((from as Json).default)) {
      changes.push({ path: [...path, 'valueFrom', 'default'], was: kindOf((from as Json).default) });
      (from as Json).default = '';
    }
  };
  visit(doc, []);
  return changes;
}
