// Turns a validated Argo document into the interpreter's input: workflowTemplateRef merged,
// every templateRef inlined (renamed `<WorkflowTemplate>/<template>` with its own references
// rewritten, so a referenced template's steps still call its siblings), and submitted parameters
// applied. Pure data in, pure data out: the workflow never touches the filesystem.
import type { Json } from './lint/load.js';
import type { ArgoRunInput } from './lang/types.js';
import type { TemplateLibrary } from './lint/semantic.js';
import { InputError } from '../contract/input-error.js';
import { applyTemplateDefaults } from './lang/template-defaults.js';

const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/** A reference the lint pass would also have refused (a missing WorkflowTemplate or template); its message is that sentence. */
export class ResolveError extends InputError {
  constructor(message: string) {
    super('Argo', [{ path: '', message }], { message });
    this.name = 'ResolveError';
  }
}

export function workflowSpecOf(doc: Json): Json {
  return ((doc.kind === 'CronWorkflow' ? (doc.spec as Json).workflowSpec : doc.spec) ?? {}) as Json;
}

export function resolveWorkflow(doc: Json, library: TemplateLibrary, parameters: Record<string, string> = {}): Json {
  let spec = structuredClone(workflowSpecOf(doc));
  if (spec.workflowTemplateRef) {
    const ref = spec.workflowTemplateRef as Json;
    const wt = library.get(String(ref.name), ref.clusterScope === true);
    if (!wt) throw new ResolveError(`WorkflowTemplate "${String(ref.name)}" not found`);
    const base = structuredClone((wt.spec ?? {}) as Json);
    const own = { ...spec };
    delete own.workflowTemplateRef;
    const args = mergeParams(arr((base.arguments as Json | undefined)?.parameters), arr((own.arguments as Json | undefined)?.parameters));
    spec = { ...base, ...own, arguments: { ...((base.arguments as Json) ?? {}), ...((own.arguments as Json) ?? {}), parameters: args } };
  }
  const templates = arr(spec.templates);
  const added = new Map<string, Json>();
  const inline = (owner: Json[], rename: (n: string) => string, wtName: string | undefined): Json[] =>
    owner.map((t) => rewrite(t, rename, wtName));
  function rewrite(t: Json, rename: (n: string) => string, _wt: string | undefined): Json {
    const copy = structuredClone(t);
    const fix = (step: Json) => {
      if (step.templateRef) {
        step.template = refName(step.templateRef as Json);
        delete step.templateRef;
      } else if (typeof step.template === 'string') step.template = rename(step.template);
      if (typeof step.onExit === 'string') step.onExit = rename(step.onExit);
      const hooks = step.hooks as Record<string, Json> | undefined;
      for (const h of Object.values(hooks ?? {})) {
        if (h.templateRef) {
          h.template = refName(h.templateRef as Json);
          delete h.templateRef;
        } else if (typeof h.template === 'string') h.template = rename(h.template);
      }
    };
    for (const g of arr(copy.steps as unknown)) for (const s of Array.isArray(g) ? (g as Json[]) : []) fix(s);
    for (const task of arr((copy.dag as Json | undefined)?.tasks)) fix(task);
    return copy;
  }
  function refName(ref: Json): string {
    const wtName = String(ref.name);
    const full = `${ref.clusterScope ? 'cluster:' : ''}${wtName}/${String(ref.template)}`;
    if (!added.has(`${ref.clusterScope ? 'cluster:' : ''}${wtName}`)) {
      const wt = library.get(wtName, ref.clusterScope === true);
      if (!wt) throw new ResolveError(`${ref.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate'} "${wtName}" not found`);
      const prefix = `${ref.clusterScope ? 'cluster:' : ''}${wtName}/`;
      added.set(prefix.slice(0, -1), wt);
      for (const t of inline(arr((wt.spec as Json).templates), (n) => prefix + n, wtName)) {
        extra.push({ ...t, name: prefix + String(t.name) });
      }
      if (!arr((wt.spec as Json).templates).some((t) => t.name === ref.template)) throw new ResolveError(`template "${String(ref.template)}" not found in ${wtName}`);
    }
    return full;
  }
  const extra: Json[] = [];
  const own = inline(templates, (n) => n, undefined);
  if (spec.onExit && typeof spec.onExit === 'string') {
    /* onExit names a template of this workflow */
  }
  spec.templates = [...own, ...extra];
  // The run's templateDefaults reach every template it runs, referenced ones included (as Argo's execWf's).
  applyTemplateDefaults(spec);
  // -p k=v: workflow arguments take the submitted values.
  const params = arr((spec.arguments as Json | undefined)?.parameters).map((p) => (parameters[String(p.name)] !== undefined ? { ...p, value: parameters[String(p.name)] } : p));
  spec.arguments = { ...((spec.arguments as Json) ?? {}), parameters: params };
  return spec;
}

function mergeParams(base: Json[], own: Json[]): Json[] {
  const byName = new Map(base.map((p) => [String(p.name), p]));
  for (const p of own) byName.set(String(p.name), { ...(byName.get(String(p.name)) ?? {}), ...p });
  return [...byName.values()];
}

/** A Kubernetes-style name: metadata.name, or generateName plus a suffix. */
export function workflowName(doc: Json, suffix: string): string {
  const meta = (doc.metadata ?? {}) as Json;
  if (typeof meta.name === 'string' && doc.kind === 'Workflow') return meta.name;
  const base = typeof meta.generateName === 'string' ? meta.generateName : `${String(meta.name ?? 'workflow')}-`;
  return `${base}${suffix}`;
}

export function runInput(doc: Json, library: TemplateLibrary, opts: { parameters?: Record<string, string>; name: string; artifactRoot?: string }): ArgoRunInput {
  const meta = (doc.metadata ?? {}) as Json;
  const spec = resolveWorkflow(doc, library, opts.parameters);
  const wfMeta = (spec.workflowMetadata ?? {}) as Json;
  return {
    spec,
    name: opts.name,
    namespace: String(meta.namespace ?? 'default'),
    labels: { ...((meta.labels as Record<string, string>) ?? {}), ...((wfMeta.labels as Record<string, string>) ?? {}) },
    annotations: { ...((meta.annotations as Record<string, string>) ?? {}), ...((wfMeta.annotations as Record<string, string>) ?? {}) },
    artifactRoot: opts.artifactRoot,
  };
}
