// argoWorkflow: runs an Argo Workflow spec (templateRefs already inlined) on Temporal. Steps, DAGs,
// loops, conditions, retries, suspend, exit handlers and deadlines are interpreted here, in
// deterministic workflow code; every pod, HTTP call and resource is an activity. Each retry attempt
// is a fresh activity with its own deterministic job name, its backoff a durable timer.
import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  condition,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { createArgoActivities } from '../../activities/argo/index.js';
import { parseDuration } from '../../contract/duration.js';
import { dependsOf, evaluateDepends, parseDepends, type TaskResult } from '../../argo/lang/depends.js';
import { evaluateExpr } from '../../argo/lang/expr.js';
import { evaluateWhen } from '../../argo/lang/govaluate.js';
import { argoLock, lockAcquireSignal, lockGrantedSignal, lockReleaseSignal, type LockRequest } from './lock.js';
import { scopeEnv, stringify, substitute, substituteDeep, type Scope } from '../../argo/lang/tags.js';
import type { ArgoNode, ArgoRunInput, ArgoStatus, Json, NodeOutputs, Phase, RunPodInput } from '../../argo/lang/types.js';

type Activities = ReturnType<typeof createArgoActivities>;

/** patched() ids of the interpreter: runs recorded before a change replay without it. */
export const ARGO_PATCHES = { memoize: 'argo-memoize', sync: 'argo-sync' } as const;

export const argoStatusQuery = defineQuery<ArgoStatus>('argo.status');
/** Resumes suspended nodes (all, or those whose name contains `node`), optionally supplying outputs. */
export const argoResumeSignal = defineSignal<[{ node?: string; parameters?: Record<string, string> }?]>('argo.resume');
/** Stops the workflow: running nodes are cancelled, the exit handler still runs. */
export const argoStopSignal = defineSignal<[{ message?: string }?]>('argo.stop');

interface NodeResult {
  id: string;
  phase: Phase;
  message?: string;
  outputs: NodeOutputs;
  daemoned?: boolean;
}

interface Call {
  template: Json;
  args: { parameters?: Json[]; artifacts?: Json[] };
  name: string;
  displayName: string;
  parentId?: string;
  /** Variables visible to the callee's `{{…}}` besides its inputs (retries, lastRetry…). */
  extra?: Scope;
}

const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const emptyOutputs = (): NodeOutputs => ({ parameters: {}, artifacts: {} });
const failed = (p: Phase) => p === 'Failed' || p === 'Error';

class Semaphore {
  private used = 0;
  constructor(private readonly limit: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.limit > 0) {
      await condition(() => this.used < this.limit);
      this.used++;
    }
    try {
      return await fn();
    } finally {
      if (this.limit > 0) this.used--;
    }
  }
}

class UserError extends Error {}

/** One lock a `synchronization` block names: its lock workflow id and how to read its limit. */
export interface LockRef {
  id: string;
  /** Argo's name for it: `<ns>/Mutex/<name>` or `<ns>/ConfigMap/<configMap>/<key>`. */
  label: string;
  kind: 'mutex' | 'semaphore';
  namespace: string;
  configMap?: string;
  key?: string;
}

/**
 * The locks of a (substituted) `synchronization` block, sorted by id so that two holders needing
 * the same locks always take them in the same order (no lock-order deadlock). `mutex`/`semaphore`
 * (Argo ≤ 3.5) and `mutexes`/`semaphores` (3.6+) are both read; a `database` mutex is the same
 * namespace-wide mutex here (Tandem's locks are already shared by every worker of the namespace).
 */
