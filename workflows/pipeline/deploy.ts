// The deploy stage: serve the catalogued checkpoint and pass the readiness gate (health, model
// listing, a smoke completion). On Kubernetes it is a new revision of the pipeline's endpoint that
// rolls back on failure (./endpoint.ts; runs before PATCHES.servingEndpoint: a Deployment per run, below).
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { Deployment, ReadinessResult } from '../../activities/types.js';
import { durationMs } from '../../contract/duration.js';
import { deployCall, readinessGate, rollout as rolloutOptions } from './activity-options.js';
import type { PipelineRun } from './context.js';
import { deploymentName } from './identity.js';
import { PATCHES } from './patches.js';
import { deployAttempts } from './retry.js';
import { rollOutEndpoint } from './endpoint.js';

export interface Served {
  model: string;
  deployment: Deployment;
  ready: ReadinessResult;
}

export async function runDeployStage(run: PipelineRun, checkpoint: { path: string }): Promise<Served> {
  // One stable endpoint per pipeline, a revision per run (runs before the patch: a Deployment per run).
  if (run.spec.stages.deploy.runtime === 'kubernetes' && run.has(PATCHES.servingEndpoint)) return rollOutEndpoint(run, checkpoint);
  const { spec, workflowId, runKey, short, saga } = run;
  const { heartbeatTimeoutMs } = run.tuning;
  const dep = spec.stages.deploy;
  const st = run.startStage('deploy');
  const model = dep.model ?? spec.name;
  const deployActs = run.activities(deployCall(deployAttempts(spec)));
  const name = deploymentName(spec.name, workflowId, run.has(PATCHES.jobIdentity));
  const readinessTimeout = durationMs(dep.readinessTimeout);
  const gate = run.activities(readinessGate(readinessTimeout, heartbeatTimeoutMs));
  const announce = (d: Deployment) => {
    Object.assign(st, { runtime: d.runtime, jobId: d.name, site: d.endpoint });
    run.record({ kind: d.adopted ? 'job-adopted' : 'job-submitted', stage: 'deploy', runtime: d.runtime, message: `serving ${model} at ${d.endpoint}` });
  };
  if (dep.runtime === 'kubernetes') {
    // A new revision of a vLLM Deployment: the previous one keeps serving until this one is ready,
    // and a failed rollout or gate rolls back to it (old histories never take this branch).
    const rev = await deployActs.k8sApplyServing({ runKey, pipeline: spec.name, name, model, checkpoint: checkpoint.path, env: dep.env, kubernetes: dep.kubernetes });
    saga.push({ id: `undeploy-${name}`, description: `tear down deployment ${name}`, done: `tore down deployment ${name}`, run: () => short.k8sTeardownServing({ namespace: rev.namespace, name }).then(() => undefined) });
    const rollout = run.activities(rolloutOptions(heartbeatTimeoutMs));
    try {
      const deployment = await rollout.k8sAwaitRollout(rev);
      announce(deployment);
      const ready = await gate.k8sGateServing({ deployment, prompt: dep.smokePrompt, timeoutMs: readinessTimeout });
      return { model, deployment, ready };
    } catch (err) {
      if (!isCancellation(err)) {
        await CancellationScope.nonCancellable(() => rollout.k8sRollbackServing(rev));
        run.record({ kind: 'compensation', stage: 'deploy', message: `rolled back ${name} to its previous revision` });
        saga.discard(`undeploy-${name}`); // the previous revision serves again: keep it
      }
      throw err;
    }
  }
  const input = { runKey, name, runtime: dep.runtime, model, checkpoint: checkpoint.path, command: dep.command, env: dep.env };
  let deployment: Deployment;
  if (run.has(PATCHES.deploySaga)) {
    // The undo is on the stack before the model server may exist: a deployModel that fails or times out
    // after starting it is torn down too (undeploying a name never served is a no-op). The call itself
    // is not cancellable: a cancel while the server starts waits for it, then the saga stops it, where
    // before the run moved on and the server it was starting outlived it.
    saga.push({ id: `undeploy-${name}`, description: `tear down deployment ${name}`, done: `tore down deployment ${name}`, run: () => short.undeployModel({ runtime: 'local', name }) });
    deployment = await CancellationScope.nonCancellable(() => deployActs.deployModel(input));
  } else {
    deployment = await deployActs.deployModel(input);
    const served = deployment;
    saga.push({ id: `undeploy-${served.name}`, description: `tear down deployment ${served.name}`, done: `tore down deployment ${served.name}`, run: () => short.undeployModel({ runtime: served.runtime, name: served.name }) });
  }
  announce(deployment);
  const ready = await gate.awaitReadiness({ deployment, prompt: dep.smokePrompt, timeoutMs: readinessTimeout });
  return { model, deployment, ready };
}
