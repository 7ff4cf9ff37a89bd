// The one validation boundary for pipeline specs: text (YAML or JSON, which is YAML) or an object in,
// a fully defaulted PipelineSpec or a SpecError naming every bad field (and its line) out.
import { LineCounter, parseDocument, isNode, isPair, isScalar, isSeq, visit, type Document, type YAMLError } from 'yaml';
import type { z } from 'zod';
import { PipelineSpecSchema, type PipelineSpec } from './pipeline.js';
import { InputError, type InputIssue, type InputKind } from './input-error.js';
import { yamlLimitProblem } from './limits.js';

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
    // A bad key of a record (an env variable name): zod says only "Invalid key in record"; its own
    // issues say why, and the path already ends with the key (`stages.train.env.LD_PRELOAD`).
    const message = issue.code === 'invalid_key' && issue.issues.length ? issue.issues.map((i) => i.message).join('; ') : issue.message;
    return { path: formatPath(issue.path), message, line: lineOf(doc, counter, issue.path) };
  });
}

/**
 * Keys no Tandem file may have, at their line: a key that repeats within one mapping, and `__proto__`
 * (zod drops it without a word, so a quota for tenant `__proto__` would silently not exist). yaml's
 * own `uniqueKeys` check compares every new key with all earlier ones of its map (quadratic: 100k env
 * entries took 105 s), so parsing leaves it off and this one pass remembers the keys of each map in a
 * Set instead. Same equality as yaml's: scalar keys by value (`1` and `"1"` differ, as there); a
 * collection key only equals itself, which cannot repeat.
 */
export function keyProblems(doc: Document, counter: LineCounter): SpecIssue[] {
  const issues: SpecIssue[] = [];
  visit(doc, {
    Map(_, map, ancestors) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        if (!isScalar(key)) continue;
        const duplicate = seen.has(key.value);
        seen.add(key.value);
        if (!duplicate && key.value !== '__proto__') continue;
        // The field as users read it: the keys (and sequence indices) from the root down to this one.
        const at: PropertyKey[] = [];
        ancestors.forEach((a, i) => {
          if (isPair(a)) at.push(isScalar(a.key) ? String(a.key.value) : '?');
          else if (isSeq(a)) at.push(a.items.indexOf((ancestors[i + 1] ?? map) as never));
        });
        at.push(String(key.value));
        const message = duplicate ? 'Map keys must be unique: this key appears earlier in the same mapping' : 'a key may not be named "__proto__"';
        issues.push({ path: formatPath(at), message, line: key.range ? counter.linePos(key.range[0]).line : undefined });
      }
    },
  });
  return issues;
}

/** Alias expansions a Tandem file may use (yaml's default). */
const MAX_ALIAS_COUNT = 100;

function firstAliasLine(doc: Document, counter: LineCounter): number | undefined {
  let line: number | undefined;
  visit(doc, {
    Alias(_k, node) {
      if (line === undefined && node.range) line = counter.linePos(node.range[0]).line;
    },
  });
  return line;
}

/** Validates an already-parsed object (SDK callers). */
export function validatePipelineSpec(input: unknown, source = 'spec'): PipelineSpec {
  const result = PipelineSpecSchema.safeParse(input);
  if (!result.success) throw new SpecError(source, issuesFrom(result.error));
  return result.data;
}

/**
 * A YAML syntax error in the user's words: the line is reported beside it, so yaml's own "at line N,
 * column M:" goes, and a second document is said as such (yaml's text points at an API of its own).
 */
function yamlErrorText(e: YAMLError, what: string): string {
  if (e.code === 'MULTIPLE_DOCS') return `a second YAML document starts here ("---"): the file may hold only one ${what}`;
  return e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}

/** Parses YAML or JSON text against any schema; errors name the field path and its line. */
export function parseYamlWith<S extends z.ZodType>(schema: S, text: string, source: string, what: string, hint: string): z.output<S> {
  // Depth and size first: yaml's composer and toJS recurse per level (contract/limits.ts).
  const limit = yamlLimitProblem(text);
  if (limit) throw new SpecError(source, [{ path: '', message: limit.message, line: limit.line }], what);
  const counter = new LineCounter();
  // uniqueKeys off: keyProblems() does the same check in linear time.
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: true, uniqueKeys: false });
  if (doc.errors.length > 0) {
    throw new SpecError(
      source,
      doc.errors.map((e) => ({ path: '', message: yamlErrorText(e, what), line: e.linePos?.[0]?.line })),
      what,
    );
  }
  const badKeys = keyProblems(doc, counter);
  if (badKeys.length > 0) throw new SpecError(source, badKeys, what);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    // yaml refuses an alias bomb or an alias without its anchor by throwing, without a position.
    const raw = (e as Error).message.split('\n')[0]!;
    const message = /excessive alias count/i.test(raw) ? `YAML aliases expand beyond ${MAX_ALIAS_COUNT} nodes (refused as a resource exhaustion attack)` : `YAML alias: ${raw}`;
    throw new SpecError(source, [{ path: '', message, line: firstAliasLine(doc, counter) }], what);
  }
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
