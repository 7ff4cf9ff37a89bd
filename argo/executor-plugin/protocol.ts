// Argo's executor plugin protocol, the pure half: what the agent sends, what a reply looks like, how
// a `plugin: {tandem: …}` template becomes a pipeline spec and a workflow id, and how a Tandem run's
// state becomes an Argo node result. No I/O, so the unit lane tests it (test/unit/argo/executor-plugin.test.ts);
// the HTTP side is ./server.ts.
//
// Shapes follow argoproj/argo-workflows `pkg/plugins/executor` (ExecuteTemplateArgs/Reply) and
// `workflow/executor/agent.go` (executePluginTemplate): the agent keeps the first reply with a `node`,
// never asks again once the phase is Succeeded, asks again after `requeue` (a Go duration string, the
// JSON form of metav1.Duration) while it is anything else, and drops a non-final reply without `requeue`
// (the node would then wait forever). So every non-final reply here carries `requeue`.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseDuration } from '../../contract/duration.js';
import { SpecError, parsePipelineSpec, validatePipelineSpec } from '../../contract/parse.js';
import type { PipelineSpec } from '../../contract/pipeline.js';
import type { PipelineResult, PipelineStatus } from '../../contract/status.js';
import type { JobProgress } from '../../contract/outcome.js';
import { formatIssue, InputError } from '../../contract/input-error.js';
import { RUN_ID } from '../../contract/run-id.js';

/** The key under `plugin:` this plugin answers for: the plugin's name in its ExecutorPlugin manifest. */
export const PLUGIN_NAME = 'tandem';
export const EXECUTE_PATH = '/api/v1/template.execute';
/** How soon the agent asks again about a run that has not finished (overridable per template). */
export const DEFAULT_REQUEUE_MS = 30_000;

export type NodePhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Error';

export interface ArgoParameter {
  name: string;
  value?: string;
}

/** wfv1.NodeResult. Argo v3.7 copies only `phase`, `message` and `outputs` into the node. */
export interface NodeResult {
  phase: NodePhase;
  message?: string;
  outputs?: { parameters?: ArgoParameter[]; result?: string };
  /** "N/M" (wfv1.Progress). */
  progress?: string;
}

/** ExecuteTemplateReply; `{}` means "not my template". */
export interface ExecuteTemplateReply {
  node?: NodeResult;
  requeue?: string;
}

/** ExecuteTemplateArgs: the agent sends only the workflow's identity and the (resolved) template. */
export interface ExecuteTemplateArgs {
  workflow: { metadata: { name: string; namespace?: string; uid?: string } };
  template: ArgoTemplate;
}

export interface ArgoTemplate {
  name?: string;
  inputs?: { parameters?: ArgoParameter[] };
  plugin?: Record<string, unknown>;
  [k: string]: unknown;
}

const ArgsSchema = z.object({
  workflow: z.object({ metadata: z.object({ name: z.string().min(1), namespace: z.string().optional(), uid: z.string().optional() }).passthrough() }).passthrough(),
  template: z.object({ name: z.string().optional(), plugin: z.record(z.string(), z.unknown()).optional() }).passthrough(),
});

/** The request body, checked; a body Argo's agent would never send is a client error (400). */
export function parseArgs(body: unknown): ExecuteTemplateArgs | { error: string } {
  const r = ArgsSchema.safeParse(body);
  if (r.success) return r.data as ExecuteTemplateArgs;
  const i = r.error.issues[0]!;
  return { error: `invalid template.execute request: ${i.path.join('.') || '(body)'}: ${i.message}` };
}

/** What `plugin.tandem` may hold. */
const TandemPluginSchema = z
  .object({
    /** The pipeline spec, inline: a mapping, or YAML/JSON text (what `{{inputs.parameters.spec}}` gives). */
    pipeline: z.union([z.string().min(1), z.record(z.string(), z.unknown())]),
    /** Tells apart nodes whose template and inputs are identical (e.g. `{{retries}}` in a retried template). */
    key: z.string().max(100).optional(),
    /** How soon the agent asks again while the run is not final, e.g. "30s", "2m". */
    requeue: z
      .string()
      .refine((v) => (parseDuration(v) ?? 0) >= 1000, { message: 'must be a duration of at least 1s, such as "30s" or "2m"' })
      .optional(),
  })
  .strict();

