// The semantic pass, after the schema: what Argo's `workflow/validate` checks and a schema cannot —
// references between templates, steps and DAG tasks, DAG cycles, `{{…}}` tags that cannot resolve,
// and expressions / `when` / `depends` that cannot parse. Errors name `templates.<name>…` and a line.
import { ExprError, parseExpr } from '../lang/expr.js';
import { checkWhenSyntax } from '../lang/govaluate.js';
import { dependsOf, dependsTasks, parseDepends } from '../lang/depends.js';
import { tagsIn } from '../lang/tags.js';
import { isLoopStep, loopTooLarge, sequenceRange, SequenceError } from '../lang/sequence.js';
import { cronProblem } from '../lang/cron.js';
import { checkNames, type NameKind } from './names.js';
import { checkArguments, checkSpecRules, checkTemplateRules } from './template-rules.js';
import { parseDuration } from '../../contract/duration.js';
import { TEMPLATE_TYPES } from '../lang/types.js';
import type { ArgoDocument, ArgoIssue, Json } from './load.js';


/** WorkflowTemplates and ClusterWorkflowTemplates that templateRef / workflowTemplateRef may name. */
export interface TemplateLibrary {
  get(name: string, clusterScope: boolean): Json | undefined;
}

export interface SemanticOptions {
  library?: TemplateLibrary;
  /** Parameters supplied at submission (`-p k=v`): they satisfy arguments without a value. */
  parameters?: Record<string, string>;
  /**
   * Checked for a submission, not a lint: a workflow argument without a value is then an error. Argo's
   * `argo lint` allows empty values (validate.go: allowEmptyValues = ctx.Lint), as compiled pipelines
   * (Kubeflow Pipelines v1) declare their arguments without one and have them supplied at submission.
   */
  submit?: boolean;
  /** Lint mode for documents that are stored, not run (WorkflowTemplates): arguments may be open. */
}

const WORKFLOW_VARS = new Set([
  'workflow.name', 'workflow.namespace', 'workflow.uid', 'workflow.status', 'workflow.failures', 'workflow.duration',
  'workflow.serviceAccountName', 'workflow.mainEntrypoint', 'workflow.priority', 'workflow.scheduledTime',
  'workflow.creationTimestamp', 'workflow.parameters', 'workflow.labels', 'workflow.annotations', 'workflow.outputs.parameters', 'workflow.outputs.artifacts',
]);
const WORKFLOW_PREFIXES = ['workflow.creationTimestamp.', 'workflow.labels.', 'workflow.annotations.', 'workflow.outputs.parameters.', 'workflow.outputs.artifacts.', 'cronworkflow.'];
const LOCAL_VARS = new Set(['pod.name', 'node.name', 'retries', 'status', 'duration', 'exitCode', 'inputs.parameters', 'inputs.artifacts', 'outputs.result', 'outputs.parameters', 'outputs.artifacts', 'steps', 'tasks', 'workflow']);
const LOCAL_PREFIXES = ['lastRetry.', 'resourcesDuration.', 'outputs.parameters.', 'outputs.artifacts.', 'inputs.artifacts.'];
const KNOWN_ROOTS = new Set(['inputs', 'outputs', 'steps', 'tasks', 'workflow', 'item', 'pod', 'node', 'retries', 'lastRetry', 'status', 'duration', 'exitCode', 'resourcesDuration', 'cronworkflow']);

interface Ctx {
  doc: ArgoDocument;
  spec: Json;
  specPath: (string | number)[];
  templates: Map<string, Json>;
  globals: Set<string> | undefined;
  issues: ArgoIssue[];
  opts: SemanticOptions;
}

function issue(ctx: Ctx, path: (string | number)[], message: string): void {
  ctx.issues.push({ source: ctx.doc.source, path: ctx.doc.describe(path), message, line: ctx.doc.lineOf(path) });
}

const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/** Argo's name rules (names.ts) over one list: the issue sits at the item's `name`, or at the item when it has none. */
function checkNamed(ctx: Ctx, list: unknown, path: (string | number)[], kind: NameKind): void {
  checkNames(arr(list), kind, (i, atName, message) => issue(ctx, atName ? [...path, i, 'name'] : [...path, i], message));
}

