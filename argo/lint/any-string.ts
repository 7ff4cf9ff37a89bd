// Argo's parameter values are `AnyString` (pkg/apis/workflow/v1alpha1/anystring.go): its JSON decoder
// keeps a string, writes a number or boolean as text, and leaves anything else — a list, a mapping —
// as the empty string, without an error. So `value: []` in a real example
// (workflow-event-binding/github-path-filter-workflowtemplate.yaml) is accepted by `argo lint` and runs
// with "". Tandem reads the same documents the same way, and says so in a note instead of in silence.
// Likewise a key written with no value (`labels:`, `parameters:`): YAML gives null, which Go's
// decoder reads as the field's zero value, i.e. as if the key were absent; Tandem drops such keys.
import type { Json } from './load.js';
import { applyTemplateDefaults } from '../lang/template-defaults.js';

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

/**
 * Deletes, in place, every mapping key whose value is null (`parameters:` with nothing after it), as
 * Go's decoder reads null as the zero value: the schema and the interpreter then see the key absent,
 * so a required field left empty is "required", not "must be of type array". List entries and a
 * plugin's own body are left as written.
 */
export function dropNullKeys(doc: Json): void {
  const visit = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (!v || typeof v !== 'object') return;
    const m = v as Json;
    for (const [k, child] of Object.entries(m)) {
      if (child === null) delete m[k];
      else if (k !== 'plugin') visit(child);
    }
  };
  visit(doc);
}

/**
 * One document as Argo reads and runs it, in place: null keys dropped and AnyString fields read (see
 * above), then its templateDefaults applied to its own templates (argo/lang/template-defaults.ts), so
 * that the schema, the semantic pass and the run all see each template as Argo's controller runs it.
 * (A WorkflowTemplate's defaults so also reach its templates when another workflow calls one by
 * templateRef, where Argo would apply the caller's: the run applies the caller's on top.)
 */
export function decodeAsArgo(doc: Json): AnyStringChange[] {
  dropNullKeys(doc);
  const changes = decodeAnyStrings(doc);
  const spec = doc.spec as Json | undefined;
  const wfSpec = doc.kind === 'CronWorkflow' ? (spec?.workflowSpec as Json | undefined) : spec;
  if (wfSpec && typeof wfSpec === 'object') applyTemplateDefaults(wfSpec);
  return changes;
}
