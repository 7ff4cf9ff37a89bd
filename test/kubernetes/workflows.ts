// A small deploy-stage workflow over the Kubernetes activities, for the worker-kill suites (a worker
// SIGKILLed inside the rollout wait): apply → rollout → gates; compensation: rollback on failure,
// teardown on cancellation, both in a non-cancellable scope. Deterministic code only. The serving
// lifecycle itself (a revision per run, rollback, undo on cancel) is tested through hybridPipeline
// (serving.test.ts, serving-lifecycle.cp.test.ts); with `deploy.run` set, cancellation undoes the
// revision as hybridPipeline does (PATCHES.servingEndpoint) instead of deleting the Deployment.
import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { KubernetesActivities, KubernetesDeployInput } from '../../activities/kubernetes.js';
import type { Deployment } from '../../activities/types.js';
import { NON_RETRYABLE_TYPES } from '../../contract/failures.js';

export interface KubernetesDeployWorkflowInput {
  deploy: KubernetesDeployInput;
  prompt: string;
  gateTimeoutMs: number;
  heartbeatTimeoutMs: number;
}

export async function kubernetesDeploy(input: KubernetesDeployWorkflowInput): Promise<{ deployment: Deployment; completion: string }> {
  const acts = proxyActivities<KubernetesActivities>({
    startToCloseTimeout: '5m',
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: { initialInterval: '200ms', maximumInterval: '2s', nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
  });
  const rev = await acts.k8sApplyServing(input.deploy);
  try {
    const deployment = await acts.k8sAwaitRollout(rev);
    const ready = await acts.k8sGateServing({ deployment, prompt: input.prompt, timeoutMs: input.gateTimeoutMs });
    return { deployment, completion: ready.completion };
  } catch (err) {
    await CancellationScope.nonCancellable(async () => {
      if (isCancellation(err) && input.deploy.run === undefined) await acts.k8sTeardownServing({ namespace: rev.namespace, name: rev.name });
      else await acts.k8sRollbackServing(rev);
    });
    throw err;
  }
}