/** The parameters and artifacts of an `arguments`, `inputs` or `outputs` block. */
function checkIoNames(ctx: Ctx, io: unknown, path: (string | number)[]): void {
  if (!io || typeof io !== 'object') return;
  for (const k of ['parameters', 'artifacts']) checkNamed(ctx, (io as Json)[k], [...path, k], 'parameter');
}
const names = (v: unknown): string[] => arr(v).map((p) => String(p.name));

/** Resolves a templateRef to its template, or says why it cannot. */
export function resolveTemplateRef(ref: Json, library: TemplateLibrary | undefined): { template?: Json; error?: string } {
  if (!library) return {};
  const wt = library.get(String(ref.name), ref.clusterScope === true);
  if (!wt) return { error: `${ref.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate'} "${String(ref.name)}" not found` };
  const t = arr((wt.spec as Json | undefined)?.templates).find((x) => x.name === ref.template);
  if (!t) return { error: `template "${String(ref.template)}" not found in ${String(ref.name)}` };
  return { template: t };
}

function tagIssues(ctx: Ctx, path: (string | number)[], value: unknown, scope: (ref: string) => string | undefined): void {
  if (typeof value === 'string') {
    for (const [isExpr, body] of tagsIn(value)) {
      if (isExpr) {
        // Like Argo's validator, expressions are checked for syntax only: what they read may be
        // guarded (`??`, `?.`) and is only known at run time.
        try {
          parseExpr(body);
        } catch (e) {
          if (e instanceof ExprError) issue(ctx, path, `invalid expression {{=${body}}}: ${e.message}`);
          else throw e;
        }
      } else {
        const why = scope(body);
        if (why) issue(ctx, path, `failed to resolve {{${body}}}${why === 'unknown' ? '' : `: ${why}`}`);
      }
    }
  } else if (Array.isArray(value)) value.forEach((v, i) => tagIssues(ctx, [...path, i], v, scope));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) tagIssues(ctx, [...path, k], v, scope);
}

interface ScopeOpts {
  template: Json;
  loop?: boolean;
  steps?: Set<string>;
  tasks?: Set<string>;
  /** The template each step or task calls, where it can be known (for its declared outputs). */
  callees?: Map<string, Json | undefined>;
}

/** The template a step or task calls, or undefined when it cannot be known here. */
function calleeOf(ctx: Ctx, call: Json): Json | undefined {
  if (typeof call.template === 'string') return call.template.includes('{{') ? undefined : ctx.templates.get(call.template);
  if (call.templateRef) return resolveTemplateRef(call.templateRef as Json, ctx.opts.library).template;
  return call.inline as Json | undefined;
}

/**
 * Argo's validator puts `steps.X.outputs.parameters.Y` (and `….artifacts.Y`) in scope only when the
 * template X calls declares that output (validate.go addOutputsToScope); otherwise the workflow fails
 * at once with "failed to resolve". A plugin's outputs are declared as `valueFrom: {supplied: {}}`.
 */
function undeclaredOutput(callee: Json | undefined, rest: string[]): string | undefined {
  if (!callee || rest[0] !== 'outputs' || rest.length < 3 || (rest[1] !== 'parameters' && rest[1] !== 'artifacts')) return undefined;
  const kind = rest[1] === 'parameters' ? 'parameter' : 'artifact';
  const name = rest.slice(2).join('.');
  if (names((callee.outputs as Json | undefined)?.[rest[1]]).includes(name)) return undefined;
  const hint = callee.plugin !== undefined && kind === 'parameter' ? `; a plugin template declares what its plugin supplies: outputs.parameters: [{name: ${name}, valueFrom: {supplied: {}}}]` : '';
  return `template "${String(callee.name ?? '(inline)')}" declares no output ${kind} "${name}"${hint}`;
}

