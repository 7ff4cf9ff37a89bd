// The one validation boundary for pipeline specs: text (YAML or JSON, which is YAML) or an object in,
// a fully defaulted PipelineSpec or a SpecError naming every bad field (and its line) out.
import { LineCounter, parseDocument, isNode, type Document } from 'yaml';
import type { z } from 'zod';
import { PipelineSpecSchema, type PipelineSpec } from './pipeline.js';
import { InputError, type InputIssue, type InputKind } from './input-error.js';

export type SpecIssue = InputIssue;

/** A YAML/JSON file that does not match its schema: a pipeline spec, a sites file, a quotas file (`what`). */
export class SpecError extends InputError {
  declare readonly source: string;

  constructor(source: string, issues: SpecIssue[], what: InputKind = 'pipeline spec') {
    super(what, issues, { source });
    this.name = 'SpecError';
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');
}

function lineOf(doc: Document | undefined, counter: LineCounter | undefined, path: readonly PropertyKey[]): number | undefined {
  if (!doc || !counter) return undefined;
  // Walk up to the nearest ancestor that exists (a missing field is reported at its parent).
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n) as (string | number)[], true);
    if (isNode(node) && node.range) return counter.linePos(node.range[0]).line;
  }
  return undefined;
}

function issuesFrom(error: z.ZodError, doc?: Document, counter?: LineCounter): SpecIssue[] {
  return error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const at = [...issue.path, issue.keys[0]!];
      return { path: formatPath(at), message: `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`, line: lineOf(doc, counter, at) };
    }
    return { path: formatPath(issue.path), message: issue.message, line: lineOf(doc, counter, issue.path) };
  });
}

/** Validates an already-parsed object (SDK callers). */
export function validatePipelineSpec(input: unknown, source = 'spec'): PipelineSpec {
  const result = PipelineSpecSchema.safeParse(input);
  if (!result.success) throw new SpecError(source, issuesFrom(result.error));
  return result.data;
}

/** Parses YAML or JSON text against any schema; errors name the field path and its line. */
export function parseYamlWith<S extends z.ZodType>(schema: S, text: string, source: string, what: string, hint: string): z.output<S> {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new SpecError(
      source,
      doc.errors.map((e) => ({ path: '', message: e.message.split('\n')[0]!, line: e.linePos?.[0]?.line })),
      what,
    );
  }
  const value: unknown = doc.toJS();
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SpecError(source, [{ path: '', message: `a ${what} must be a mapping ${hint}` }], what);
  }
  const result = schema.safeParse(value);
  if (!result.success) throw new SpecError(source, issuesFrom(result.error, doc, counter), what);
  return result.data;
}

/** Parses YAML or JSON text; `source` names the file in error messages. */
export function parsePipelineSpec(text: string, source = 'spec'): PipelineSpec {
  return parseYamlWith(PipelineSpecSchema, text, source, 'pipeline spec', 'with at least "name"');
}
