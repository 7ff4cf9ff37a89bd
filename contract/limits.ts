// Resource limits for untrusted YAML and JSON text (issue #27): how deep collections may nest and how
// large a text may be, checked BEFORE the text reaches a recursive parser or walker. The yaml package's
// composer and `toJS`, zod and every recursive walker of the code descend once per level: a pipeline
// text of 20 000 nested `{"a":` (well under the executor plugin's 4 MiB body) exhausted V8's heap and
// killed the process. Both checks here are iterative, linear in the text, and never throw on any input:
// `Parser` (yaml's CST parser) keeps its own stack, and the JSON scanner only counts brackets outside
// strings. Sandbox-safe (no Node built-ins).
import { Parser } from 'yaml';

/** Deepest nesting of collections a Tandem or Argo document may have (real ones stay under 20). */
export const MAX_NESTING = 64;
/** Largest YAML/JSON text a loader takes (a pipeline spec, an Argo file, a policy, a request body). */
export const MAX_TEXT_BYTES = 16 * 1024 * 1024;

export interface LimitProblem {
  message: string;
  /** 1-based line of the place the limit was crossed, when known. */
  line?: number;
}

const lineAt = (text: string, offset: number) => {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
};

const tooLarge = (bytes: number, max: number): LimitProblem => ({ message: `the text is ${bytes} bytes, over the limit of ${max} bytes` });
const tooDeep = (max: number, line?: number): LimitProblem => ({ message: `collections nest deeper than ${max} levels (refused: a resource exhaustion attack or a broken file)`, line });

interface CstNode {
  type?: string;
  offset?: number;
  value?: CstNode;
  key?: CstNode | null;
  items?: { key?: CstNode | null; value?: CstNode }[];
}

/** What is wrong with a YAML (or JSON) text's size or depth, or undefined: run it before any parse. */
export function yamlLimitProblem(text: string, maxDepth = MAX_NESTING, maxBytes = MAX_TEXT_BYTES): LimitProblem | undefined {
  if (text.length > maxBytes) return tooLarge(text.length, maxBytes);
  // Flow brackets are counted first: linear and exact enough to refuse `[[[[…` without building a CST.
  const flow = jsonLimitProblem(text, maxDepth * 4, maxBytes);
  if (flow) return { ...flow, message: tooDeep(maxDepth).message };
  for (const doc of new Parser().parse(text)) {
    const stack: { node: CstNode; depth: number }[] = [{ node: doc as CstNode, depth: 0 }];
    while (stack.length) {
      const { node, depth } = stack.pop()!;
      const collection = node.type === 'block-map' || node.type === 'block-seq' || node.type === 'flow-collection';
      const d = collection ? depth + 1 : depth;
      if (d > maxDepth) return tooDeep(maxDepth, node.offset === undefined ? undefined : lineAt(text, node.offset));
      if (node.value) stack.push({ node: node.value, depth: d });
      for (const it of node.items ?? []) {
        if (it.key) stack.push({ node: it.key, depth: d });
        if (it.value) stack.push({ node: it.value, depth: d });
      }
    }
  }
  return undefined;
}

/**
 * What is wrong with a JSON text's size or depth, or undefined. Counts `[`/`{` outside strings: exact
 * for JSON; for YAML flow collections an over-count at worst (a bracket inside a plain scalar).
 */
export function jsonLimitProblem(text: string, maxDepth = MAX_NESTING, maxBytes = MAX_TEXT_BYTES): LimitProblem | undefined {
  if (text.length > maxBytes) return tooLarge(text.length, maxBytes);
  let depth = 0;
  let quote = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quote) {
      if (c === 92 /* \ */) i++;
      else if (c === quote) quote = 0;
    } else if (c === 34 /* " */) quote = c;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > maxDepth) return tooDeep(maxDepth, lineAt(text, i));
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth = Math.max(0, depth - 1);
  }
  return undefined;
}

/** JSON.parse with the limits; throws a SyntaxError-like Error whose message says which limit. */
export function parseJsonLimited(text: string, maxDepth = MAX_NESTING, maxBytes = MAX_TEXT_BYTES): unknown {
  const p = jsonLimitProblem(text, maxDepth, maxBytes);
  if (p) throw new LimitError(p.line === undefined ? p.message : `line ${p.line}: ${p.message}`);
  return JSON.parse(text);
}

export class LimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LimitError';
  }
}