function makeScope(ctx: Ctx, o: ScopeOpts): (ref: string) => string | undefined {
  const inputs = new Set(names((o.template.inputs as Json | undefined)?.parameters));
  const inArtifacts = new Set(names((o.template.inputs as Json | undefined)?.artifacts));
  return (ref) => {
    const parts = ref.split('.');
    const root = parts[0]!;
    if (root === 'item') return o.loop ? undefined : 'item is only defined in a step or task with withItems, withParam or withSequence';
    if (root === 'inputs' && parts[1] === 'parameters' && parts.length >= 3) {
      const name = parts.slice(2).join('.');
      return inputs.has(name) || name === 'json' ? undefined : `the template has no input parameter "${name}"`;
    }
    if (root === 'inputs' && parts[1] === 'artifacts' && parts.length >= 3) {
      return stepNameOf(parts.slice(2), inArtifacts) ? undefined : `the template has no input artifact "${parts[2]}"`;
    }
    if (root === 'workflow') {
      if (parts[1] === 'parameters' && parts.length >= 3) {
        if (!ctx.globals || ref === 'workflow.parameters.json') return undefined;
        const name = parts.slice(2).join('.');
        return ctx.globals.has(name) ? undefined : `the workflow has no argument parameter "${name}"`;
      }
      if (WORKFLOW_VARS.has(ref) || WORKFLOW_PREFIXES.some((p) => ref.startsWith(p))) return undefined;
      return 'unknown workflow variable';
    }
    if (ref === 'steps.name' || ref === 'tasks.name') return undefined;
    if (root === 'steps' && parts.length >= 2) {
      if (!o.steps) return 'steps.* is only defined inside a steps template';
      const name = stepNameOf(parts.slice(1), o.steps);
      return name ? undeclaredOutput(o.callees?.get(name), parts.slice(1 + name.split('.').length)) : `no step "${parts[1]}" runs before this point`;
    }
    if (root === 'tasks' && parts.length >= 2) {
      if (!o.tasks) return 'tasks.* is only defined inside a dag template';
      const name = stepNameOf(parts.slice(1), o.tasks);
      return name ? undeclaredOutput(o.callees?.get(name), parts.slice(1 + name.split('.').length)) : `task "${parts[1]}" is not a dependency of this task`;
    }
    if (LOCAL_VARS.has(ref) || LOCAL_PREFIXES.some((p) => ref.startsWith(p)) || root === 'cronworkflow') return undefined;
    if (!KNOWN_ROOTS.has(root)) return undefined; // not an Argo variable (another tool's template syntax)
    return 'unknown';
  };
}

/** Step and task names may contain dots; match the longest declared name. */
function stepNameOf(rest: string[], declared: Set<string>): string | undefined {
  for (let n = rest.length; n >= 1; n--) {
    const name = rest.slice(0, n).join('.');
    if (declared.has(name)) return name;
  }
  return undefined;
}

function checkCall(ctx: Ctx, path: (string | number)[], call: Json): void {
  const kinds = ['template', 'templateRef', 'inline'].filter((k) => call[k] !== undefined);
  if (kinds.length !== 1) {
    issue(ctx, path, kinds.length ? `only one of template, templateRef, inline may be set (got ${kinds.join(', ')})` : 'one of template, templateRef or inline is required');
    return;
  }
  checkIoNames(ctx, call.arguments, [...path, 'arguments']);
  checkArguments(call.arguments, [...path, 'arguments'], true, (p, m) => issue(ctx, p, m));
  let target: Json | undefined;
  if (call.template !== undefined) {
    const name = String(call.template);
    if (name.includes('{{')) return;
    target = ctx.templates.get(name);
    if (!target) {
      issue(ctx, [...path, 'template'], `template "${name}" not found`);
      return;
    }
  } else if (call.templateRef) {
    const r = resolveTemplateRef(call.templateRef as Json, ctx.opts.library);
    if (r.error) issue(ctx, [...path, 'templateRef'], r.error);
    target = r.template;
  } else {
    target = call.inline as Json;
    checkTemplate(ctx, target, [...path, 'inline']);
  }
  if (!target) return;
  // Inputs without a value or default must be supplied by the caller.
  const supplied = new Set(names((call.arguments as Json | undefined)?.parameters));
  for (const p of arr((target.inputs as Json | undefined)?.parameters)) {
    if (p.value === undefined && p.default === undefined && !supplied.has(String(p.name))) {
      issue(ctx, path, `inputs.parameters.${String(p.name)} was not supplied`);
    }
  }
}

/**
 * A loop's own fields, as Argo's validation (addItemsToScope) and controller (expandSequence) read
 * them: one of withItems / withParam / withSequence, one of count / end, and withSequence values that
 * are whole numbers when they are literal (a value with a tag is known only when the step runs, where
 * the interpreter checks it the same way). The loop bound (MAX_LOOP_ITEMS) holds for literal sizes too.
 */
