// A template's inputs (parameters and artifacts bound into its scope) and outputs (what its parent,
// and `globalName`s, see of it afterwards).
import { evaluateExpr } from '../../argo/lang/expr.js';
import { scopeEnv, stringify, substitute, type Scope } from '../../argo/lang/tags.js';
import type { ArgoNode, Json, NodeOutputs, RunPodInput } from '../../argo/lang/types.js';
import { arr, emptyOutputs, UserError, type CallArgs, type LoopResult, type NodeResult } from './model.js';

export interface BoundInputs {
  scope: Scope;
  /** The input artifacts a pod must be given, at their paths. */
  artifacts: RunPodInput['inputArtifacts'];
}

const ARTIFACT_SOURCES = ['s3', 'http', 'git', 'gcs', 'oss', 'hdfs', 'artifactory', 'azure'];

/** The callee's scope: `scope` plus its `inputs.*`, from the call's arguments or the template's defaults. */
export function bindInputs(tmpl: Json, args: CallArgs, scope: Scope, wfArtifacts: Record<string, Json>): BoundInputs {
  const local: Scope = { ...scope };
  const supplied = new Map(arr(args.parameters).map((p) => [String(p.name), p]));
  for (const p of arr((tmpl.inputs as Json | undefined)?.parameters)) {
    const name = String(p.name);
    const a = supplied.get(name);
    let v: unknown = a?.value ?? p.value ?? p.default;
    if (a?.value === undefined && p.value === undefined && a?.default !== undefined) v = a.default;
    if (v === undefined) throw new UserError(`inputs.parameters.${name} was not supplied`);
    const value = substitute(stringify(v), local);
    const en = p.enum as unknown[] | undefined;
    if (en && !en.map(String).includes(value)) throw new UserError(`inputs.parameters.${name}: ${JSON.stringify(value)} is not one of [${en.join(', ')}]`);
    local[`inputs.parameters.${name}`] = value;
  }
  local['inputs.parameters'] = JSON.stringify(arr((tmpl.inputs as Json | undefined)?.parameters).map((p) => ({ name: p.name, value: local[`inputs.parameters.${String(p.name)}`] })));
  const suppliedArt = new Map(arr(args.artifacts).map((a) => [String(a.name), a]));
  const artifacts: RunPodInput['inputArtifacts'] = [];
  for (const a of arr((tmpl.inputs as Json | undefined)?.artifacts)) {
    const name = String(a.name);
    const given = { ...(wfArtifacts[name] ?? {}), ...a, ...(suppliedArt.get(name) ?? {}) } as Json;
    const path = a.path !== undefined ? substitute(String(a.path), local) : undefined;
    if (path) local[`inputs.artifacts.${name}.path`] = path;
    let from = given.from !== undefined ? substitute(String(given.from), local) : undefined;
    // `subPath` picks a file or folder inside the artifact (Argo's ArtifactLocation subPath).
    if (from !== undefined && given.subPath !== undefined) {
      const sub = substitute(String(given.subPath), local).replace(/^\/+|\/+$/g, '');
      if (sub.split('/').includes('..')) throw new UserError(`inputs.artifacts.${name}.subPath: ${JSON.stringify(sub)} must stay inside the artifact (no "..")`);
      if (sub) from = `${from.replace(/\/+$/, '')}/${sub}`;
    }
    const raw = (given.raw as Json | undefined)?.data;
    if (from === undefined && raw === undefined) {
      if (a.optional === true) continue;
      const src = Object.keys(given).find((k) => ARTIFACT_SOURCES.includes(k));
      throw new UserError(`inputs.artifacts.${name}: ${src ? `${src} artifacts are not available on this runtime` : 'not supplied'}`);
    }
    if (path) artifacts.push({ name, path, from, raw: raw === undefined ? undefined : substitute(String(raw), local), optional: a.optional === true, mode: a.mode as number | undefined });
    else if (from) local[`inputs.artifacts.${name}`] = from;
  }
  return { scope: local, artifacts };
}

/**
 * `base` (what the pod or activity reported) completed with the template's declared outputs. Output
 * parameters with a `globalName` are also set in `global`, which is why it is passed in.
 */
