// Argo's validation rules for one template's own fields and for a workflow's top-level settings
// (workflow/validate/validate.go, v3.7.9: validateOutputs / validateOutputParameter, validateInputs,
// validateNonLeaf, validateLeaf, validateDAG, validateArgumentsValues, ValidateCronWorkflow, and the
// podGC check). The messages are Argo's, with the template's name and field left to the path.
// Argo refuses such a workflow when it is submitted; Tandem refuses it at lint, before anything starts.
import { parseAllDocuments } from 'yaml';
import type { Json } from './load.js';
import { checkNames, isParamOrArtifactName, PARAM_OR_ARTIFACT_RULE } from './names.js';
import { templateTypeOf } from '../lang/types.js';

export type Report = (path: (string | number)[], message: string) => void;

const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const isMap = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
/** A value Argo fills in later (a `{{…}}` tag): checked when it is known, not here. */
const tagged = (v: unknown): boolean => typeof v === 'string' && v.includes('{{');

/** Prometheus' legacy metric name, without ':' (workflow/metrics/util.go IsValidMetricName). */
const METRIC_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const LEAF_TYPES = ['container', 'containerSet', 'script', 'resource', 'data', 'http', 'plugin'];
const RESOURCE_ACTIONS = ['get', 'create', 'apply', 'delete', 'replace', 'patch'];
const VALUE_FROM_TYPES = ['path', 'jqFilter', 'jsonPath', 'parameter', 'expression', 'supplied'] as const;
export const POD_GC_STRATEGIES = ['', 'OnPodCompletion', 'OnPodSuccess', 'OnWorkflowCompletion', 'OnWorkflowSuccess'];
export const CONCURRENCY_POLICIES = ['', 'Allow', 'Forbid', 'Replace'];

function globalName(report: Report, at: (string | number)[], v: unknown): void {
  if (v === undefined || tagged(v) || isParamOrArtifactName(text(v))) return;
  report([...at, 'globalName'], PARAM_OR_ARTIFACT_RULE);
}

/** An output parameter: one of value and valueFrom, and one source in valueFrom that the template type can fill. */
function outputParameter(report: Report, at: (string | number)[], p: Json, type: string | undefined): void {
  const from = p.valueFrom;
  if (from !== undefined && p.value !== undefined) return report(at, 'has both valueFrom and value specified. Choose one.');
  if (p.value !== undefined) return globalName(report, at, p.globalName);
  if (!isMap(from)) return report(at, 'does not have valueFrom or value specified');
  const kinds = VALUE_FROM_TYPES.filter((k) => (k === 'supplied' ? from.supplied !== undefined : text(from[k]) !== ''));
  if (kinds.length === 0) report([...at, 'valueFrom'], 'valueFrom type unspecified. choose one of: path, jqFilter, jsonPath, parameter, raw, expression');
  else if (kinds.length > 1) report([...at, 'valueFrom'], 'multiple valueFrom types specified. choose one of: path, jqFilter, jsonPath, parameter, raw');
  else if ((type === 'container' || type === 'containerSet' || type === 'script') && !text(from.path)) report([...at, 'valueFrom'], `path must be specified for ${type} templates`);
  else if (type === 'resource' && !text(from.jqFilter) && !text(from.jsonPath)) report([...at, 'valueFrom'], 'jqFilter or jsonPath must be specified for resource templates');
  else if ((type === 'dag' || type === 'steps') && !text(from.parameter) && !text(from.expression)) report([...at, 'valueFrom'], `parameter or expression must be specified for ${type} templates`);
  globalName(report, at, p.globalName);
}

/** The manifest with `{{…}}` replaced, as Argo's SubstituteResourceManifestExpressions does before parsing it. */
function manifestParses(manifest: string): boolean {
  const replaced = manifest.replace(/\{\{[^}]*\}\}/g, 'placeholder');
  return parseAllDocuments(replaced).every((d) => !('errors' in d) || d.errors.length === 0);
}

/** A containerSet (ContainerSetTemplate.Validate and validateLeaf): named containers, their dependencies defined and acyclic, a "main" one for inputs or outputs. */
function containerSet(cs: Json, path: (string | number)[], inputs: Json, outputs: Json, report: Report): void {
  const containers = arr(cs.containers);
  if (containers.length === 0) return report([...path, 'containers'], 'containers must have at least one container');
  checkNames(containers, 'field', (i, atName, message) => report(atName ? [...path, 'containers', i, 'name'] : [...path, 'containers', i], message));
  const names = new Set(containers.map((c) => text(c.name)));
  containers.forEach((c, i) => {
    for (const d of arr(c.dependencies) as unknown[]) if (!names.has(text(d))) report([...path, 'containers', i, 'dependencies'], `dependency '${text(d)}' not defined`);
  });
  const deps = new Map(containers.map((c) => [text(c.name), (arr(c.dependencies) as unknown[]).map(text)]));
  const state = new Map<string, 'visiting' | 'done'>();
  const cyclic = (n: string): boolean => {
    if (state.get(n) === 'done') return false;
    if (state.get(n) === 'visiting') return true;
    state.set(n, 'visiting');
    const found = (deps.get(n) ?? []).some((d) => deps.has(d) && cyclic(d));
    state.set(n, 'done');
    return found;
  };
  const start = containers.findIndex((c) => cyclic(text(c.name)));
  if (start >= 0) report([...path, 'containers', start, 'dependencies'], 'containers have a dependency cycle');
  if ((arr(inputs.artifacts).length || arr(outputs.parameters).length || arr(outputs.artifacts).length) && !names.has('main')) report([...path, 'containers'], 'containers must have a container named "main" for input or output');
}

