// The deploy stage on Kubernetes, as activities: apply → await rollout → gate (activities/readiness.ts)
// → keep; on a failed rollout or gate the workflow calls rollback (compensation), on cancellation
// teardown. Each is idempotent, so a retried attempt (or a new worker after a crash) converges.
import { CancelledFailure, Context } from '@temporalio/activity';
import { KubeApiError } from '../backends/kubernetes/client.js';
import { RolloutFailed, type KubernetesServingBackend, type ServingRevision } from '../backends/kubernetes/serving.js';
import { WatchAborted } from '../backends/kubernetes/watch.js';
import { KubernetesOptionsError, type KubernetesOptionsInput } from '../contract/kubernetes.js';
import { failure } from '../contract/failures.js';
import { checkReadiness } from './readiness.js';
import type { Deployment, ReadinessInput, ReadinessResult } from './types.js';
import { DEFAULTS } from '../config/defaults.js';

export interface KubernetesDeployInput {
  runKey: string;
  pipeline: string;
  /** Deterministic: the Deployment and Service name. */
  name: string;
  model: string;
  checkpoint: string;
  env?: Record<string, string>;
  kubernetes?: KubernetesOptionsInput;
}

export interface KubernetesServingConfig {
  serving: KubernetesServingBackend;
  /** How often long waits heartbeat (default 1 s). */
  heartbeatMs?: number;
}

/** Maps backend errors onto Tandem's failure classes; unknown errors stay retryable. */
function toFailure(e: unknown): unknown {
  if (e instanceof KubernetesOptionsError) return failure('InvalidRequest', e.message);
  if (e instanceof RolloutFailed) return failure('GateFailed', e.message);
  if (e instanceof KubeApiError) {
    if (e.transient) return failure('ObservationFailed', e.message, { nextRetryDelay: e.retryAfterSeconds ? e.retryAfterSeconds * 1000 : undefined });
    if ([400, 403, 422].includes(e.code)) return failure('InvalidRequest', e.message);
  }
  return e;
}

async function mapped<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw toFailure(e);
  }
}

/** Runs a long wait with periodic heartbeats, aborting the wait when the activity is cancelled. */
async function heartbeating<T>(detail: () => unknown, everyMs: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(detail()), everyMs);
  ctx.heartbeat(detail());
  try {
    return await fn(ctx.cancellationSignal);
  } catch (e) {
    if (e instanceof WatchAborted) throw new CancelledFailure('rollout wait cancelled');
    throw e;
  } finally {
    clearInterval(timer);
  }
}

export function createKubernetesActivities(config: KubernetesServingConfig) {
  const { serving } = config;
  const every = config.heartbeatMs ?? DEFAULTS.k8sHeartbeatMs;
  const deploymentOf = (s: { name: string; model: string; checkpoint: string; endpoint: string }, adopted: boolean): Deployment => ({ runtime: 'kubernetes', name: s.name, endpoint: s.endpoint, model: s.model, checkpoint: s.checkpoint, adopted });

  return {
    /** Creates or updates the Deployment + Service. Invalid options fail before any request. */
    async k8sApplyServing(input: KubernetesDeployInput): Promise<ServingRevision> {
      return mapped(() => serving.apply({ name: input.name, pipeline: input.pipeline, model: input.model, checkpoint: input.checkpoint, env: input.env, kubernetes: input.kubernetes }));
    },

    /** Watches the rollout of this revision; a retried attempt (e.g. after a worker crash) resumes watching. */
    async k8sAwaitRollout(rev: ServingRevision): Promise<Deployment> {
      const ctx = Context.current();
      if (ctx.info.attempt > 1) ctx.log.info('resuming the rollout watch', { deployment: `${rev.namespace}/${rev.name}`, attempt: ctx.info.attempt });
      let last = 'starting';
      const state = await heartbeating(() => ({ rollout: last }), every, (signal) => mapped(() => serving.awaitRollout(rev, { signal, onProgress: (m) => (last = m) })));
      return deploymentOf(state, rev.adopted);
    },

    /** The vLLM gates: /health 200, /v1/models lists the model, a smoke completion. */
    async k8sGateServing(input: ReadinessInput): Promise<ReadinessResult> {
      return checkReadiness(input, Context.current());
    },

    /**
     * Compensation for a failed rollout or gate: restore the previous revision and wait until it serves
     * again (or remove the objects when there was none). Returns the endpoint that serves now, if any.
     */
    async k8sRollbackServing(rev: ServingRevision): Promise<{ action: string; deployment?: Deployment }> {
      return mapped(async () => {
        const r = await serving.rollback(rev.namespace, rev.name, rev.templateHash);
        if (r.action === 'removed' || r.generation === undefined) return { action: r.action };
        let last = 'starting';
        const state = await heartbeating(() => ({ rollback: last }), every, (signal) => serving.awaitRollout({ namespace: rev.namespace, name: rev.name, generation: r.generation! }, { signal, onProgress: (m) => (last = m) }));
        return { action: r.action, deployment: deploymentOf(state, true) };
      });
    },

    /** Teardown on cancellation: deletes the Deployment (and its pods) and the Service. */
    async k8sTeardownServing({ namespace, name }: { namespace: string; name: string }): Promise<{ deleted: string[] }> {
      return mapped(() => serving.teardown(namespace, name));
    },
  };
}

export type KubernetesActivities = ReturnType<typeof createKubernetesActivities>;
