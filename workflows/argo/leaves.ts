// Leaf templates that wait on the outside world: pods (container, script, Slurm plugin) and HTTP
// calls are activities; a suspend node waits for a resume signal or its duration.
import { CancellationScope, condition, isCancellation, patched } from '@temporalio/workflow';
import { parseDuration } from '../../contract/duration.js';
import { substituteDeep, type Scope } from '../../argo/lang/tags.js';
import type { ArgoNode, Json, NodeOutputs, RunPodInput } from '../../argo/lang/types.js';
import { ARGO_PATCHES } from './api.js';
import type { RunContext } from './context.js';
import { outputPaths, suspendOutputs, templateOutputs } from './io.js';
import { activityMessage, arr, emptyOutputs, type NodeResult } from './model.js';
import { finish, now } from './nodes.js';
import { httpOutcome, httpRequest, podInput } from './pods.js';

export async function runPod(ctx: RunContext, tmpl: Json, given: Scope, node: ArgoNode, artifacts: RunPodInput['inputArtifacts'], attempt: number, daemons?: CancellationScope[]): Promise<NodeResult> {
  // `{{outputs.…<n>.path}}`; asked only of a template that names one, so other runs record no marker.
  const namesOutputPath = /\{\{\s*outputs\.(parameters|artifacts)\.[^}]*\.path\s*\}\}/.test(JSON.stringify(tmpl));
  const scope = namesOutputPath && patched(ARGO_PATCHES.outputPaths) ? { ...given, ...outputPaths(tmpl, given) } : given;
  const pod = podInput(tmpl, scope, node.id, artifacts, attempt, { name: ctx.input.name, runId: ctx.info.runId, artifactRoot: ctx.input.artifactRoot, hashLongNames: () => patched(ARGO_PATCHES.podNames), volumes: arr(ctx.input.spec.volumes) });
  node.target = pod.target;
  node.jobName = pod.jobName;
  if (tmpl.daemon === true) {
    // A daemon runs in the background until its parent template ends; dependents see it as Daemoned.
    node.daemoned = true;
    const s = new CancellationScope();
    const ran = s.run(() => ctx.workflowParallelism.run(() => ctx.acts.argoRunPod(pod))).catch(() => undefined);
    ctx.daemonScopes.push(s);
    if (daemons && patched(ARGO_PATCHES.daemonScope)) {
      // Stopped with the steps or DAG template it runs in (Argo kills a scope's daemons when it completes).
      daemons.push(s);
      void ran.then((r) => void finish(node, r && r.phase !== 'Succeeded' ? r.phase : 'Succeeded', r ? r.message : 'daemon stopped with its template'));
    }
    return { id: node.id, phase: 'Succeeded', outputs: emptyOutputs(), daemoned: true };
  }
  try {
    // Under the workflow's parallelism a pod waits Pending for its slot and starts when it gets one.
    const limited = ctx.workflowParallelism.limited;
    if (limited) node.phase = 'Pending';
    const r = await ctx.workflowParallelism.run(() => {
      if (limited) Object.assign(node, { phase: 'Running', startedAt: now() });
      // Labelled in the Temporal UI's event history (user metadata, not compared on replay).
      return ctx.acts.argoRunPod.executeWithOptions({ summary: `argo: step ${node.displayName ?? node.name}` }, [pod]);
    });
    node.target = r.target;
    const outputs: NodeOutputs = { parameters: r.parameters, artifacts: r.artifacts, result: r.result, exitCode: r.exitCode === undefined ? undefined : String(r.exitCode) };
    const withScope: Scope = { ...scope, 'outputs.result': r.result ?? '', exitCode: outputs.exitCode ?? '' };
    return finish(node, r.phase, r.message, r.phase === 'Succeeded' ? templateOutputs(tmpl, withScope, outputs, ctx.global) : outputs);
  } catch (e) {
    if (isCancellation(e)) throw e;
    return finish(node, 'Error', activityMessage(e));
  }
}

export async function runHttp(ctx: RunContext, tmpl: Json, scope: Scope, node: ArgoNode): Promise<NodeResult> {
  const h = substituteDeep(tmpl.http as Json, scope);
  try {
    const r = await ctx.acts.argoHttp(httpRequest(h));
    const { ok, message } = httpOutcome(h, r);
    return finish(node, ok ? 'Succeeded' : 'Failed', message, templateOutputs(tmpl, scope, { parameters: {}, artifacts: {}, result: r.body }, ctx.global));
  } catch (e) {
    if (isCancellation(e)) throw e;
    return finish(node, 'Error', activityMessage(e));
  }
}

export async function runSuspend(ctx: RunContext, tmpl: Json, scope: Scope, node: ArgoNode): Promise<NodeResult> {
  const s = substituteDeep((tmpl.suspend ?? {}) as Json, scope);
  const ms = s.duration !== undefined ? parseDuration(String(s.duration)) : undefined;
  const seen = ctx.resumes.length;
  // Outputs the resume must supply (valueFrom.supplied without a default): Argo will not resume the
  // node without them, and errs it when its duration ends without them (ARGO_PATCHES.suspendSupplied).
  const required = arr((tmpl.outputs as Json | undefined)?.parameters).filter((p) => (p.valueFrom as Json | undefined)?.supplied !== undefined && (p.valueFrom as Json).default === undefined).map((p) => String(p.name));
  const guard = required.length > 0 && patched(ARGO_PATCHES.suspendSupplied);
  const mine = () => ctx.resumes.slice(seen).find((r) => (!r.node || node.name.includes(r.node)) && (!guard || required.every((k) => r.parameters?.[k] !== undefined)));
  if (ms !== undefined) await condition(() => mine() !== undefined, ms);
  else await condition(() => mine() !== undefined);
  const resumed = mine();
  if (guard && !resumed) return finish(node, 'Error', `raw output parameter '${required[0]!}' has not been set and does not have a default value`);
  return finish(node, 'Succeeded', undefined, suspendOutputs(tmpl, resumed?.parameters ?? {}, ctx.global));
}