function checkLoop(ctx: Ctx, path: (string | number)[], step: Json): void {
  const kinds = ['withItems', 'withParam', 'withSequence'].filter((k) => step[k] !== undefined);
  if (kinds.length > 1) issue(ctx, [...path, kinds[1]!], `only one of withItems, withParam, withSequence can be specified (got ${kinds.join(', ')})`);
  if (Array.isArray(step.withItems)) {
    const problem = loopTooLarge('withItems', step.withItems.length);
    if (problem) issue(ctx, [...path, 'withItems'], problem);
  }
  const seq = step.withSequence;
  if (seq === undefined) return;
  if (!seq || typeof seq !== 'object' || Array.isArray(seq)) return issue(ctx, [...path, 'withSequence'], 'withSequence must be a mapping of start, end or count, and format');
  const fields = seq as Json;
  if (fields.count !== undefined && fields.end !== undefined) return issue(ctx, [...path, 'withSequence'], 'only one of count or end can be defined in withSequence');
  if (['start', 'end', 'count'].some((k) => typeof fields[k] === 'string' && (fields[k] as string).includes('{{'))) return;
  try {
    sequenceRange(fields);
  } catch (e) {
    if (!(e instanceof SequenceError)) throw e;
    const field = ['start', 'end', 'count'].find((k) => e.message.startsWith(`withSequence.${k}:`));
    // The path names the field already: the message says only what is wrong with it.
    issue(ctx, field ? [...path, 'withSequence', field] : [...path, 'withSequence'], e.message.replace(/^withSequence(\.\w+)?: /, ''));
  }
}

/**
 * A CronWorkflow's schedules, as Argo's ValidateCronWorkflow checks them: `schedules` or v3's single
 * `schedule`, not both, and each a cron expression robfig/cron parses (argo/lang/cron.ts).
 */
function checkSchedules(ctx: Ctx, spec: Json): void {
  const list = Array.isArray(spec.schedules) ? (spec.schedules as unknown[]) : [];
  if (spec.schedule !== undefined && list.length) return issue(ctx, ['spec', 'schedule'], 'only one of schedule or schedules may be set (schedule is the single form of Argo v3.x)');
  const all: [(string | number)[], unknown][] = spec.schedule !== undefined ? [[['spec', 'schedule'], spec.schedule]] : list.map((v, i) => [['spec', 'schedules', i], v]);
  if (!all.length) return issue(ctx, ['spec'], 'a CronWorkflow needs schedules (a list of cron expressions) or, as in Argo v3.x, schedule');
  for (const [path, v] of all) {
    const problem = typeof v === 'string' ? cronProblem(v) : 'a schedule is a cron expression in a string';
    if (problem) issue(ctx, path, `cron schedule is malformed: ${problem}`);
  }
}

function checkSteps(ctx: Ctx, t: Json, path: (string | number)[]): void {
  const groups = Array.isArray(t.steps) ? (t.steps as unknown[]) : [];
  const before = new Set<string>();
  const all = new Set<string>();
  const callees = new Map<string, Json | undefined>();
  for (const s of groups.flatMap((g) => arr(g))) {
    all.add(String(s.name));
    callees.set(String(s.name), calleeOf(ctx, s));
  }
  // Argo: a step's name is required, valid and unique in its template (not only in its group).
  const flat = groups.flatMap((g, gi) => arr(g).map((step, si) => ({ step, at: [...path, 'steps', gi, si] })));
  checkNames(flat.map((f) => f.step), 'field', (k, atName, message) => issue(ctx, atName ? [...flat[k].at, 'name'] : flat[k].at, message));
  groups.forEach((g, gi) => {
    const group = arr(g);
    group.forEach((step, si) => {
      const sp = [...path, 'steps', gi, si];
      checkCall(ctx, sp, step);
      checkLoop(ctx, sp, step);
      if (typeof step.when === 'string') checkWhen(ctx, [...sp, 'when'], step.when);
      checkHookExpressions(ctx, [...sp, 'hooks'], step.hooks);
      const scope = makeScope(ctx, { template: t, loop: isLoopStep(step), steps: before, callees });
      for (const k of ['arguments', 'when', 'withParam', 'withItems', 'withSequence', 'onExit']) if (step[k] !== undefined) tagIssues(ctx, [...sp, k], step[k], scope);
      // step-level hooks and onExit may look at the step itself
      if (step.hooks) tagIssues(ctx, [...sp, 'hooks'], step.hooks, makeScope(ctx, { template: t, steps: new Set([...before, String(step.name)]), callees }));
    });
    group.forEach((s) => before.add(String(s.name)));
  });
  checkLeafTags(ctx, t, path, { template: t, steps: all, callees }, ['steps']);
}