export type TandemTemplate =
  | { kind: 'foreign' }
  | { kind: 'invalid'; message: string }
  | { kind: 'tandem'; spec: PipelineSpec; requeueMs: number; workflowId: string };

function issueText(e: InputError, prefix: string): string {
  return e.issues.map((i) => formatIssue({ ...i, path: i.path ? `${prefix}.${i.path}` : prefix, source: undefined }).replace(/^ {2}- /, '')).join('; ');
}

/**
 * Reads a template: not ours (`{}`), ours but invalid (a Failed node whose message names the field,
 * as `plugin.tandem.pipeline.stages.train.steps: …`), or a spec with the run's workflow id.
 */
export function readTemplate(args: ExecuteTemplateArgs): TandemTemplate {
  const plugin = args.template.plugin;
  if (!plugin || !(PLUGIN_NAME in plugin)) return { kind: 'foreign' };
  const conf = TandemPluginSchema.safeParse(plugin[PLUGIN_NAME]);
  if (!conf.success) {
    // Every problem at once, each with its field.
    const text = conf.error.issues.map((i) => {
      const path = ['plugin', PLUGIN_NAME, ...i.path.map(String)].join('.');
      if (i.code === 'unrecognized_keys') return `${path}: unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `"${k}"`).join(', ')}`;
      if (i.path[0] === 'pipeline' && i.path.length === 1) return `${path}: must be the pipeline spec, a mapping or YAML text`;
      return `${path}: ${i.message}`;
    });
    return { kind: 'invalid', message: text.join('; ') };
  }
  const where = `plugin.${PLUGIN_NAME}.pipeline`;
  let spec: PipelineSpec;
  try {
    spec = typeof conf.data.pipeline === 'string' ? parsePipelineSpec(conf.data.pipeline, where) : validatePipelineSpec(conf.data.pipeline, where);
  } catch (e) {
    if (e instanceof SpecError) return { kind: 'invalid', message: `invalid pipeline spec: ${issueText(e, where)}` };
    throw e;
  }
  return { kind: 'tandem', spec, requeueMs: conf.data.requeue ? parseDuration(conf.data.requeue)! : DEFAULT_REQUEUE_MS, workflowId: workflowIdFor(args, conf.data.key) };
}

/** Stable JSON: keys sorted, so the same template always hashes the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const label = (s: string, max: number) => s.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, max) || 'x';

/**
 * The Tandem workflow id of a plugin node. The agent does not send the node's id, only the workflow's
 * identity and the resolved template, so the id is derived from the Argo workflow's uid (a resubmitted
 * workflow is a new uid, a new run) and the node's template identity: its name, its resolved
 * `plugin.tandem` and input parameters (loop iterations differ there), and the optional `key`. The
 * same node asked again (requeue, a restarted agent pod) maps to the same id, and Temporal's id
 * policies (./server.ts) make that one run. Readable prefix for operators, hash for uniqueness.
 */
export function workflowIdFor(args: ExecuteTemplateArgs, key?: string): string {
  const m = args.workflow.metadata;
  const t = args.template;
  const identity = canonical({
    workflow: m.uid || `${m.namespace ?? ''}/${m.name}`,
    template: t.name ?? '',
    tandem: t.plugin?.[PLUGIN_NAME] ?? null,
    inputs: (t.inputs?.parameters ?? []).map((p) => [p.name, p.value ?? null]),
    key: key ?? null,
  });
  const hash = createHash('sha256').update(identity).digest('hex').slice(0, 16);
  const id = `argo-${label(m.name, 80)}-${label(t.name ?? 'plugin', 60)}-${hash}`;
  // Every character above is in RUN_ID's alphabet; the check is a guard for future edits.
  if (!RUN_ID.test(id)) throw new Error(`internal: derived workflow id ${id} is not a valid run id`);
  return id;
}