/** One template's own fields, where Argo's validation looks at them. */
export function checkTemplateRules(t: Json, path: (string | number)[], report: Report): void {
  const type = templateTypeOf(t);
  const leaf = type !== undefined && LEAF_TYPES.includes(type);
  const inputs = isMap(t.inputs) ? t.inputs : {};
  const outputs = isMap(t.outputs) ? t.outputs : {};
  arr(inputs.artifacts).forEach((a, i) => {
    const at = [...path, 'inputs', 'artifacts', i];
    if (!leaf && text(a.path)) report([...at, 'path'], 'path only valid in container/script templates');
    if (text(a.from)) report([...at, 'from'], 'from not valid in inputs');
  });
  arr(outputs.artifacts).forEach((a, i) => {
    const at = [...path, 'outputs', 'artifacts', i];
    if (!leaf && text(a.path)) report([...at, 'path'], 'path only valid in container/script templates');
    globalName(report, at, a.globalName);
  });
  arr(outputs.parameters).forEach((p, i) => outputParameter(report, [...path, 'outputs', 'parameters', i], p, type));

  // An image is required, from the template or its workflow's templateDefaults (applied to the
  // templates before lint: argo/lang/template-defaults.ts).
  if ((type === 'container' || type === 'script') && isMap(t[type]) && !text((t[type] as Json).image)) report([...path, type], `image may not be empty: give one here or in spec.templateDefaults.${type}`);

  if (type === 'steps' || type === 'dag') {
    if (t.activeDeadlineSeconds !== undefined) report([...path, 'activeDeadlineSeconds'], 'activeDeadlineSeconds is only valid for leaf templates');
  } else if (type !== undefined) {
    const ads = t.activeDeadlineSeconds;
    if (ads !== undefined && !(typeof ads === 'string' && ads.startsWith('{{') && ads.endsWith('}}'))) {
      const n = typeof ads === 'number' ? ads : /^[+-]?\d+$/.test(text(ads)) ? Number(ads) : NaN;
      if (!Number.isInteger(n) || n < 0) report([...path, 'activeDeadlineSeconds'], 'activeDeadlineSeconds must be a positive integer > 0 or an argo variable');
    }
    if (t.parallelism !== undefined) report([...path, 'parallelism'], 'parallelism is only valid for steps and dag templates');
  }

  if (type === 'container' && isMap(t.container)) {
    // No two mounts at one path: volumeMounts, then input artifacts (validateLeaf).
    const mounted = new Map<string, string>();
    arr(t.container.volumeMounts).forEach((m, i) => {
      const p = text(m.mountPath);
      const prev = mounted.get(p);
      if (prev) report([...path, 'container', 'volumeMounts', i, 'mountPath'], `mountPath '${p}' already mounted in ${prev}`);
      else mounted.set(p, `container.volumeMounts.${text(m.name)}`);
    });
    arr(inputs.artifacts).forEach((a, i) => {
      const p = text(a.path);
      const prev = mounted.get(p);
      if (prev) report([...path, 'inputs', 'artifacts', i, 'path'], `path '${p}' already mounted in ${prev}`);
      else mounted.set(p, `inputs.artifacts.${text(a.name)}`);
    });
  }

  if (type === 'resource' && isMap(t.resource)) {
    const r = t.resource;
    const action = text(r.action);
    if (!tagged(action) && !RESOURCE_ACTIONS.includes(action)) report([...path, 'resource', 'action'], `action must be one of: ${RESOURCE_ACTIONS.join(', ')}`);
    if (action !== 'delete' && action !== 'get') {
      const manifest = text(r.manifest);
      if (!manifest && r.manifestFrom === undefined) report([...path, 'resource'], 'either resource.manifest or resource.manifestFrom must be specified');
      if (manifest && r.manifestFrom !== undefined) report([...path, 'resource'], "shouldn't have both `manifest` and `manifestFrom` specified in `Manifest` for resource template");
      const art = isMap(r.manifestFrom) && isMap(r.manifestFrom.artifact) ? text(r.manifestFrom.artifact.name) : undefined;
      if (art !== undefined && !arr(inputs.artifacts).some((a) => text(a.name) === art)) report([...path, 'resource', 'manifestFrom', 'artifact'], `artifact ${art} in \`manifestFrom\` refer to a non-exist artifact`);
      if (manifest && !manifestParses(manifest)) report([...path, 'resource', 'manifest'], 'manifest must be a valid yaml');
    }
  }

  if (type === 'containerSet' && isMap(t.containerSet)) containerSet(t.containerSet, [...path, 'containerSet'], inputs, outputs, report);

  const metrics = isMap(t.metrics) ? arr(t.metrics.prometheus) : [];
  metrics.forEach((m, i) => {
    const at = [...path, 'metrics', 'prometheus', i];
    if (!METRIC_NAME.test(text(m.name))) report([...at, 'name'], `metric name '${text(m.name)}' is invalid. Metric names must contain alphanumeric characters or '_'`);
    else if (!text(m.help)) report(at, `metric '${text(m.name)}' must contain a help string under 'help: ' field`);
  });

  if (type === 'dag' && isMap(t.dag)) {
    const tasks = arr(t.dag.tasks);
    if (tasks.length === 0) report([...path, 'dag', 'tasks'], 'must have at least one task');
    const usingDepends = tasks.some((x) => x.depends !== undefined);
    const usingDependencies = tasks.some((x) => arr(x.dependencies).length > 0);
    if (usingDepends && usingDependencies) report([...path, 'dag'], "cannot use both 'depends' and 'dependencies' in the same DAG template");
    tasks.forEach((task, i) => {
      const at = [...path, 'dag', 'tasks', i];
      if ((usingDepends || arr(task.dependencies).length > 0) && /^[0-9]/.test(text(task.name))) report([...at, 'name'], "name cannot begin with a digit when using either 'depends' or 'dependencies'");
      if (usingDepends && task.continueOn !== undefined) report([...at, 'continueOn'], "cannot use 'continueOn' when using 'depends'. Instead use 'dep-task.Failed'/'dep-task.Errored'");
    });
  }
}