function checkDag(ctx: Ctx, t: Json, path: (string | number)[]): void {
  const dag = t.dag as Json;
  const tasks = arr(dag.tasks);
  const byName = new Map<string, Json>();
  const deps = new Map<string, string[]>();
  checkNamed(ctx, tasks, [...path, 'dag', 'tasks'], 'field');
  for (const task of tasks) if (!byName.has(String(task.name))) byName.set(String(task.name), task);
  const callees = new Map([...byName].map(([n, task]) => [n, calleeOf(ctx, task)] as const));
  tasks.forEach((task, i) => {
    const tp = [...path, 'dag', 'tasks', i];
    checkCall(ctx, tp, task);
    const d = dependsOf(task as { depends?: string; dependencies?: string[] });
    let names: string[] = [];
    if (d) {
      try {
        names = dependsTasks(parseDepends(d));
      } catch (e) {
        if (!(e instanceof ExprError)) throw e;
        issue(ctx, [...tp, task.depends !== undefined ? 'depends' : 'dependencies'], e.message);
      }
    }
    for (const n of names) {
      if (!byName.has(n)) issue(ctx, [...tp, task.depends !== undefined ? 'depends' : 'dependencies'], `dependency "${n}" not defined`);
    }
    deps.set(String(task.name), names.filter((n) => byName.has(n)));
    if (typeof task.when === 'string') checkWhen(ctx, [...tp, 'when'], task.when);
    checkHookExpressions(ctx, [...tp, 'hooks'], task.hooks);
  });
  // Cycles: a depth-first walk with colours; report each cycle once, at the task that closes it.
  const colour = new Map<string, number>();
  const stack: string[] = [];
  const visit = (n: string): void => {
    colour.set(n, 1);
    stack.push(n);
    for (const d of deps.get(n) ?? []) {
      if (colour.get(d) === 1) {
        const cycle = [...stack.slice(stack.indexOf(d)), d];
        const idx = tasks.findIndex((x) => x.name === n);
        issue(ctx, [...path, 'dag', 'tasks', idx], `dependency cycle: ${cycle.join(' -> ')}`);
      } else if (!colour.get(d)) visit(d);
    }
    stack.pop();
    colour.set(n, 2);
  };
  for (const n of byName.keys()) if (!colour.get(n)) visit(n);
  const ancestors = (n: string, acc = new Set<string>()): Set<string> => {
    for (const d of deps.get(n) ?? []) if (!acc.has(d)) ancestors(d, acc.add(d));
    return acc;
  };
  if (dag.target !== undefined && typeof dag.target === 'string' && !dag.target.includes('{{')) {
    for (const tg of dag.target.split(/\s+/).filter(Boolean)) if (!byName.has(tg)) issue(ctx, [...path, 'dag', 'target'], `target "${tg}" is not a task`);
  }
  if (colour.size && ctx.issues.some((i) => i.message.startsWith('dependency cycle'))) return;
  tasks.forEach((task, i) => {
    const tp = [...path, 'dag', 'tasks', i];
    checkLoop(ctx, tp, task);
    const scope = makeScope(ctx, { template: t, loop: isLoopStep(task), tasks: ancestors(String(task.name)), callees });
    for (const k of ['arguments', 'when', 'withParam', 'withItems', 'withSequence']) if (task[k] !== undefined) tagIssues(ctx, [...tp, k], task[k], scope);
    if (task.hooks) tagIssues(ctx, [...tp, 'hooks'], task.hooks, makeScope(ctx, { template: t, tasks: new Set([...ancestors(String(task.name)), String(task.name)]), callees }));
  });
  checkLeafTags(ctx, t, path, { template: t, tasks: new Set(byName.keys()), callees }, ['dag']);
}

function checkWhen(ctx: Ctx, path: (string | number)[], when: string): void {
  if (/^\s*\{\{=[\s\S]*\}\}\s*$/.test(when)) return; // an expression tag: checked with the other tags
  try {
    checkWhenSyntax(when);
  } catch (e) {
    if (!(e instanceof ExprError)) throw e;
    issue(ctx, path, `invalid when: ${e.message}`);
  }
}