/** A Go duration string the agent's metav1.Duration parses. */
export function goDuration(ms: number): string {
  return `${Math.max(1, Math.round(ms / 1000))}s`;
}

/** What the server observed of a run: its Temporal close state, its status query, live progress. */
export interface RunObservation {
  workflowId: string;
  /** Temporal's execution status name: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, … */
  execution: string;
  /** The status query's answer; undefined when the query could not be answered (no worker polling). */
  status?: PipelineStatus;
  queryError?: string;
  result?: PipelineResult;
  /** Why a closed run failed (the workflow's failure message). */
  failure?: string;
  live?: JobProgress;
}

export function progressOf(p: JobProgress | undefined): string | undefined {
  if (!p || !(p.total > 0)) return undefined;
  return `${Math.min(p.step, p.total)}/${p.total}`;
}

/** A successful run's outputs, as Argo output parameters (names Argo allows: letters, digits, - and _). */
export function outputsOf(workflowId: string, r: PipelineResult): NonNullable<NodeResult['outputs']> {
  return {
    parameters: [
      { name: 'workflow-id', value: workflowId },
      { name: 'endpoint', value: r.endpoint },
      { name: 'checkpoint', value: r.checkpoint.path },
      { name: 'checkpoint-step', value: String(r.checkpoint.step) },
      { name: 'model', value: r.model },
      { name: 'completion', value: r.completion },
      { name: 'training-attempts', value: String(r.trainingAttempts) },
    ],
    result: JSON.stringify(r),
  };
}

function started(s: PipelineStatus): boolean {
  return Object.values(s.stages).some((st) => st.status !== 'pending' || st.attempts > 0);
}

/** Maps a run onto the node's phase, message, progress and outputs, and when to ask again. */
export function replyFor(o: RunObservation, requeueMs: number): ExecuteTemplateReply {
  const requeue = goDuration(requeueMs);
  const trainProgress = progressOf(o.status?.stages.train.progress ?? o.live);
  const run = `Tandem run ${o.workflowId}`;
  if (o.execution === 'COMPLETED') {
    const r = o.result ?? o.status?.result;
    if (!r) return { node: { phase: 'Failed', message: `${run} completed without a result` } };
    return { node: { phase: 'Succeeded', message: `${run} completed: ${r.endpoint}`, outputs: outputsOf(o.workflowId, r), ...(trainProgress ? { progress: trainProgress } : {}) } };
  }
  if (o.execution !== 'RUNNING') {
    const why = o.failure ?? o.status?.error ?? o.execution.toLowerCase();
    return { node: { phase: 'Failed', message: `${run} ${o.execution.toLowerCase().replace('_', ' ')}: ${why}`, ...(trainProgress ? { progress: trainProgress } : {}) } };
  }
  const s = o.status;
  if (!s) return { node: { phase: 'Pending', message: `${run} started; its status is not available yet (${o.queryError ?? 'no answer'})` }, requeue };
  if (!started(s)) return { node: { phase: 'Pending', message: `${run} waiting to start its first stage` }, requeue };
  const stage = s.stage ? s.stages[s.stage] : undefined;
  const where = stage?.runtime ? ` on ${stage.runtime}${stage.site ? ` (${stage.site})` : ''}` : '';
  // Argo copies only a reply's phase, message and outputs into the node (reconcileTaskSet drops
  // `progress`), so the training progress is also written into the message, where users see it.
  const message =
    s.phase === 'compensating'
      ? `${run} compensating after: ${s.error ?? 'a failure'}`
      : `${run}: stage ${s.stage ?? '?'} ${stage?.status ?? 'running'}${stage && stage.attempts > 1 ? ` (attempt ${stage.attempts})` : ''}${where}${trainProgress ? `, step ${trainProgress}` : ''}`;
  return { node: { phase: 'Running', message, ...(trainProgress ? { progress: trainProgress } : {}) }, requeue };
}
