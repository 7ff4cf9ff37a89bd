// Lint = parse (lines kept) → Argo's JSON schema → semantic pass. One entry point for the CLI, the
// submit path and the conformance bench: nothing runs unless this returns no issues.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadArgoFile, loadArgoText, type ArgoDocument, type ArgoIssue, type Json, type LoadResult } from './load.js';
import { validateAgainstSchema } from './schema.js';
import { checkSemantics, type TemplateLibrary } from './semantic.js';

export interface LintResult {
  source: string;
  documents: ArgoDocument[];
  skipped: LoadResult['skipped'];
  issues: ArgoIssue[];
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
    for (const entry of readdirSync(dir)) {
      const p = join(dir, entry);
      if (statSync(p).isDirectory()) this.addDirectory(p);
      else if (/\.ya?ml$/.test(entry)) {
        const r = loadArgoFile(p);
        for (const d of r.documents) if (validateAgainstSchema(d.value).length === 0) this.add(d);
      }
    }
    return this;
  }
}

export interface LintOptions {
  library?: Library;
  parameters?: Record<string, string>;
}

export function lintLoaded(loaded: LoadResult, source: string, opts: LintOptions = {}): LintResult {
  const issues: ArgoIssue[] = [...loaded.issues];
  const library = opts.library ?? new Library();
  const valid: ArgoDocument[] = [];
  for (const doc of loaded.documents) {
    const schemaIssues = validateAgainstSchema(doc.value);
    for (const s of schemaIssues) issues.push({ source, path: doc.describe(s.path), message: s.message, line: doc.lineOf(s.path) });
    if (schemaIssues.length === 0) {
      valid.push(doc);
      library.add(doc);
    }
  }
  for (const doc of valid) issues.push(...checkSemantics(doc, { library, parameters: opts.parameters }));
  if (loaded.documents.length === 0 && loaded.issues.length === 0) {
    issues.push({ source, path: '', message: `no Argo Workflows manifests found${loaded.skipped.length ? ` (only ${loaded.skipped.map((s) => s.kind).join(', ')})` : ''}` });
  }
  issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return { source, documents: loaded.documents, skipped: loaded.skipped, issues };
}

export function lintText(text: string, source: string, opts: LintOptions = {}): LintResult {
  return lintLoaded(loadArgoText(text, source), source, opts);
}

export function lintFile(path: string, opts: LintOptions = {}): LintResult {
  return lintLoaded(loadArgoFile(path), path, opts);
}