export function templateOutputs(tmpl: Json, scope: Scope, base: NodeOutputs, global: Scope): NodeOutputs {
  const out: NodeOutputs = { parameters: { ...base.parameters }, artifacts: { ...base.artifacts }, result: base.result, exitCode: base.exitCode };
  for (const p of arr((tmpl.outputs as Json | undefined)?.parameters)) {
    const name = String(p.name);
    const vf = (p.valueFrom ?? {}) as Json;
    let v: string | undefined = out.parameters[name];
    try {
      if (vf.parameter !== undefined) v = substitute(String(vf.parameter), scope);
      else if (vf.expression !== undefined) v = stringify(evaluateExpr(String(vf.expression), scopeEnv(scope)));
      else if (p.value !== undefined) v = substitute(String(p.value), scope);
    } catch {
      v = undefined;
    }
    if ((v === undefined || /^\{\{.*\}\}$/.test(v)) && vf.default !== undefined) v = String(vf.default);
    if (v !== undefined) out.parameters[name] = v;
    if (p.globalName && v !== undefined) global[`workflow.outputs.parameters.${String(p.globalName)}`] = v;
  }
  for (const a of arr((tmpl.outputs as Json | undefined)?.artifacts)) {
    if (a.from !== undefined) out.artifacts[String(a.name)] = substitute(String(a.from), scope);
    if (a.globalName && out.artifacts[String(a.name)]) global[`workflow.outputs.artifacts.${String(a.globalName)}`] = out.artifacts[String(a.name)]!;
  }
  return out;
}

/** A resumed suspend node's outputs: the parameters the resume signal supplied, else their defaults. */
export function suspendOutputs(tmpl: Json, supplied: Record<string, string>, global: Scope): NodeOutputs {
  const out = emptyOutputs();
  for (const p of arr((tmpl.outputs as Json | undefined)?.parameters)) {
    const vf = (p.valueFrom ?? {}) as Json;
    const v = supplied[String(p.name)] ?? (vf.default as string | undefined);
    if (v !== undefined) out.parameters[String(p.name)] = String(v);
    if (p.globalName && v !== undefined) global[`workflow.outputs.parameters.${String(p.globalName)}`] = String(v);
  }
  return out;
}

/** Makes a finished child's results visible as steps.<name>.* / tasks.<name>.*. */
export function publish(scope: Scope, prefix: string, r: NodeResult, node?: ArgoNode): void {
  scope[`${prefix}.status`] = r.phase;
  scope[`${prefix}.id`] = r.id;
  if (node?.startedAt) scope[`${prefix}.startedAt`] = node.startedAt;
  if (node?.finishedAt) scope[`${prefix}.finishedAt`] = node.finishedAt;
  if (r.outputs.result !== undefined) scope[`${prefix}.outputs.result`] = r.outputs.result;
  if (r.outputs.exitCode !== undefined) scope[`${prefix}.exitCode`] = r.outputs.exitCode;
  for (const [k, v] of Object.entries(r.outputs.parameters)) scope[`${prefix}.outputs.parameters.${k}`] = v;
  for (const [k, v] of Object.entries(r.outputs.artifacts)) scope[`${prefix}.outputs.artifacts.${k}`] = v;
  const items = (r as LoopResult).itemParameters;
  scope[`${prefix}.outputs.parameters`] = JSON.stringify(items ?? r.outputs.parameters);
}

/**
 * `{{outputs.parameters.<n>.path}}` and `{{outputs.artifacts.<n>.path}}`: where a container or script
 * writes its outputs, so that its command can name the path it declares once.
 */
export function outputPaths(tmpl: Json, scope: Scope): Scope {
  const out: Scope = {};
  const outputs = (tmpl.outputs ?? {}) as Json;
  for (const p of arr(outputs.parameters)) {
    const path = ((p.valueFrom ?? {}) as Json).path;
    if (path !== undefined) out[`outputs.parameters.${String(p.name)}.path`] = substitute(String(path), scope);
  }
  for (const a of arr(outputs.artifacts)) if (a.path !== undefined) out[`outputs.artifacts.${String(a.name)}.path`] = substitute(String(a.path), scope);
  return out;
}
