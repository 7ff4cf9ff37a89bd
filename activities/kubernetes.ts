// The deploy stage on Kubernetes, as activities: apply → await rollout → gate (activities/readiness.ts)
// → keep; on a failed rollout or gate the workflow calls rollback (compensation), on cancellation
// teardown. Each is idempotent, so a retried attempt (or a new worker after a crash) converges.
import { CancelledFailure, Context } from '@temporalio/activity';
import { KubeApiError } from '../backends/kubernetes/client.js';
import { RolloutFailed, ServingOwnershipError, type KubernetesServingBackend, type ServingRevision } from '../backends/kubernetes/serving.js';
import { WatchAborted } from '../backends/kubernetes/watch.js';
import { KubernetesOptionsError, type KubernetesOptionsInput } from '../contract/kubernetes.js';
import { failure } from '../contract/failures.js';
import { checkReadiness } from './readiness.js';
import type { Deployment, ReadinessInput, ReadinessResult } from './types.js';
import { DEFAULTS } from '../config/defaults.js';
import type { Audit } from './audit.js';
import { observeDeployment } from '../observe/activity-metrics.js';
import type { TenantGuard } from './tenant-policy.js';

export interface KubernetesDeployInput {
  runKey: string;
  pipeline: string;
  /**
   * Runs with PATCHES.servingEndpoint: the tenant (the endpoint belongs to tenant + pipeline) and the
   * run (workflow id) that rolls this revision out. Without them: the pre-patch, one-Deployment-per-run path.
   */
  tenant?: string;
  run?: string;
  /** Deterministic: the Deployment and Service name (the endpoint's, or before the patch the run's). */
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
  /** The audit log: revisions rolled out, rolled back, removed (activities/audit.ts). */
  audit?: Audit;
  /** The tenant policy (activities/tenant-policy.ts): a run's namespace and service account are checked before anything is applied. */
  tenantGuard?: TenantGuard;
}

/** Maps backend errors onto Tandem's failure classes; unknown errors stay retryable. */
function toFailure(e: unknown): unknown {
  if (e instanceof KubernetesOptionsError || e instanceof ServingOwnershipError) return failure('InvalidRequest', e.message);
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
  const { serving, audit } = config;
  const every = config.heartbeatMs ?? DEFAULTS.k8sHeartbeatMs;
  const deploymentOf = (s: { name: string; model: string; checkpoint: string; endpoint: string }, adopted: boolean): Deployment => ({ runtime: 'kubernetes', name: s.name, endpoint: s.endpoint, model: s.model, checkpoint: s.checkpoint, adopted });

  return {
    /** Creates or updates the Deployment + Service. Invalid options fail before any request. */
    async k8sApplyServing(input: KubernetesDeployInput): Promise<ServingRevision> {
      // Runs with a tenant took their options from the spec: errors name stages.deploy.kubernetes.
      const field = input.tenant !== undefined ? 'stages.deploy.kubernetes' : 'kubernetes';
      await config.tenantGuard?.enforce();
      const rev = await mapped(() => serving.apply({ name: input.name, pipeline: input.pipeline, tenant: input.tenant, run: input.run, model: input.model, checkpoint: input.checkpoint, env: input.env, kubernetes: input.kubernetes, field }));
      // A retried apply that found its own revision already there did not roll anything out again.
      observeDeployment('kubernetes', rev.adopted ? 'adopt' : 'rollout');
      if (!rev.adopted) await audit?.({ what: 'deployment.rolledOut', tenant: input.tenant, where: { runtime: 'kubernetes', namespace: rev.namespace }, details: { name: rev.name, model: rev.model, checkpoint: rev.checkpoint, generation: rev.generation, previousRevision: rev.previousRevision } });
      return rev;
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
     * Compensation for a failed rollout or gate, and (PATCHES.servingEndpoint) for a cancelled run:
     * restore the revision that served before and wait until it serves again; with none, remove the
     * objects if this run created them. Returns the endpoint that serves now, if any.
     */
    async k8sRollbackServing(rev: ServingRevision): Promise<{ action: string; toRevision?: string; deployment?: Deployment }> {
      return mapped(async () => {
        const since = new Date();
        const r = await serving.rollback(rev);
        if (r.action === 'rolled-back' || r.action === 'removed') observeDeployment('kubernetes', r.action === 'removed' ? 'teardown' : 'rollback');
        if (r.action === 'rolled-back' || r.action === 'removed') await audit?.({ what: r.action === 'removed' ? 'deployment.removed' : 'deployment.rolledBack', where: { runtime: 'kubernetes', namespace: rev.namespace }, details: { name: rev.name, toRevision: r.toRevision } });
        if (r.action === 'removed' || r.action === 'kept' || r.generation === undefined) return { action: r.action };
        let last = 'starting';
        const state = await heartbeating(() => ({ rollback: last }), every, (signal) => serving.awaitRollout({ namespace: rev.namespace, name: rev.name, generation: r.generation! }, { signal, onProgress: (m) => (last = m), staleBefore: since }));
        return { action: r.action, toRevision: r.toRevision, deployment: deploymentOf(state, true) };
      });
    },

    /** Teardown on cancellation before PATCHES.servingEndpoint: deletes the run's Deployment (and its pods) and Service. */
    async k8sTeardownServing({ namespace, name }: { namespace: string; name: string }): Promise<{ deleted: string[] }> {
      const r = await mapped(() => serving.teardown(namespace, name));
      if (r.deleted.length) observeDeployment('kubernetes', 'teardown');
      if (r.deleted.length) await audit?.({ what: 'deployment.removed', where: { runtime: 'kubernetes', namespace }, details: { name, deleted: r.deleted } });
      return r;
    },
  };
}

export type KubernetesActivities = ReturnType<typeof createKubernetesActivities>;