/** An expr-lang expression field (retryStrategy.expression, a lifecycle hook's expression): parsed, like `{{=…}}`. */
function checkExpression(ctx: Ctx, path: (string | number)[], src: unknown): void {
  if (typeof src !== 'string' || src.includes('{{')) return;
  try {
    parseExpr(src);
  } catch (e) {
    if (!(e instanceof ExprError)) throw e;
    issue(ctx, path, `invalid expression ${JSON.stringify(src)}: ${e.message}`);
  }
}

function checkHookExpressions(ctx: Ctx, path: (string | number)[], hooks: unknown): void {
  for (const [name, h] of Object.entries((hooks ?? {}) as Record<string, Json>)) if (h && typeof h === 'object') checkExpression(ctx, [...path, name, 'expression'], h.expression);
}

function checkLeafTags(ctx: Ctx, t: Json, path: (string | number)[], o: ScopeOpts, skip: string[]): void {
  const scope = makeScope(ctx, o);
  for (const [k, v] of Object.entries(t)) {
    if (k === 'name' || skip.includes(k)) continue;
    tagIssues(ctx, [...path, k], v, scope);
  }
}

function checkTemplate(ctx: Ctx, t: Json, path: (string | number)[]): void {
  const types = TEMPLATE_TYPES.filter((k) => t[k] !== undefined);
  if (types.length === 0) {
    issue(ctx, path, `template type unspecified. choose one of: ${TEMPLATE_TYPES.join(', ')}`);
    return;
  }
  if (types.length > 1) {
    issue(ctx, path, `templates must specify exactly one type (got ${types.join(', ')})`);
    return;
  }
  checkTemplateRules(t, path, (p, m) => issue(ctx, p, m));
  checkIoNames(ctx, t.inputs, [...path, 'inputs']);
  checkIoNames(ctx, t.outputs, [...path, 'outputs']);
  checkExpression(ctx, [...path, 'retryStrategy', 'expression'], (t.retryStrategy as Json | undefined)?.expression);
  const backoff = (t.retryStrategy as Json | undefined)?.backoff as Json | undefined;
  for (const k of ['duration', 'maxDuration', 'cap']) {
    const v = backoff?.[k];
    if (v !== undefined && typeof v === 'string' && !v.includes('{{') && parseDuration(v) === undefined) issue(ctx, [...path, 'retryStrategy', 'backoff', k], `invalid duration ${JSON.stringify(v)}`);
  }
  for (const [i, p] of arr((t.inputs as Json | undefined)?.parameters).entries()) {
    const en = p.enum as unknown[] | undefined;
    for (const k of ['value', 'default']) {
      if (en && p[k] !== undefined && !String(p[k]).includes('{{') && !en.map(String).includes(String(p[k]))) issue(ctx, [...path, 'inputs', 'parameters', i, k], `value ${JSON.stringify(p[k])} is not in enum [${en.join(', ')}]`);
    }
  }
  if (t.plugin !== undefined) {
    const keys = Object.keys(t.plugin as Json);
    if (keys.length !== 1) issue(ctx, [...path, 'plugin'], 'a plugin template must have exactly one key');
  }
  if (t.steps !== undefined) checkSteps(ctx, t, path);
  else if (t.dag !== undefined) checkDag(ctx, t, path);
  else checkLeafTags(ctx, t, path, { template: t }, []);
}