export function syncLocks(sync: Json | undefined, namespace: string): LockRef[] {
  if (!sync) return [];
  const out = new Map<string, LockRef>();
  const one = (v: unknown): Json[] => (v && typeof v === 'object' && !Array.isArray(v) ? [v as Json] : []);
  for (const m of [...one(sync.mutex), ...arr(sync.mutexes)]) {
    if (typeof m.name !== 'string' || !m.name) throw new UserError('synchronization: a mutex needs a name');
    const ns = typeof m.namespace === 'string' && m.namespace ? m.namespace : namespace;
    const id = `argo-sync-${ns}-mutex-${m.name}`;
    out.set(id, { id, label: `${ns}/Mutex/${m.name}`, kind: 'mutex', namespace: ns });
  }
  for (const s of [...one(sync.semaphore), ...arr(sync.semaphores)]) {
    const ref = s.configMapKeyRef as Json | undefined;
    if (!ref) {
      if (s.database) throw new UserError("synchronization: database semaphores need Argo's synchronization database, which Tandem does not have; use a configMapKeyRef semaphore");
      throw new UserError('synchronization: a semaphore needs a configMapKeyRef');
    }
    if (typeof ref.name !== 'string' || typeof ref.key !== 'string') throw new UserError('synchronization: semaphore configMapKeyRef needs name and key');
    const ns = typeof s.namespace === 'string' && s.namespace ? s.namespace : namespace;
    const id = `argo-sync-${ns}-semaphore-${ref.name}/${ref.key}`;
    out.set(id, { id, label: `${ns}/ConfigMap/${ref.name}/${ref.key}`, kind: 'semaphore', namespace: ns, configMap: ref.name, key: ref.key });
  }
  return [...out.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export async function argoWorkflow(input: ArgoRunInput): Promise<ArgoStatus> {
  const { spec } = input;
  const info = workflowInfo();
  const now = () => new Date().toISOString();
  const templates = new Map(arr(spec.templates).map((t) => [String(t.name), t]));
  const status: ArgoStatus = { name: input.name, phase: 'Running', startedAt: now(), entrypoint: String(spec.entrypoint), nodes: {} };
  let counter = 0;
  const resumes: { node?: string; parameters?: Record<string, string> }[] = [];
  let stopMessage: string | undefined;
  setHandler(argoStatusQuery, () => status);
  setHandler(argoResumeSignal, (r) => void resumes.push(r ?? {}));

  const heartbeatTimeout = input.tuning?.heartbeatTimeoutMs ?? 30_000;
  const acts = proxyActivities<Activities>({
    startToCloseTimeout: '30 days',
    heartbeatTimeout,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10, nonRetryableErrorTypes: ['RuntimeUnavailable', 'InvalidRequest', 'ArgoPodFailed'] },
  });

  // ---- global scope: workflow.* variables ---------------------------------------------------------
  const global: Scope = {
    'workflow.name': input.name,
    'workflow.namespace': input.namespace ?? 'default',
    'workflow.uid': info.runId,
    'workflow.serviceAccountName': String(spec.serviceAccountName ?? 'default'),
    'workflow.mainEntrypoint': String(spec.entrypoint),
    'workflow.priority': String(spec.priority ?? 0),
    'workflow.creationTimestamp': status.startedAt,
    'workflow.status': 'Running',
  };
  const created = new Date(status.startedAt);
  const ts: Record<string, string> = {
    Y: String(created.getUTCFullYear()), m: String(created.getUTCMonth() + 1).padStart(2, '0'), d: String(created.getUTCDate()).padStart(2, '0'),
    H: String(created.getUTCHours()).padStart(2, '0'), M: String(created.getUTCMinutes()).padStart(2, '0'), S: String(created.getUTCSeconds()).padStart(2, '0'),
    s: String(Math.floor(created.getTime() / 1000)), RFC3339: status.startedAt.replace(/\.\d+Z$/, 'Z'),
  };
  for (const [k, v] of Object.entries(ts)) global[`workflow.creationTimestamp.${k}`] = v;
  // A run started by a Schedule (CronWorkflow): the time it was scheduled for, as Argo sets it.
  const scheduled = (info.searchAttributes?.TemporalScheduledStartTime as unknown[] | undefined)?.[0];
  if (scheduled !== undefined) global['workflow.scheduledTime'] = new Date(scheduled as string).toISOString().replace(/\.\d+Z$/, 'Z');
  for (const [k, v] of Object.entries(input.labels ?? {})) global[`workflow.labels.${k}`] = v;
  for (const [k, v] of Object.entries(input.annotations ?? {})) global[`workflow.annotations.${k}`] = v;
  global['workflow.labels.json'] = JSON.stringify(input.labels ?? {});
  global['workflow.annotations.json'] = JSON.stringify(input.annotations ?? {});
  const wfParams = arr((spec.arguments as Json | undefined)?.parameters);
  for (const p of wfParams) {
    const v = p.value ?? p.default;
    if (v !== undefined) global[`workflow.parameters.${String(p.name)}`] = substitute(String(v), global);
  }
  global['workflow.parameters.json'] = JSON.stringify(wfParams.map((p) => ({ name: p.name, value: global[`workflow.parameters.${String(p.name)}`] })));
  const wfArtifacts: Record<string, Json> = Object.fromEntries(arr((spec.arguments as Json | undefined)?.artifacts).map((a) => [String(a.name), a]));
  const workflowParallelism = new Semaphore(Number(spec.parallelism ?? 0));

  // ---- synchronization: mutexes and semaphores shared across workflows (workflows/argo/lock.ts) -----
  const granted = new Set<string>();
  setHandler(lockGrantedSignal, ({ lock, key }) => void granted.add(`${lock}|${key}`));

  /** Puts `req` in the lock's queue: signals the running lock, or starts it with `req` queued. */
  async function sendAcquire(lock: LockRef, req: LockRequest): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      // Another run started the lock just before us (signal it at once), or it keeps completing
      // between our signal and our start (back off).
      if (attempt > 1) await sleep(Math.min(50 * 2 ** (attempt - 2), 5000));
      try {
        await getExternalWorkflowHandle(lock.id).signal(lockAcquireSignal, req);
        return;
      } catch (e) {
        if (isCancellation(e)) throw e;
      }
      try {
        await startChild(argoLock, {
          workflowId: lock.id,
          args: [{ id: lock.id, limit: req.limit, holders: [], queue: [req] }],
          // The lock outlives whichever run happened to start it.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          cancellationType: ChildWorkflowCancellationType.ABANDON,
          memo: { argoLock: lock.label },
        });
        return;
      } catch (e) {
        if (isCancellation(e) || (e as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw e;
      }
    }
  }

  async function releaseLocks(held: LockRef[], key: string): Promise<void> {
    await CancellationScope.nonCancellable(async () => {
      for (const l of held) {
        try {
          await getExternalWorkflowHandle(l.id).signal(lockReleaseSignal, { key });
        } catch (e) {
          // The lock is gone: nothing is held there any more.
          void e;
        }
        granted.delete(`${l.id}|${key}`);
      }
    });
  }

  /**
   * Takes every lock in order, waiting (Pending, with Argo's message) until each is granted. On any
   * failure or cancellation the locks already taken or queued for are released before rethrowing.
   */
  async function acquireLocks(locks: LockRef[], key: string, holder: string, waiting: (msg?: string) => void): Promise<LockRef[]> {
    const held: LockRef[] = [];
    try {
      for (const l of locks) {
        const limit = l.kind === 'mutex' ? 1 : await acts.argoSyncLimit({ namespace: l.namespace, configMap: l.configMap!, key: l.key! });
        held.push(l);
        await CancellationScope.nonCancellable(() => sendAcquire(l, { key, workflowId: info.workflowId, runId: info.runId, limit, holder }));
        if (!granted.has(`${l.id}|${key}`)) {
          waiting(`Waiting for ${l.label} lock. Lock limit: ${limit}`);
          await condition(() => granted.has(`${l.id}|${key}`));
        }
      }
      waiting(undefined);
      return held;
    } catch (e) {
      await releaseLocks(held, key);
      throw e;
    }
  }

  // ---- node bookkeeping -------------------------------------------------------------------------
  function newNode(n: Omit<ArgoNode, 'id' | 'children' | 'phase' | 'startedAt'> & { phase?: Phase }): ArgoNode {
    const id = counter === 0 ? input.name : `${input.name}-${counter}`;
    counter++;
    const node: ArgoNode = { id, children: [], phase: 'Running', startedAt: now(), ...n } as ArgoNode;
    status.nodes[id] = node;
    if (n.parentId) status.nodes[n.parentId]?.children.push(id);
    return node;
  }
  function finish(node: ArgoNode, phase: Phase, message?: string, outputs?: NodeOutputs): NodeResult {
    node.phase = phase;
    node.finishedAt = now();
    if (message) node.message = message;
    if (outputs) node.outputs = outputs;
    return { id: node.id, phase, message, outputs: outputs ?? emptyOutputs(), daemoned: node.daemoned };
  }

  // ---- inputs ----------------------------------------------------------------------------------------
  function bindInputs(tmpl: Json, args: Call['args'], scope: Scope): { scope: Scope; artifacts: RunPodInput['inputArtifacts'] } {
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
      const from = given.from !== undefined ? substitute(String(given.from), local) : undefined;
      const raw = (given.raw as Json | undefined)?.data;
      if (from === undefined && raw === undefined) {
        if (a.optional === true) continue;
        const src = Object.keys(given).find((k) => ['s3', 'http', 'git', 'gcs', 'oss', 'hdfs', 'artifactory', 'azure'].includes(k));
        throw new UserError(`inputs.artifacts.${name}: ${src ? `${src} artifacts are not available on this runtime` : 'not supplied'}`);
      }
      if (path) artifacts.push({ name, path, from, raw: raw === undefined ? undefined : substitute(String(raw), local), optional: a.optional === true, mode: a.mode as number | undefined });
      else if (from) local[`inputs.artifacts.${name}`] = from;
    }
    return { scope: local, artifacts };
  }

  // ---- outputs of non-pod templates ------------------------------------------------------------------
  function templateOutputs(tmpl: Json, scope: Scope, base: NodeOutputs): NodeOutputs {
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

  /** Makes a finished child's results visible as steps.<name>.* / tasks.<name>.*. */
  function publish(scope: Scope, prefix: string, r: NodeResult, node?: ArgoNode): void {
    scope[`${prefix}.status`] = r.phase;
    scope[`${prefix}.id`] = r.id;
    if (node?.startedAt) scope[`${prefix}.startedAt`] = node.startedAt;
    if (node?.finishedAt) scope[`${prefix}.finishedAt`] = node.finishedAt;
    if (r.outputs.result !== undefined) scope[`${prefix}.outputs.result`] = r.outputs.result;
    if (r.outputs.exitCode !== undefined) scope[`${prefix}.exitCode`] = r.outputs.exitCode;
    for (const [k, v] of Object.entries(r.outputs.parameters)) scope[`${prefix}.outputs.parameters.${k}`] = v;
    for (const [k, v] of Object.entries(r.outputs.artifacts)) scope[`${prefix}.outputs.artifacts.${k}`] = v;
    scope[`${prefix}.outputs.parameters`] = JSON.stringify(r.outputs.parameters);
  }

  // ---- loops -------------------------------------------------------------------------------------
  function expandItems(step: Json, scope: Scope): unknown[] | undefined {
    if (step.withItems !== undefined) return substituteDeep(step.withItems as unknown[], scope);
    if (step.withParam !== undefined) {
      const text = substitute(String(step.withParam), scope);
      let list: unknown;
      try {
        list = JSON.parse(text);
      } catch {
        throw new UserError(`withParam value could not be parsed as a JSON list: ${text}`);
      }
      if (!Array.isArray(list)) throw new UserError(`withParam value is not a JSON list: ${text}`);
      return list;
    }
    if (step.withSequence !== undefined) {
      const seq = substituteDeep(step.withSequence as Json, scope);
      const start = seq.start !== undefined ? Number(seq.start) : 0;
      const end = seq.end !== undefined ? Number(seq.end) : start + Number(seq.count ?? 0) - 1;
      if (seq.count !== undefined && seq.end !== undefined) throw new UserError('withSequence: only one of count or end may be set');
      const out: string[] = [];
      const fmt = seq.format !== undefined ? String(seq.format) : undefined;
      const step1 = end >= start ? 1 : -1;
      for (let i = start; step1 > 0 ? i <= end : i >= end; i += step1) out.push(fmt ? printf(fmt, i) : String(i));
      return out;
    }
    return undefined;
  }

  function itemScope(scope: Scope, item: unknown): Scope {
    const s: Scope = { ...scope, item: stringify(item) };
    if (item && typeof item === 'object' && !Array.isArray(item)) for (const [k, v] of Object.entries(item)) s[`item.${k}`] = stringify(v);
    return s;
  }

  function itemLabel(item: unknown): string {
    if (item && typeof item === 'object' && !Array.isArray(item)) return Object.entries(item).map(([k, v]) => `${k}:${stringify(v)}`).join(',');
    return stringify(item);
  }

  function resolveCallee(step: Json): Json {
    if (step.inline) return { name: `${String(step.name)}-inline`, ...(step.inline as Json) };
    const name = String(step.template);
    const t = templates.get(name);
    if (!t) throw new UserError(`template "${name}" not found`);
    return t;
  }

  /** Runs one step or task, including its loop expansion; returns the (loop) node's result. */
  async function runCall(step: Json, scope: Scope, parentId: string, parentName: string, parallel?: Semaphore): Promise<NodeResult> {
    const stepName = String(step.name);
    const items = expandItems(step, scope);
    const callee = resolveCallee(step);
    const one = async (s: Scope, display: string, parent: string): Promise<NodeResult> => {
      if (step.when !== undefined) {
        const when = substitute(String(step.when), s);
        let ok: boolean;
        try {
          ok = /^\s*\{\{=/.test(String(step.when)) ? when === 'true' : evaluateWhen(when);
        } catch (e) {
          const n = newNode({ name: `${parentName}.${display}`, displayName: display, type: 'Skipped', parentId: parent, templateName: String(callee.name) });
          return finish(n, 'Error', (e as Error).message);
        }
        if (!ok) {
          const n = newNode({ name: `${parentName}.${display}`, displayName: display, type: 'Skipped', parentId: parent, templateName: String(callee.name) });
          return finish(n, 'Skipped', `when '${when}' evaluated false`);
        }
      }
      const args = substituteDeep((step.arguments ?? {}) as Call['args'], s);
      const run = () => runTemplate({ template: callee, args, name: `${parentName}.${display}`, displayName: display, parentId: parent });
      const r = await (parallel ? parallel.run(run) : run());
      const exitTmpl = (step.onExit as string | undefined) ?? (((step.hooks as Json | undefined)?.exit as Json | undefined)?.template as string | undefined);
      if (exitTmpl) {
        const hs: Scope = { ...s };
        publish(hs, `steps.${stepName}`, r, status.nodes[r.id]);
        publish(hs, `tasks.${stepName}`, r, status.nodes[r.id]);
        const t = templates.get(exitTmpl);
        const hookArgs = substituteDeep((((step.hooks as Json | undefined)?.exit as Json | undefined)?.arguments ?? {}) as Call['args'], hs);
        if (t) await runTemplate({ template: t, args: hookArgs, name: `${parentName}.${display}.onExit`, displayName: `${display}.onExit`, parentId: parent });
      }
      return r;
    };
    if (items === undefined) return one(scope, stepName, parentId);
    // A loop: a group node whose children are the items, run in parallel (bounded by parallelism).
    const group = newNode({ name: `${parentName}.${stepName}`, displayName: stepName, type: 'TaskGroup', parentId, templateName: String(callee.name) });
    const results = await Promise.all(items.map((item, i) => one(itemScope(scope, item), `${stepName}(${i}:${itemLabel(item)})`, group.id)));
    const outputs = emptyOutputs();
    const resultList = results.filter((r) => r.outputs.result !== undefined).map((r) => r.outputs.result!);
    if (resultList.length) outputs.result = JSON.stringify(resultList.map((x) => tryJson(x)));
    const paramNames = new Set(results.flatMap((r) => Object.keys(r.outputs.parameters)));
    for (const p of paramNames) outputs.parameters[p] = JSON.stringify(results.filter((r) => p in r.outputs.parameters).map((r) => r.outputs.parameters[p]));
    const bad = results.find((r) => failed(r.phase));
    const allSkipped = results.length > 0 && results.every((r) => r.phase === 'Skipped');
    const res = finish(group, bad ? bad.phase : allSkipped ? 'Skipped' : 'Succeeded', bad?.message, outputs);
    (res as NodeResult & { children?: Phase[] }).children = results.map((r) => r.phase);
    return res;
  }

  // ---- steps -------------------------------------------------------------------------------------
  async function runSteps(tmpl: Json, scope: Scope, node: ArgoNode): Promise<NodeResult> {
    const local: Scope = { ...scope };
    const parallel = tmpl.parallelism !== undefined ? new Semaphore(Number(tmpl.parallelism)) : undefined;
    const groups = Array.isArray(tmpl.steps) ? (tmpl.steps as unknown[]) : [];
    const daemons: CancellationScope[] = [];
    let outcome: { phase: Phase; message?: string } = { phase: 'Succeeded' };
    try {
      for (let gi = 0; gi < groups.length; gi++) {
        const group = arr(groups[gi]);
        const g = newNode({ name: `${node.name}[${gi}]`, displayName: `[${gi}]`, type: 'StepGroup', parentId: node.id });
        const results = await Promise.all(
          group.map(async (step) => {
            try {
              return await runCall(step, local, g.id, node.name, parallel);
            } catch (e) {
              if (!(e instanceof UserError)) throw e;
              const n = newNode({ name: `${node.name}.${String(step.name)}`, displayName: String(step.name), type: 'Pod', parentId: g.id });
              return finish(n, 'Error', e.message);
            }
          }),
        );
        group.forEach((step, i) => publish(local, `steps.${String(step.name)}`, results[i]!, status.nodes[results[i]!.id]));
        const bad = group.map((s, i) => [s, results[i]!] as const).find(([s, r]) => failed(r.phase) && !continueOn(s, r.phase));
        finish(g, bad ? bad[1].phase : 'Succeeded', bad ? `child '${bad[1].id}' failed` : undefined);
        if (bad) {
          outcome = { phase: bad[1].phase, message: bad[1].message ?? `child '${bad[1].id}' failed` };
          break;
        }
      }
    } finally {
      daemons.forEach((d) => d.cancel());
    }
    return finish(node, outcome.phase, outcome.message, failed(outcome.phase) ? undefined : templateOutputs(tmpl, local, emptyOutputs()));
  }

  function continueOn(step: Json, phase: Phase): boolean {
    const c = (step.continueOn ?? {}) as Json;
    return (phase === 'Failed' && c.failed === true) || (phase === 'Error' && c.error === true);
  }

  // ---- dag ---------------------------------------------------------------------------------------
  async function runDag(tmpl: Json, scope: Scope, node: ArgoNode): Promise<NodeResult> {
    const dag = tmpl.dag as Json;
    const tasks = arr(dag.tasks);
    const failFast = dag.failFast !== false;
    const parallel = tmpl.parallelism !== undefined ? new Semaphore(Number(tmpl.parallelism)) : undefined;
    const local: Scope = { ...scope };
    const results: Record<string, TaskResult & { r?: NodeResult }> = {};
    const deps = new Map(tasks.map((t) => {
      const d = dependsOf(t as { depends?: string; dependencies?: string[] });
      return [String(t.name), d ? parseDepends(d) : undefined] as const;
    }));
    const needed = (n: string): string[] => {
      const d = deps.get(n);
      return d ? [...new Set(collect(d))] : [];
    };
    // Targets: only the named tasks and what they need run.
    const targetText = dag.target !== undefined ? substitute(String(dag.target), scope) : '';
    let wanted = new Set(tasks.map((t) => String(t.name)));
    if (targetText.trim()) {
      wanted = new Set();
      const add = (n: string) => {
        if (wanted.has(n)) return;
        wanted.add(n);
        needed(n).forEach(add);
      };
      targetText.split(/\s+/).filter(Boolean).forEach(add);
    }
    // A failure is handled when some task's `depends` names it explicitly (B.Failed, B.Errored…):
    // then neither failFast nor the DAG's phase treat it as fatal.
    const handled = (name: string) => tasks.some((t) => /[.!]|Failed|Errored/.test(String(t.depends ?? '')) && new RegExp(`(^|[^A-Za-z0-9_-])${name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}\\.(Failed|Errored|AllFailed|AnySucceeded)`).test(String(t.depends ?? '')));
    const started = new Set<string>();
    let stopScheduling = false;
    const running = new Map<string, Promise<void>>();
    for (;;) {
      for (const t of tasks) {
        const name = String(t.name);
        if (started.has(name) || !wanted.has(name)) continue;
        const req = needed(name);
        if (!req.every((d) => results[d])) continue;
        if (stopScheduling) continue;
        started.add(name);
        const dep = deps.get(name);
        let go = true;
        try {
          go = dep ? evaluateDepends(dep, results) : true;
        } catch {
          go = false;
        }
        if (!go) {
          const n = newNode({ name: `${node.name}.${name}`, displayName: name, type: 'Skipped', parentId: node.id, templateName: String(t.template ?? '') });
          const r = finish(n, 'Omitted', 'omitted: depends condition not met');
          results[name] = { phase: 'Omitted', r };
          publish(local, `tasks.${name}`, r, n);
          continue;
        }
        running.set(
          name,
          (async () => {
            let r: NodeResult;
            try {
              r = await runCall(t, local, node.id, node.name, parallel);
            } catch (e) {
              if (!(e instanceof UserError)) throw e;
              const n = newNode({ name: `${node.name}.${name}`, displayName: name, type: 'Pod', parentId: node.id });
              r = finish(n, 'Error', e.message);
            }
            results[name] = { phase: r.phase, daemoned: r.daemoned, children: (r as NodeResult & { children?: Phase[] }).children, r };
            publish(local, `tasks.${name}`, r, status.nodes[r.id]);
            if (failed(r.phase) && failFast && !continueOn(t, r.phase) && !handled(name)) stopScheduling = true;
            running.delete(name);
          })(),
        );
      }
      if (running.size === 0) break;
      await Promise.race(running.values());
    }
    // The DAG fails when a task failed and nothing handles it: not continueOn, and no task's
    // `depends` names its failure explicitly (e.g. `B.Failed`, `!B.Succeeded`).
    const bad = tasks.map((t) => [t, results[String(t.name)]] as const).find(([t, r]) => r && failed(r.phase) && !continueOn(t, r.phase) && !handled(String(t.name)));
    if (bad) return finish(node, bad[1]!.phase, bad[1]!.r?.message ?? `task ${String(bad[0].name)} failed`);
    return finish(node, 'Succeeded', undefined, templateOutputs(tmpl, local, emptyOutputs()));
  }

  // ---- leaf templates ----------------------------------------------------------------------------
  function podInput(tmpl: Json, scope: Scope, node: ArgoNode, artifacts: RunPodInput['inputArtifacts'], attempt: number): RunPodInput {
    const leaf = substituteDeep(tmpl, scope);
    const c = (leaf.container ?? leaf.script ?? {}) as Json;
    const plugin = leaf.plugin as Json | undefined;
    const slurm = (plugin?.slurm as Json | undefined) ?? undefined;
    const annotations = ((leaf.metadata as Json | undefined)?.annotations ?? {}) as Record<string, string>;
    const target = slurm ? 'slurm' : ((annotations['tandem.io/target'] ?? 'local') as RunPodInput['target']);
    const env: Record<string, string> = {};
    const envFrom: NonNullable<RunPodInput['envFrom']> = [];
    for (const e of arr(c.env)) {
      if (e.value !== undefined) env[String(e.name)] = String(e.value);
      const vf = (e.valueFrom ?? {}) as Json;
      const sk = (vf.secretKeyRef ?? vf.configMapKeyRef) as Json | undefined;
      if (sk) envFrom.push({ name: String(e.name), [vf.secretKeyRef ? 'secret' : 'configMap']: String(sk.name), key: String(sk.key), optional: sk.optional === true });
      else if (vf.fieldRef) env[String(e.name)] = String(((vf.fieldRef as Json).fieldPath as string) === 'metadata.name' ? node.id : '');
    }
    const deadline = leaf.activeDeadlineSeconds ?? leaf.timeout;
    const timeoutMs = deadline !== undefined ? parseDuration(String(deadline)) : undefined;
    return {
      // The run id's random tail tells a retried run's pods from the previous attempt's (same node ids).
      jobName: `argo-${input.name}-${node.id.slice(input.name.length + 1) || '0'}-${attempt}-${info.runId.replace(/-/g, '').slice(-8)}`.toLowerCase().replace(/[^a-z0-9.-]+/g, '-').slice(0, 120),
      target,
      templateName: String(tmpl.name),
      ...(Object.keys(annotations).length ? { annotations } : {}),
      kind: slurm ? 'plugin' : leaf.script ? 'script' : 'container',
      image: c.image as string | undefined,
      command: (c.command as string[] | undefined) ?? [],
      args: (c.args as string[] | undefined) ?? [],
      source: (leaf.script as Json | undefined)?.source as string | undefined,
      env,
      envFrom,
      workingDir: c.workingDir as string | undefined,
      timeoutMs,
      inputArtifacts: artifacts,
      outputParameters: arr((leaf.outputs as Json | undefined)?.parameters)
        .filter((p) => (p.valueFrom as Json | undefined)?.path !== undefined)
        .map((p) => ({ name: String(p.name), path: String((p.valueFrom as Json).path), default: (p.valueFrom as Json).default as string | undefined })),
      outputArtifacts: arr((leaf.outputs as Json | undefined)?.artifacts).filter((a) => a.path !== undefined).map((a) => ({ name: String(a.name), path: String(a.path), optional: a.optional === true })),
      artifactPrefix: `${input.artifactRoot ?? ''}${input.name}/${node.id}`,
      slurm,
      slurmFallback: annotations['tandem.io/slurm-fallback'] === 'fail' ? 'fail' : annotations['tandem.io/slurm-fallback'] === 'local' ? 'local' : undefined,
    };
  }

  async function runPod(tmpl: Json, scope: Scope, node: ArgoNode, artifacts: RunPodInput['inputArtifacts'], attempt: number): Promise<NodeResult> {
    const pod = podInput(tmpl, scope, node, artifacts, attempt);
    node.target = pod.target;
    node.jobName = pod.jobName;
    if (tmpl.daemon === true) {
      // A daemon runs in the background until its parent template ends; dependents see it as Daemoned.
      node.daemoned = true;
      const s = new CancellationScope();
      s.run(() => workflowParallelism.run(() => acts.argoRunPod(pod))).catch(() => undefined);
      daemonScopes.push(s);
      return { id: node.id, phase: 'Succeeded', outputs: emptyOutputs(), daemoned: true };
    }
    try {
      const r = await workflowParallelism.run(() => acts.argoRunPod(pod));
      node.target = r.target;
      const outputs: NodeOutputs = { parameters: r.parameters, artifacts: r.artifacts, result: r.result, exitCode: r.exitCode === undefined ? undefined : String(r.exitCode) };
      const withScope: Scope = { ...scope, 'outputs.result': r.result ?? '', exitCode: outputs.exitCode ?? '' };
      return finish(node, r.phase, r.message, r.phase === 'Succeeded' ? templateOutputs(tmpl, withScope, outputs) : outputs);
    } catch (e) {
      if (isCancellation(e)) throw e;
      return finish(node, 'Error', activityMessage(e));
    }
  }

  async function runHttp(tmpl: Json, scope: Scope, node: ArgoNode): Promise<NodeResult> {
    const h = substituteDeep(tmpl.http as Json, scope);
    const headers: Record<string, string> = {};
    for (const x of arr(h.headers)) if (x.value !== undefined) headers[String(x.name)] = String(x.value);
    try {
      const r = await acts.argoHttp({ url: String(h.url), method: String(h.method ?? 'GET'), headers, body: h.body as string | undefined, timeoutMs: h.timeoutSeconds !== undefined ? Number(h.timeoutSeconds) * 1000 : undefined });
      const cond = h.successCondition !== undefined ? String(h.successCondition) : undefined;
      const env = { response: { statusCode: r.statusCode, body: r.body, headers: r.headers } };
      const ok = cond ? evaluateExpr(cond, env) === true : r.statusCode >= 200 && r.statusCode < 300;
      return finish(node, ok ? 'Succeeded' : 'Failed', ok ? undefined : `HTTP ${r.statusCode}${cond ? `: successCondition '${cond}' false` : ''}`, templateOutputs(tmpl, scope, { parameters: {}, artifacts: {}, result: r.body }));
    } catch (e) {
      if (isCancellation(e)) throw e;
      return finish(node, 'Error', activityMessage(e));
    }
  }

  async function runSuspend(tmpl: Json, scope: Scope, node: ArgoNode): Promise<NodeResult> {
    const s = substituteDeep((tmpl.suspend ?? {}) as Json, scope);
    const ms = s.duration !== undefined ? parseDuration(String(s.duration)) : undefined;
    const seen = resumes.length;
    const mine = () => resumes.slice(seen).find((r) => !r.node || node.name.includes(r.node));
    if (ms !== undefined) await condition(() => mine() !== undefined, ms);
    else await condition(() => mine() !== undefined);
    const supplied = mine()?.parameters ?? {};
    const out = emptyOutputs();
    for (const p of arr((tmpl.outputs as Json | undefined)?.parameters)) {
      const vf = (p.valueFrom ?? {}) as Json;
      const v = supplied[String(p.name)] ?? (vf.default as string | undefined);
      if (v !== undefined) out.parameters[String(p.name)] = String(v);
      if (p.globalName && v !== undefined) global[`workflow.outputs.parameters.${String(p.globalName)}`] = String(v);
    }
    return finish(node, 'Succeeded', undefined, out);
  }

  const daemonScopes: CancellationScope[] = [];

  // ---- one template call, with retries -------------------------------------------------------------
  /**
   * memoize: a template whose key has a fresh entry in its cache is not run; the entry's outputs
   * stand in (node message "memoized …"). Successful results are stored. The cache lives with the
   * activities (files under the worker's home, one directory per `cache.configMap.name`).
   */
  async function runTemplate(call: Call): Promise<NodeResult> {
    const memo = call.template.memoize as Json | undefined;
    if (!memo || input.reuse?.[call.name] || !patched(ARGO_PATCHES.memoize)) return runTemplateUncached(call);
    let key: string;
    try {
      key = substitute(String(memo.key ?? ''), bindInputs(call.template, call.args, { ...global, ...call.extra }).scope);
    } catch (e) {
      if (e instanceof UserError) return runTemplateUncached(call);
      throw e;
    }
    const cache = String((((memo.cache as Json | undefined)?.configMap as Json | undefined)?.name as string | undefined) ?? 'default');
    const maxAgeMs = memo.maxAge !== undefined && String(memo.maxAge) !== '' ? parseDuration(String(memo.maxAge)) : undefined;
    const hit = await acts.argoMemoGet({ cache, key, maxAgeMs });
    if (hit.outputs) {
      const tmpl = call.template;
      const kind = tmpl.steps ? 'Steps' : tmpl.dag ? 'DAG' : tmpl.suspend ? 'Suspend' : tmpl.http ? 'HTTP' : tmpl.resource ? 'Resource' : 'Pod';
      const node = newNode({ name: call.name, displayName: call.displayName, type: kind, parentId: call.parentId, templateName: String(tmpl.name) });
      node.memoizationStatus = { hit: true, key, cacheName: cache };
      return finish(node, 'Succeeded', `memoized: cache ${cache} key ${key} (from ${hit.nodeId ?? '?'})`, hit.outputs);
    }
    const r = await runTemplateUncached(call);
    const node = status.nodes[r.id];
    if (node) node.memoizationStatus = { hit: false, key, cacheName: cache };
    if (r.phase === 'Succeeded') await acts.argoMemoPut({ cache, key, nodeId: r.id, outputs: r.outputs });
    return r;
  }

  async function runTemplateUncached(call: Call): Promise<NodeResult> {
    const tmpl = call.template;
    const retry = tmpl.retryStrategy as Json | undefined;
    const kind = tmpl.steps ? 'Steps' : tmpl.dag ? 'DAG' : tmpl.suspend ? 'Suspend' : tmpl.http ? 'HTTP' : tmpl.resource ? 'Resource' : 'Pod';
    const reused = input.reuse?.[call.name];
    if (reused && kind !== 'Steps' && kind !== 'DAG') {
      // Retry of a run: this leaf succeeded before, so its recorded outputs stand in for running it.
      const node = newNode({ name: call.name, displayName: call.displayName, type: retry ? 'Retry' : kind, parentId: call.parentId, templateName: String(tmpl.name), reusedFrom: reused.from });
      return finish(node, 'Succeeded', `reused from ${reused.from}`, reused.outputs);
    }
    if (!retry) return runOnce(call, kind, 0);
    const parent = newNode({ name: call.name, displayName: call.displayName, type: 'Retry', parentId: call.parentId, templateName: String(tmpl.name) });
    const limit = retry.limit !== undefined ? Number(substitute(String(retry.limit), global)) : Infinity;
    const policy = String(retry.retryPolicy ?? (retry.expression !== undefined ? 'Always' : 'OnFailure'));
    const backoff = (retry.backoff ?? {}) as Json;
    const baseMs = backoff.duration !== undefined ? parseDuration(String(backoff.duration)) ?? 0 : 0;
    const factor = backoff.factor !== undefined ? Number(backoff.factor) : 1;
    const capMs = backoff.cap !== undefined ? parseDuration(String(backoff.cap)) : undefined;
    const maxMs = backoff.maxDuration !== undefined ? parseDuration(String(backoff.maxDuration)) : undefined;
    const startedAt = Date.now();
    let last: NodeResult | undefined;
    for (let attempt = 0; ; attempt++) {
      const extra: Scope = { retries: String(attempt) };
      if (last) {
        const ln = status.nodes[last.id];
        Object.assign(extra, {
          'lastRetry.exitCode': last.outputs.exitCode ?? '',
          'lastRetry.status': last.phase,
          'lastRetry.message': last.message ?? '',
          'lastRetry.duration': String(ln?.finishedAt && ln.startedAt ? (Date.parse(ln.finishedAt) - Date.parse(ln.startedAt)) / 1000 : 0),
        });
      }
      last = await runOnce({ ...call, name: `${call.name}(${attempt})`, displayName: `${call.displayName}(${attempt})`, parentId: parent.id, extra }, kind, attempt);
      if (!failed(last.phase)) break;
      const retryable = policy === 'Always' || (policy === 'OnFailure' && last.phase === 'Failed') || ((policy === 'OnError' || policy === 'OnTransientError') && last.phase === 'Error');
      if (!retryable || attempt >= limit) break;
      if (retry.expression !== undefined) {
        const ln = status.nodes[last.id];
        const env = scopeEnv({
          'lastRetry.exitCode': last.outputs.exitCode ?? '',
          'lastRetry.status': last.phase,
          'lastRetry.message': last.message ?? '',
          'lastRetry.duration': String(ln?.finishedAt && ln.startedAt ? (Date.parse(ln.finishedAt) - Date.parse(ln.startedAt)) / 1000 : 0),
        });
        let again = false;
        try {
          again = evaluateExpr(String(retry.expression), env) === true;
        } catch {
          again = false;
        }
        if (!again) break;
      }
      let delay = baseMs * factor ** attempt;
      if (capMs !== undefined) delay = Math.min(delay, capMs);
      if (maxMs !== undefined && Date.now() + delay - startedAt > maxMs) break;
      if (delay > 0) await sleep(delay);
    }
    return finish(parent, last.phase, last.message, last.outputs);
  }

  async function runOnce(call: Call, kind: ArgoNode['type'], attempt: number): Promise<NodeResult> {
    const tmpl = call.template;
    const node = newNode({ name: call.name, displayName: call.displayName, type: kind, parentId: call.parentId, templateName: String(tmpl.name) });
    let bound: ReturnType<typeof bindInputs>;
    try {
      bound = bindInputs(tmpl, call.args, { ...global, ...call.extra, 'pod.name': node.id, 'node.name': node.name });
    } catch (e) {
      if (!(e instanceof UserError)) throw e;
      return finish(node, 'Error', e.message);
    }
    const sync = tmpl.synchronization as Json | undefined;
    if (!sync || !patched(ARGO_PATCHES.sync)) return runBody(tmpl, node, bound, attempt);
    // Template-level synchronization: the node waits (Pending) for its locks, holds them while it
    // runs, and releases them however it ends.
    let locks: LockRef[];
    try {
      locks = syncLocks(substituteDeep(sync, bound.scope), input.namespace ?? 'default');
    } catch (e) {
      if (!(e instanceof UserError)) throw e;
      return finish(node, 'Error', e.message);
    }
    const key = `${info.workflowId}/${info.runId}/${node.id}`;
    let held: LockRef[];
    try {
      held = await acquireLocks(locks, key, `${input.name}/${node.name}`, (msg) => {
        node.phase = msg ? 'Pending' : 'Running';
        if (msg) node.message = msg;
        else delete node.message;
      });
    } catch (e) {
      if (isCancellation(e)) {
        finish(node, 'Failed', stopMessage ?? 'cancelled');
        throw e;
      }
      return finish(node, 'Error', activityMessage(e));
    }
    try {
      return await runBody(tmpl, node, bound, attempt);
    } finally {
      await releaseLocks(held, key);
    }
  }

  async function runBody(tmpl: Json, node: ArgoNode, bound: ReturnType<typeof bindInputs>, attempt: number): Promise<NodeResult> {
    try {
      if (tmpl.steps) return await runSteps(tmpl, bound.scope, node);
      if (tmpl.dag) return await runDag(tmpl, bound.scope, node);
      if (tmpl.suspend) return await runSuspend(tmpl, bound.scope, node);
      if (tmpl.http) return await runHttp(tmpl, bound.scope, node);
      if (tmpl.container || tmpl.script || tmpl.plugin) return await runPod(tmpl, bound.scope, node, bound.artifacts, attempt);
      if (tmpl.resource) {
        try {
          const res = tmpl.resource as Json;
          const str = (v: unknown) => (v === undefined ? undefined : substitute(String(v), bound.scope));
          const r = await acts.argoResource({
            manifest: str(res.manifest) ?? '',
            action: String(res.action),
            mergeStrategy: str(res.mergeStrategy),
            flags: Array.isArray(res.flags) ? res.flags.map((f) => substitute(String(f), bound.scope)) : undefined,
            successCondition: str(res.successCondition),
            failureCondition: str(res.failureCondition),
            outputParameters: arr((tmpl.outputs as Json | undefined)?.parameters)
              .filter((p) => (p.valueFrom as Json | undefined)?.jsonPath !== undefined || (p.valueFrom as Json | undefined)?.jqFilter !== undefined)
              .map((p) => {
                const vf = p.valueFrom as Json;
                return { name: String(p.name), jsonPath: str(vf.jsonPath), jqFilter: str(vf.jqFilter), default: vf.default === undefined ? undefined : String(vf.default) };
              }),
          });
          if (r.resourceName) node.jobName = r.resourceName;
          const outputs: NodeOutputs = { parameters: r.parameters, artifacts: {} };
          return finish(node, r.phase, r.message, r.phase === 'Succeeded' ? templateOutputs(tmpl, bound.scope, outputs) : outputs);
        } catch (e) {
          if (isCancellation(e)) throw e;
          return finish(node, 'Error', activityMessage(e));
        }
      }
      return finish(node, 'Error', `template type of "${String(tmpl.name)}" is not supported on Tandem (containerSet, data)`);
    } catch (e) {
      if (e instanceof UserError) return finish(node, 'Error', e.message);
      if (isCancellation(e)) {
        finish(node, 'Failed', stopMessage ?? 'cancelled');
        throw e;
      }
      const msg = (e as Error).message;
      if ((e as Error).name === 'ExprError') return finish(node, 'Error', msg);
      throw e;
    }
  }

  // ---- the run -----------------------------------------------------------------------------------
  const entry = templates.get(String(spec.entrypoint));
  if (!entry) throw ApplicationFailure.nonRetryable(`entrypoint template "${String(spec.entrypoint)}" not found`, 'InvalidRequest');
  const mainScope = new CancellationScope();
  setHandler(argoStopSignal, (s) => {
    stopMessage = s?.message ?? 'Stopped by user';
    mainScope.cancel();
  });
  const deadlineMs = spec.activeDeadlineSeconds !== undefined ? Number(spec.activeDeadlineSeconds) * 1000 : undefined;
  let main: NodeResult | undefined;
  const entryArgs = { parameters: arr((spec.arguments as Json | undefined)?.parameters).map((p) => ({ name: p.name, value: global[`workflow.parameters.${String(p.name)}`] })), artifacts: arr((spec.arguments as Json | undefined)?.artifacts) };
  // Workflow-level synchronization: the whole run (exit handler included) holds the locks; it waits
  // Pending for them first. Runs recorded before locks existed replay without them.
  const wfSync = spec.synchronization as Json | undefined;
  const wfLockKey = `${info.workflowId}/${info.runId}`;
  let wfHeld: LockRef[] = [];
  let wfLockError: string | undefined;
  const mainRun = mainScope.run(async () => {
    if (wfSync && patched(ARGO_PATCHES.sync)) {
      try {
        const locks = syncLocks(substituteDeep(wfSync, global), input.namespace ?? 'default');
        wfHeld = await acquireLocks(locks, wfLockKey, input.name, (msg) => {
          status.phase = msg ? 'Pending' : 'Running';
          if (msg) status.message = msg;
          else delete status.message;
        });
      } catch (e) {
        if (isCancellation(e)) throw e;
        wfLockError = e instanceof UserError ? e.message : activityMessage(e);
        return undefined;
      }
    }
    return runTemplate({ template: entry, args: entryArgs, name: input.name, displayName: input.name });
  });
  try {
    if (deadlineMs !== undefined) {
      const timer = sleep(deadlineMs).then(() => {
        stopMessage = 'Max duration limit exceeded';
        mainScope.cancel();
      });
      void timer;
    }
    main = await mainRun;
  } catch (e) {
    if (!isCancellation(e)) throw e;
  }
  daemonScopes.forEach((d) => d.cancel());
  const root = status.nodes[input.name];
  status.phase = main ? main.phase : wfLockError !== undefined ? 'Error' : 'Failed';
  if (status.phase === 'Omitted' || status.phase === 'Skipped') status.phase = 'Succeeded';
  status.message = main ? (failed(main.phase) ? main.message : undefined) : (wfLockError ?? stopMessage);
  if (!main && root) {
    root.phase = 'Failed';
    root.message = stopMessage;
    root.finishedAt = now();
  }

  try {
    // ---- exit handler --------------------------------------------------------------------------------
    const exitName = (spec.onExit as string | undefined) ?? (((spec.hooks as Json | undefined)?.exit as Json | undefined)?.template as string | undefined);
    if (exitName) {
      global['workflow.status'] = status.phase;
      global['workflow.duration'] = String((Date.now() - Date.parse(status.startedAt)) / 1000);
      const failures = Object.values(status.nodes)
        .filter((n) => failed(n.phase) && (n.type === 'Pod' || n.type === 'HTTP' || n.type === 'Suspend'))
        .map((n) => ({ displayName: n.displayName, message: n.message ?? '', templateName: n.templateName ?? '', phase: n.phase, podName: n.id, finishedAt: n.finishedAt ?? '' }));
      global['workflow.failures'] = JSON.stringify(failures);
      const t = templates.get(exitName);
      if (t) {
        const r = await runTemplate({ template: t, args: {}, name: `${input.name}.onExit`, displayName: `${input.name}.onExit` });
        if (failed(r.phase) && status.phase === 'Succeeded') {
          status.phase = r.phase;
          status.message = r.message;
        }
      }
    }
  } finally {
    // Released however the run ends (also when the exit handler is cancelled with the run).
    if (wfHeld.length) await releaseLocks(wfHeld, wfLockKey);
  }
  status.finishedAt = now();
  const outs = Object.entries(global).filter(([k]) => k.startsWith('workflow.outputs.parameters.'));
  if (outs.length) status.outputs = { parameters: Object.fromEntries(outs.map(([k, v]) => [k.slice('workflow.outputs.parameters.'.length), v])) };
  return status;
}

function collect(dep: ReturnType<typeof parseDepends>): string[] {
  if (dep.k === 'ref') return [dep.task];
  if (dep.k === 'not') return collect(dep.a);
  return [...collect(dep.a), ...collect(dep.b)];
}

function tryJson(s: string): unknown {
  try {
    const v = JSON.parse(s);
    return typeof v === 'object' ? v : s;
  } catch {
    return s;
  }
}

function activityMessage(e: unknown): string {
  let cur = e as { message?: string; cause?: unknown } | undefined;
  let msg = cur?.message ?? String(e);
  while (cur?.cause) {
    cur = cur.cause as { message?: string; cause?: unknown };
    if (cur.message) msg = cur.message;
  }
  return msg;
}

/** printf for withSequence `format` (%d, %02d, %x, %s…). */
export function printf(fmt: string, n: number): string {
  return fmt.replace(/%(0?)(\d*)([dsxXo])/g, (_m, zero: string, width: string, conv: string) => {
    const s = conv === 'x' ? n.toString(16) : conv === 'X' ? n.toString(16).toUpperCase() : conv === 'o' ? n.toString(8) : String(n);
    return width ? s.padStart(Number(width), zero ? '0' : ' ') : s;
  });
}
