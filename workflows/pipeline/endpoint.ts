// The deploy stage on Kubernetes for runs with PATCHES.servingEndpoint: one stable vLLM endpoint per
// pipeline (stages.deploy.name), to which each run rolls out a new revision. The previous revision
// serves until the new one is ready (maxUnavailable 0); the gates run against the new revision; a
// failed rollout or gate, and a cancelled run, undo exactly this run's revision: back to what served
// before, or — for the endpoint's first revision, created by this run — nothing left at all.
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { Deployment, ReadinessResult } from '../../activities/types.js';
import { durationMs } from '../../contract/duration.js';
import { deployCall, readinessGate, rollout as rolloutOptions } from './activity-options.js';
import type { PipelineRun } from './context.js';
import { endpointName } from './identity.js';
import { deployAttempts } from './retry.js';

export async function rollOutEndpoint(run: PipelineRun, checkpoint: { path: string }): Promise<{ model: string; deployment: Deployment; ready: ReadinessResult }> {
  const { spec, workflowId, runKey, saga } = run;
  const { heartbeatTimeoutMs } = run.tuning;
  const dep = spec.stages.deploy;
  const st = run.startStage('deploy');
  const model = dep.model ?? spec.name;
  const name = endpointName(spec.name, dep.name);
  const readinessTimeout = durationMs(dep.readinessTimeout);
  const deployActs = run.activities(deployCall(deployAttempts(spec)));
  const rollout = run.activities(rolloutOptions(heartbeatTimeoutMs));
  const gate = run.activities(readinessGate(readinessTimeout, heartbeatTimeoutMs));

  const rev = await deployActs.k8sApplyServing({ runKey, pipeline: spec.name, tenant: spec.tenant, run: workflowId, name, model, checkpoint: checkpoint.path, env: dep.env, kubernetes: dep.kubernetes });
  const undo = `undo-revision-${name}`;
  // On cancellation (or a later failure) the saga undoes this revision only: never the endpoint itself
  // unless this run created it, never a revision another run rolled out since.
  saga.push({ id: undo, description: `undo this run's revision of endpoint ${name}`, done: `undid this run's revision of endpoint ${name}`, run: () => rollout.k8sRollbackServing(rev).then(() => undefined) });
  try {
    const deployment = await rollout.k8sAwaitRollout(rev);
    Object.assign(st, { runtime: deployment.runtime, jobId: deployment.name, site: deployment.endpoint });
    run.record({ kind: deployment.adopted ? 'job-adopted' : 'job-submitted', stage: 'deploy', runtime: 'kubernetes', message: `serving ${model} at ${deployment.endpoint} (endpoint ${name}${rev.previousRevision ? `, replacing revision ${rev.previousRevision}` : ', first revision'})` });
    const ready = await gate.k8sGateServing({ deployment, prompt: dep.smokePrompt, timeoutMs: readinessTimeout });
    saga.discard(undo); // this revision serves now: a later failure of the run leaves it serving
    return { model, deployment, ready };
  } catch (err) {
    if (!isCancellation(err)) {
      const r = await CancellationScope.nonCancellable(() => rollout.k8sRollbackServing(rev));
      const what = r.action === 'rolled-back' ? `rolled back ${name} to revision ${r.toRevision ?? '?'}, which served before` : r.action === 'removed' ? `removed ${name}: its first revision failed, there was nothing to roll back to` : r.action === 'already-rolled-back' ? `${name} no longer carries this run's revision: nothing to undo` : `kept ${name}: no earlier revision to restore, and this run did not create it`;
      run.record({ kind: 'compensation', stage: 'deploy', message: what });
      saga.discard(undo);
    }
    throw err;
  }
}