/** Runs the semantic checks on one loaded Argo document. */
export function checkSemantics(doc: ArgoDocument, opts: SemanticOptions = {}): ArgoIssue[] {
  if (doc.kind === 'WorkflowEventBinding') return [];
  const isCron = doc.kind === 'CronWorkflow';
  const specPath = isCron ? ['spec', 'workflowSpec'] : ['spec'];
  const spec = ((isCron ? (doc.value.spec as Json | undefined)?.workflowSpec : doc.value.spec) ?? {}) as Json;
  const templates = new Map<string, Json>();
  const ctx: Ctx = { doc, spec, specPath, templates, globals: undefined, issues: [], opts };
  const tlist = arr(spec.templates);
  checkNamed(ctx, tlist, [...specPath, 'templates'], 'field');
  for (const t of tlist) if (typeof t.name === 'string' && !templates.has(t.name)) templates.set(t.name, t);
  checkIoNames(ctx, spec.arguments, [...specPath, 'arguments']);
  checkArguments(spec.arguments, [...specPath, 'arguments'], false, (p, m) => issue(ctx, p, m));
  checkSpecRules(spec, specPath, isCron ? ((doc.value.spec ?? {}) as Json) : undefined, (p, m) => issue(ctx, p, m));
  let wtRef: Json | undefined;
  if (spec.workflowTemplateRef) {
    const ref = spec.workflowTemplateRef as Json;
    const lib = opts.library;
    wtRef = lib?.get(String(ref.name), ref.clusterScope === true);
    if (lib && !wtRef) issue(ctx, [...specPath, 'workflowTemplateRef'], `${ref.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate'} "${String(ref.name)}" not found`);
    for (const t of arr((wtRef?.spec as Json | undefined)?.templates)) if (!templates.has(String(t.name))) templates.set(String(t.name), t);
  }
  const args = arr((spec.arguments as Json | undefined)?.parameters);
  const refArgs = arr(((wtRef?.spec as Json | undefined)?.arguments as Json | undefined)?.parameters);
  // Through a workflowTemplateRef we may not see the referenced spec: then do not guess globals.
  // WorkflowTemplates receive their arguments from whoever submits or references them (Argo's
  // workflowTemplateValidation): their workflow.parameters cannot be checked here.
  const openArgs = doc.kind === 'WorkflowTemplate' || doc.kind === 'ClusterWorkflowTemplate';
  ctx.globals = openArgs || (spec.workflowTemplateRef && !wtRef) ? undefined : new Set([...names(args), ...names(refArgs)]);
  if (isCron) checkSchedules(ctx, (doc.value.spec ?? {}) as Json);
  if (doc.kind === 'Workflow' || isCron) {
    args.forEach((p, i) => {
      if (p.value === undefined && p.valueFrom === undefined && opts.parameters?.[String(p.name)] === undefined && !refArgs.some((r) => r.name === p.name && (r.value !== undefined || r.default !== undefined))) {
        if (p.default === undefined && opts.submit) issue(ctx, [...specPath, 'arguments', 'parameters', i], `spec.arguments.parameters.${String(p.name)}.value is required: supply it at submission (tandem argo submit -p ${String(p.name)}=<value>)`);
      }
      const en = p.enum as unknown[] | undefined;
      const v = opts.parameters?.[String(p.name)] ?? p.value;
      if (en?.length && v !== undefined && !en.map(String).includes(String(v))) issue(ctx, [...specPath, 'arguments', 'parameters', i], `value ${JSON.stringify(v)} is not in enum [${en.join(', ')}]`);
    });
    for (const k of Object.keys(opts.parameters ?? {})) {
      if (ctx.globals && !ctx.globals.has(k)) issue(ctx, [...specPath, 'arguments'], `unknown workflow parameter "${k}" (declared: ${[...ctx.globals].join(', ') || 'none'})`);
    }
    const entry = spec.entrypoint ?? (wtRef?.spec as Json | undefined)?.entrypoint;
    if (entry === undefined && !spec.workflowTemplateRef) issue(ctx, specPath, 'spec.entrypoint is required');
  }
  if (typeof spec.entrypoint === 'string' && !spec.entrypoint.includes('{{') && !templates.has(spec.entrypoint) && !(spec.workflowTemplateRef && !wtRef)) {
    issue(ctx, [...specPath, 'entrypoint'], `entrypoint template "${spec.entrypoint}" not found`);
  }
  for (const k of ['onExit']) {
    const v = spec[k];
    if (typeof v === 'string' && !templates.has(v) && !(spec.workflowTemplateRef && !wtRef)) issue(ctx, [...specPath, k], `onExit template "${v}" not found`);
  }
  checkHookExpressions(ctx, [...specPath, 'hooks'], spec.hooks);
  for (const [hook, h] of Object.entries((spec.hooks ?? {}) as Record<string, Json>)) {
    if (h && typeof h.template === 'string' && !templates.has(h.template)) issue(ctx, [...specPath, 'hooks', hook, 'template'], `template "${h.template}" not found`);
  }
  tlist.forEach((t, i) => checkTemplate(ctx, t, [...specPath, 'templates', i]));
  return ctx.issues;
}
