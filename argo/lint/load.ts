// Loading Argo YAML: every document of a file is parsed with its line positions kept, so each later
// error (schema or semantic) can name `templates.<name>…` and the YAML line it comes from.
import { readInput, readProblem } from '../../config/input-file.js';
import { LineCounter, parseAllDocuments, isAlias, isCollection, isMap, isNode, isScalar, visit, type Document } from 'yaml';
import { InputError, formatIssue, formatIssues, type InputIssue } from '../../contract/input-error.js';
import { keyProblems } from '../../contract/parse.js';
import { MAX_TEXT_BYTES, yamlLimitProblem } from '../../contract/limits.js';

export { formatIssue, formatIssues };

/** An issue in an Argo file; it always names its file, so it prints as `file:line: path: message`. */
export interface ArgoIssue extends InputIssue {
  source: string;
  /** e.g. `templates.main.steps[0][1].template` or `spec.entrypoint` */
  path: string;
}

export type Json = Record<string, unknown>;

export interface ArgoDocument {
  source: string;
  kind: string;
  name: string;
  value: Json;
  /** Line of a path (raw segments) in the source, or of its nearest existing ancestor. */
  lineOf(path: (string | number)[]): number | undefined;
  /** A path as users read it: spec.templates[3] becomes templates.<name>. */
  describe(path: (string | number)[]): string;
}

export class ArgoValidationError extends InputError {
  declare readonly issues: ArgoIssue[];

  constructor(issues: ArgoIssue[]) {
    super('Argo', issues);
    this.name = 'ArgoValidationError';
  }
}

const NAMED_LISTS = new Set(['templates', 'tasks', 'parameters', 'artifacts']);

export function describePath(value: unknown, path: (string | number)[]): string {
  let out = '';
  let cur: unknown = value;
  let start = 0;
  // Inside spec (or a CronWorkflow's spec.workflowSpec), "templates.x" is what Argo's validator prints.
  if (path[0] === 'spec' && path[1] === 'templates') {
    cur = (value as Json).spec;
    start = 1;
  } else if (path[0] === 'spec' && path[1] === 'workflowSpec' && path[2] === 'templates') {
    cur = ((value as Json).spec as Json).workflowSpec;
    start = 2;
  }
  for (let i = start; i < path.length; i++) {
    const seg = path[i]!;
    const parentKey = path[i - 1];
    const next: unknown = cur && typeof cur === 'object' ? (cur as Record<string | number, unknown>)[seg] : undefined;
    if (typeof seg === 'number') {
      const name = next && typeof next === 'object' ? (next as Json).name : undefined;
      out += typeof name === 'string' && typeof parentKey === 'string' && NAMED_LISTS.has(parentKey) ? `.${name}` : `[${seg}]`;
    } else out += `${out ? '.' : ''}${seg}`;
    cur = next;
  }
  return out;
}

function documentLines(doc: Document, counter: LineCounter) {
  return (path: (string | number)[]): number | undefined => {
    for (let n = path.length; n >= 0; n--) {
      // A mapping key is reported on its own line (its value may start on the next one).
      const parent = n > 0 ? doc.getIn(path.slice(0, n - 1), true) : undefined;
      if (isMap(parent)) {
        const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === path[n - 1]);
        if (pair && isScalar(pair.key) && pair.key.range) return counter.linePos(pair.key.range[0]).line;
      }
      const node = doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) return counter.linePos(node.range[0]).line;
    }
    return undefined;
  };
}

export interface LoadResult {
  documents: ArgoDocument[];
  /** Documents that are not Argo objects (e.g. a PersistentVolumeClaim shipped alongside). */
  skipped: { source: string; kind: string; line?: number }[];
  issues: ArgoIssue[];
}

/**
 * Go's YAML decoder (which Argo uses) accepts a multi-line quoted scalar in a flow sequence whose
 * closing quote sits at the key's indentation, e.g. `args: ["\n  cd x &&\n  make\n      "]`; the
 * `yaml` package rejects it as under-indented. Indenting such a closing line like the line above it
 * changes no value (leading blanks of a folded quoted line are dropped) and keeps line numbers.
 */
function relaxQuotedFlowIndent(text: string): string {
  const lines = text.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const m = /^(\s*)(["'][\s\]},].*)$/.exec(lines[i]!);
    if (!m) continue;
    const prev = lines[i - 1]!;
    const prevIndent = /^\s*/.exec(prev)![0];
    if (prev.trim() && prevIndent.length > m[1]!.length) lines[i] = prevIndent + m[2];
  }
  return lines.join('\n');
}

/** Alias expansions allowed per document before it counts as a resource exhaustion ("billion laughs") attack. */
const MAX_ALIAS_COUNT = 1000;

function aliasMessage(raw: string): string {
  return /excessive alias count/i.test(raw) ? `YAML aliases expand beyond ${MAX_ALIAS_COUNT} nodes (refused as a resource exhaustion attack)` : `YAML alias: ${raw.split('\n')[0]}`;
}

/** The line of the alias that makes a document blow up: the first one naming a collection that itself holds aliases, else the first. */
function aliasLine(doc: Document, counter: LineCounter): number | undefined {
  const anchors = new Map<string, unknown>();
  let first: number | undefined;
  let nested: number | undefined;
  visit(doc, {
    Node(_k, node) {
      if (isNode(node) && !isAlias(node) && node.anchor) anchors.set(node.anchor, node);
    },
    Alias(_k, node) {
      const line = node.range ? counter.linePos(node.range[0]).line : undefined;
      first ??= line;
      const target = anchors.get(node.source);
      let holdsAlias = false;
      if (isCollection(target)) visit(target, { Alias: () => void (holdsAlias = true) });
      if (holdsAlias && nested === undefined) nested = line;
    },
  });
  return nested ?? first;
}

// uniqueKeys off: yaml's own check is quadratic in a mapping's size (a 10k-key mapping took seconds);
// keyProblems() (contract/parse.ts) does the same check in one pass, with the line, in loadArgoText.
function parseDocs(text: string, counter: LineCounter) {
  return parseAllDocuments(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: false, strict: false });
}