const ARTIFACT_LOCATIONS = ['s3', 'git', 'http', 'artifactory', 'hdfs', 'raw', 'oss', 'gcs', 'azure', 'plugin', 'key'];

/**
 * An `arguments` block (a workflow's, a step's or a task's), as validateArgumentsValues checks it:
 * parameter valueFrom sources and enums; a step's or task's parameters need a value (a workflow's
 * may be supplied at submission, checked there); every artifact needs `from`, a location or a key.
 */
export function checkArguments(args: unknown, path: (string | number)[], call: boolean, report: Report): void {
  if (!isMap(args)) return;
  arr(args.parameters).forEach((p, i) => {
    const at = [...path, 'parameters', i];
    const from = p.valueFrom;
    if (call && from === undefined && p.value === undefined) report(at, 'value or valueFrom is required');
    if (isMap(from)) {
      const allowed = from.configMapKeyRef !== undefined || text(from.event) !== '' || from.supplied !== undefined;
      const sourced = ['path', 'jsonPath', 'parameter', 'expression'].some((k) => text(from[k]) !== '');
      if (!allowed || sourced) report([...at, 'valueFrom'], 'valueFrom only allows: default, configMapKeyRef and supplied');
    }
    if (Array.isArray(p.enum) && p.enum.length === 0) report([...at, 'enum'], 'enum should contain at least one value');
  });
  arr(args.artifacts).forEach((a, i) => {
    const at = [...path, 'artifacts', i];
    if (!text(a.from) && !ARTIFACT_LOCATIONS.some((k) => a[k] !== undefined && a[k] !== '')) report(at, 'from, artifact location, or key is required');
    if (text(a.from) && text(a.fromExpression)) report(at, "shouldn't have both `from` and `fromExpression` in Artifact");
  });
}

/** A workflow spec's settings Argo checks before its templates (podGC), and a CronWorkflow's own. */
export function checkSpecRules(spec: Json, specPath: (string | number)[], cron: Json | undefined, report: Report): void {
  // A Workflow that runs a WorkflowTemplate takes its templates from it (ValidateWorkflowTemplateRefFields).
  if (spec.workflowTemplateRef !== undefined && arr(spec.templates).length > 0) report([...specPath, 'templates'], 'Templates is invalid field in spec if workflow referred WorkflowTemplate reference');
  const gc = isMap(spec.podGC) ? spec.podGC : undefined;
  if (gc && !POD_GC_STRATEGIES.includes(text(gc.strategy))) report([...specPath, 'podGC', 'strategy'], `unknown strategy '${text(gc.strategy)}' (one of ${POD_GC_STRATEGIES.filter(Boolean).join(', ')})`);
  if (!cron) return;
  if (!CONCURRENCY_POLICIES.includes(text(cron.concurrencyPolicy))) report(['spec', 'concurrencyPolicy'], `'${text(cron.concurrencyPolicy)}' is not a valid concurrencyPolicy (one of ${CONCURRENCY_POLICIES.filter(Boolean).join(', ')})`);
  if (typeof cron.startingDeadlineSeconds === 'number' && cron.startingDeadlineSeconds < 0) report(['spec', 'startingDeadlineSeconds'], 'startingDeadlineSeconds must be positive');
}
