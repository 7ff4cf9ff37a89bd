// Lint = parse (lines kept) → Argo's JSON schema → semantic pass. One entry point for the CLI, the
// submit path and the conformance bench: nothing runs unless this returns no issues.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadArgoFile, loadArgoText, type ArgoDocument, type ArgoIssue, type Json, type LoadResult } from './load.js';
import { validateAgainstSchema } from './schema.js';
import { checkSemantics, type TemplateLibrary } from './semantic.js';
import { decodeAsArgo } from './any-string.js';

export interface LintResult {
  source: string;
  documents: ArgoDocument[];
  skipped: LoadResult['skipped'];
  issues: ArgoIssue[];
  /** What Argo accepts but reads otherwise than written (a list where a parameter value goes): said, not errors. */
  notes: ArgoIssue[];
  /** The file parsed and held no Argo document (only a ConfigMap, say): its one issue says so. */
  nothingToLint: boolean;
}

/** WorkflowTemplates and ClusterWorkflowTemplates by name, from documents and directories. */
export class Library implements TemplateLibrary {
  private readonly namespaced = new Map<string, Json>();
  private readonly cluster = new Map<string, Json>();

  add(doc: ArgoDocument): void {
    const name = String((doc.value.metadata as Json | undefined)?.name ?? '');
    if (doc.kind === 'WorkflowTemplate') this.namespaced.set(name, doc.value);
    if (doc.kind === 'ClusterWorkflowTemplate') this.cluster.set(name, doc.value);
  }

  get(name: string, clusterScope: boolean): Json | undefined {
    return clusterScope ? this.cluster.get(name) : this.namespaced.get(name);
  }

  /** Adds every template document found under a directory (recursively); invalid files are ignored. */
  addDirectory(dir: string): this {
    if (!existsSync(dir)) return this;
    return this.addFiles(yamlFilesUnder(dir));
  }

  /** Adds the template documents of these files, read as Argo reads them; a file that cannot be read or parsed adds nothing (its own lint says why). */
  addFiles(files: string[]): this {
    for (const p of files) {
      for (const d of loadArgoFile(p).documents) {
        if (d.kind !== 'WorkflowTemplate' && d.kind !== 'ClusterWorkflowTemplate') continue;
        decodeAsArgo(d.value);
        if (validateAgainstSchema(d.value).length === 0) this.add(d);
      }
    }
    return this;
  }
}

/** The YAML files under a directory, recursively, in name order (as `argo lint <dir>` takes them). */
export function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const p = join(dir, entry);
      return statSync(p).isDirectory() ? yamlFilesUnder(p) : /\.ya?ml$/.test(entry) ? [p] : [];
    });
}

/** `argo lint --kinds` names (plural or short, as Argo's CLI takes them) → the kind they select. */
const KIND_NAMES: Record<string, string> = {
  workflows: 'Workflow',
  wf: 'Workflow',
  workflowtemplates: 'WorkflowTemplate',
  wftmpl: 'WorkflowTemplate',
  cronworkflows: 'CronWorkflow',
  cronwf: 'CronWorkflow',
  clusterworkflowtemplates: 'ClusterWorkflowTemplate',
  cwftmpl: 'ClusterWorkflowTemplate',
};

/** The kinds `--kinds a,b` selects; undefined for all (`all`, or nothing given). Throws on a name Argo does not take. */
export function lintKinds(list: string[] | undefined): Set<string> | undefined {
  const names = (list ?? []).flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean);
  if (names.length === 0 || names.includes('all')) return undefined;
  const bad = names.find((n) => !KIND_NAMES[n]);
  if (bad) throw new Error(`unknown kind "${bad}" in --kinds: use ${Object.keys(KIND_NAMES).join(', ')} or all`);
  return new Set(names.map((n) => KIND_NAMES[n]));
}

export interface LintOptions {
  library?: Library;
  /** Lint only documents of these kinds (`--kinds`); others are passed over, as Argo's lint does. */
  kinds?: Set<string>;
  parameters?: Record<string, string>;
  /** For a submission (see SemanticOptions.submit): arguments need their values. */
  submit?: boolean;
}

export function lintLoaded(loaded: LoadResult, source: string, opts: LintOptions = {}): LintResult {
  const issues: ArgoIssue[] = [...loaded.issues];
  const library = opts.library ?? new Library();
  const valid: ArgoDocument[] = [];
  const notes: ArgoIssue[] = [];
  const documents = opts.kinds ? loaded.documents.filter((d) => opts.kinds!.has(d.kind)) : loaded.documents;
  for (const doc of documents) {
    // Argo's decoder first (null keys, AnyString): the schema and everything after see the values Argo would.
    for (const c of decodeAsArgo(doc.value)) notes.push({ source, path: doc.describe(c.path), line: doc.lineOf(c.path), message: `${c.was}, not a string: Argo reads it as "" (an empty string), and so does Tandem` });
    const schemaIssues = validateAgainstSchema(doc.value);
    for (const s of schemaIssues) issues.push({ source, path: doc.describe(s.path), message: s.message, line: doc.lineOf(s.path) });
    if (schemaIssues.length === 0) {
      valid.push(doc);
      library.add(doc);
    }
  }
  for (const doc of valid) issues.push(...checkSemantics(doc, { library, parameters: opts.parameters, submit: opts.submit }));
  const nothingToLint = documents.length === 0 && loaded.issues.length === 0;
  if (nothingToLint) {
    const found = [...loaded.documents.map((d) => d.kind), ...loaded.skipped.map((s) => s.kind)];
    issues.push({ source, path: '', message: `no ${opts.kinds ? [...opts.kinds].join(' or ') : 'Argo Workflows manifests'} found${found.length ? ` (only ${found.join(', ')})` : ''}` });
  }
  issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return { source, documents, skipped: loaded.skipped, issues, notes, nothingToLint };
}

export function lintText(text: string, source: string, opts: LintOptions = {}): LintResult {
  return lintLoaded(loadArgoText(text, source), source, opts);
}

export function lintFile(path: string, opts: LintOptions = {}): LintResult {
  return lintLoaded(loadArgoFile(path), path, opts);
}