/** Parses every document of a YAML text; YAML syntax errors come back as issues with lines. */
/**
 * Kinds under argoproj.io that are not workflows: Argo Workflows' own helpers (an executor plugin's
 * manifest, the controller's task sets), Argo Events, Argo CD and Argo Rollouts. A directory of
 * manifests holds them beside workflows; `argo lint` passes them over, and so does Tandem, with a
 * note. Any other argoproj.io kind is still checked (a misspelt `kind: Workflw` is an error).
 */
const OTHER_ARGOPROJ_KINDS = new Set([
  'ExecutorPlugin', 'WorkflowTaskSet', 'WorkflowTaskResult', 'WorkflowArtifactGCTask',
  'EventSource', 'Sensor', 'EventBus',
  'Application', 'ApplicationSet', 'AppProject',
  'Rollout', 'AnalysisTemplate', 'ClusterAnalysisTemplate', 'AnalysisRun', 'Experiment',
]);

export function loadArgoText(text: string, source: string): LoadResult {
  // Depth and size before any recursive step (contract/limits.ts): a deep text killed the process.
  const limit = yamlLimitProblem(text);
  if (limit) return { documents: [], skipped: [], issues: [{ source, path: '', message: limit.message, line: limit.line }] };
  let counter = new LineCounter();
  let docs = parseDocs(text, counter);
  if (Array.isArray(docs) && docs.some((d) => d.errors.length > 0)) {
    const relaxedCounter = new LineCounter();
    const relaxed = parseDocs(relaxQuotedFlowIndent(text), relaxedCounter);
    if (Array.isArray(relaxed) && relaxed.every((d) => d.errors.length === 0)) {
      docs = relaxed;
      counter = relaxedCounter;
    }
  }
  const out: LoadResult = { documents: [], skipped: [], issues: [] };
  const list = Array.isArray(docs) ? docs : [];
  if (!Array.isArray(docs)) {
    out.issues.push({ source, path: '', message: 'empty YAML stream' });
    return out;
  }
  for (const doc of list) {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) out.issues.push({ source, path: '', message: e.message.split('\n')[0]!, line: counter.linePos(e.pos[0]).line });
      continue;
    }
    const badKeys = keyProblems(doc, counter);
    if (badKeys.length) {
      out.issues.push(...badKeys.map((i) => ({ ...i, source })));
      continue;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (e) {
      // The yaml package refuses an alias bomb (or a broken alias) without a position: name the alias.
      out.issues.push({ source, path: '', message: aliasMessage((e as Error).message), line: aliasLine(doc, counter) ?? (doc.contents?.range ? counter.linePos(doc.contents.range[0]).line : undefined) });
      continue;
    }
    if (value === null || value === undefined) continue;
    const line = doc.contents?.range ? counter.linePos(doc.contents.range[0]).line : undefined;
    if (typeof value !== 'object' || Array.isArray(value)) {
      out.issues.push({ source, path: '', message: 'an Argo document must be a mapping', line });
      continue;
    }
    const v = value as Json;
    const kind = typeof v.kind === 'string' ? v.kind : '';
    const apiVersion = typeof v.apiVersion === 'string' ? v.apiVersion : '';
    if (kind && apiVersion && (!apiVersion.startsWith('argoproj.io/') || OTHER_ARGOPROJ_KINDS.has(kind))) {
      out.skipped.push({ source, kind, line });
      continue;
    }
    const meta = (v.metadata ?? {}) as Json;
    const lineOf = documentLines(doc, counter);
    out.documents.push({
      source,
      kind,
      name: String(meta.name ?? meta.generateName ?? ''),
      value: v,
      lineOf,
      describe: (path) => describePath(v, path),
    });
  }
  return out;
}

export function loadArgoFile(path: string): LoadResult {
  let text: string;
  try {
    text = readInput(path, MAX_TEXT_BYTES).toString('utf8');
  } catch (e) {
    // An issue like any other (lint goes on with the other files), not Node's ENOENT text.
    return { documents: [], skipped: [], issues: [{ source: path, path: '', message: `cannot read ${path}: ${readProblem(e)}` }] };
  }
  return loadArgoText(text, path);
}
