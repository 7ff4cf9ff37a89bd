// vLLM serving on Kubernetes: an apps/v1 Deployment (rolling update, maxUnavailable 0) behind a v1
// Service. apply → awaitRollout → (gates, in activities/) → rollback or keep; teardown on cancel.
// Rollback is `kubectl rollout undo`: copy the pod template of the newest older ReplicaSet back
// into the Deployment, so the restored revision is exactly what served before.
import type { V1Deployment, V1ReplicaSet, V1Service } from '@kubernetes/client-node';
import { parseKubernetesOptions, type KubernetesOptionsInput } from '../../contract/kubernetes.js';
import { call, callOrMissing, isConflict, kubeError, KubeApiError, type KubeClients } from './client.js';
import { ANNOTATIONS, servingManifests } from './manifests.js';
import { watchObject } from './watch.js';

export interface ServingRequest {
  name: string;
  pipeline: string;
  model: string;
  checkpoint: string;
  env?: Record<string, string>;
  kubernetes?: KubernetesOptionsInput;
}

/** What apply changed: enough to wait for exactly this revision and to undo it. */
export interface ServingRevision {
  namespace: string;
  name: string;
  model: string;
  checkpoint: string;
  /** metadata.generation after apply: the rollout to wait for. */
  generation: number;
  templateHash: string;
  /** The revision that served before this apply, if any (the rollback target). */
  previousRevision?: string;
  adopted: boolean;
}

export interface ServingState {
  namespace: string;
  name: string;
  model: string;
  checkpoint: string;
  revision: string;
  endpoint: string;
}

export class RolloutFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RolloutFailed';
  }
}

export interface KubernetesServingOptions {
  clients: KubeClients;
  /** The vLLM OpenAI-compatible server image. */
  image?: string;
  /**
   * ClusterIP when the worker runs inside the cluster (endpoint: the Service's DNS name);
   * LoadBalancer when it does not (endpoint: the load balancer's ingress address).
   */
  serviceType?: 'ClusterIP' | 'LoadBalancer';
  podAnnotations?: Record<string, string>;
  defaults?: KubernetesOptionsInput;
}

export const DEFAULT_VLLM_IMAGE = 'vllm/vllm-openai:v0.10.1';

const revisionOf = (o: { metadata?: { annotations?: Record<string, string> } } | undefined) => o?.metadata?.annotations?.[ANNOTATIONS.revision];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * kubectl's rollout-status rule: done when the controller has seen this generation, every replica is
 * updated and available, and no old replica is left; failed when Progressing says the deadline passed.
 */
export function rolloutState(d: V1Deployment | undefined, generation: number): { done: true } | { failed: string } | { waiting: string } {
  if (!d) return { failed: 'the Deployment was deleted during the rollout' };
  const s = d.status ?? {};
  if ((s.observedGeneration ?? 0) < generation || (d.metadata?.generation ?? 0) > generation) {
    if ((d.metadata?.generation ?? 0) > generation) return { failed: `the Deployment was changed again (generation ${d.metadata?.generation}) during the rollout of generation ${generation}` };
    return { waiting: 'waiting for the Deployment controller to observe the update' };
  }
  const progressing = s.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return { failed: `rollout exceeded its progress deadline (${progressing.message ?? 'no progress'})` };
  const want = d.spec?.replicas ?? 1;
  if ((s.updatedReplicas ?? 0) < want) return { waiting: `${s.updatedReplicas ?? 0} of ${want} updated replicas` };
  if ((s.replicas ?? 0) > (s.updatedReplicas ?? 0)) return { waiting: `${(s.replicas ?? 0) - (s.updatedReplicas ?? 0)} old replicas pending termination` };
  if ((s.availableReplicas ?? 0) < (s.updatedReplicas ?? 0)) return { waiting: `${s.availableReplicas ?? 0} of ${s.updatedReplicas} updated replicas available` };
  return { done: true };
}

export class KubernetesServingBackend {
  private readonly k: KubeClients;

  constructor(private readonly opts: KubernetesServingOptions) {
    this.k = opts.clients;
  }

  private options(input?: KubernetesOptionsInput) {
    return parseKubernetesOptions({ ...this.opts.defaults, ...input }, 'kubernetes');
  }

  private read(namespace: string, name: string) {
    return callOrMissing(`read Deployment ${namespace}/${name}`, () => this.k.apps.readNamespacedDeployment({ name, namespace }));
  }

  /** Creates or updates the Deployment and Service; idempotent for the same request. */
  async apply(req: ServingRequest): Promise<ServingRevision> {
    const options = this.options(req.kubernetes); // throws naming the field: nothing is created
    const namespace = options.namespace ?? this.k.namespace;
    const { deployment, service, templateHash } = servingManifests({
      name: req.name,
      namespace,
      pipeline: req.pipeline,
      model: req.model,
      checkpoint: req.checkpoint,
      image: options.image ?? this.opts.image ?? DEFAULT_VLLM_IMAGE,
      options,
      env: req.env,
      serviceType: this.opts.serviceType ?? 'ClusterIP',
      podAnnotations: this.opts.podAnnotations,
    });
    const base = { namespace, name: req.name, model: req.model, checkpoint: req.checkpoint, templateHash };
    await this.ensureService(namespace, service);
    try {
      const created = await this.k.apps.createNamespacedDeployment({ namespace, body: deployment });
      return { ...base, generation: created.metadata?.generation ?? 1, adopted: false };
    } catch (e) {
      const err = kubeError(e, `create Deployment ${namespace}/${req.name}`);
      if (!isConflict(err)) throw err;
    }
    // It exists: adopt it if it already carries this template, else update it (optimistic concurrency).
    for (let attempt = 1; ; attempt++) {
      const current = await call(`read Deployment ${namespace}/${req.name}`, () => this.k.apps.readNamespacedDeployment({ name: req.name, namespace }));
      const previousRevision = revisionOf(current);
      if (current.metadata?.annotations?.[ANNOTATIONS.templateHash] === templateHash) {
        // The same template: a retried apply. Its "previous" is whatever served before it, if recorded.
        return { ...base, generation: current.metadata?.generation ?? 1, adopted: true, previousRevision: await this.previousRevision(current, templateHash) };
      }
      const body: V1Deployment = {
        ...current,
        metadata: { ...current.metadata, annotations: { ...current.metadata?.annotations, ...deployment.metadata!.annotations }, labels: { ...current.metadata?.labels, ...deployment.metadata!.labels } },
        spec: { ...current.spec!, ...deployment.spec!, selector: current.spec!.selector },
      };
      try {
        const updated = await this.k.apps.replaceNamespacedDeployment({ name: req.name, namespace, body });
        return { ...base, generation: updated.metadata?.generation ?? 1, adopted: false, previousRevision };
      } catch (e) {
        const err = kubeError(e, `update Deployment ${namespace}/${req.name}`);
        if (!isConflict(err) || attempt >= 5) throw err; // 409 Conflict: someone wrote in between, re-read
      }
    }
  }

  private async ensureService(namespace: string, body: V1Service): Promise<void> {
    try {
      await this.k.core.createNamespacedService({ namespace, body });
    } catch (e) {
      const err = kubeError(e, `create Service ${namespace}/${body.metadata!.name}`);
      if (!isConflict(err)) throw err; // exists: the selector is the deployment name, so it already fits
    }
  }

  private async replicaSets(d: V1Deployment): Promise<V1ReplicaSet[]> {
    const { namespace } = d.metadata!;
    const selector = Object.entries(d.spec!.selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
    const list = await call(`list ReplicaSets of ${namespace}/${d.metadata!.name}`, () => this.k.apps.listNamespacedReplicaSet({ namespace: namespace!, labelSelector: selector }));
    return list.items.filter((rs) => rs.metadata?.ownerReferences?.some((o) => o.uid === d.metadata!.uid && o.controller));
  }

  /** The newest revision whose template is not `excludeHash`: what a rollback restores. */
  private async previousRevision(d: V1Deployment, excludeHash: string): Promise<string | undefined> {
    const candidates = (await this.replicaSets(d))
      .filter((rs) => rs.spec?.template?.metadata?.annotations?.[ANNOTATIONS.templateHash] !== excludeHash && revisionOf(rs))
      .sort((a, b) => Number(revisionOf(b)) - Number(revisionOf(a)));
    return candidates[0] ? revisionOf(candidates[0]) : undefined;
  }

  /** Watches until this generation is rolled out, then resolves the endpoint. Throws RolloutFailed. */
  async awaitRollout(rev: Pick<ServingRevision, 'namespace' | 'name' | 'generation'>, opts: { signal?: AbortSignal; onProgress?: (msg: string) => void } = {}): Promise<ServingState> {
    const { namespace, name, generation } = rev;
    let last = '';
    const outcome = await watchObject<V1Deployment, { d: V1Deployment } | { failed: string }>({
      clients: this.k,
      path: `/apis/apps/v1/namespaces/${namespace}/deployments`,
      name,
      signal: opts.signal,
      read: () => this.read(namespace, name),
      until: (d) => {
        const st = rolloutState(d, generation);
        if ('done' in st) return { d: d! };
        if ('failed' in st) return st;
        if (st.waiting !== last) opts.onProgress?.((last = st.waiting));
        return undefined;
      },
    });
    if ('failed' in outcome) throw new RolloutFailed(`Deployment ${namespace}/${name}: ${outcome.failed}`);
    const d = outcome.d;
    return {
      namespace,
      name,
      model: d.metadata?.annotations?.[ANNOTATIONS.model] ?? '',
      checkpoint: d.metadata?.annotations?.[ANNOTATIONS.checkpoint] ?? '',
      revision: revisionOf(d) ?? '',
      endpoint: await this.endpoint(namespace, name, opts.signal),
    };
  }

  /**
   * Where clients reach the model. A load balancer's ingress (ip or hostname, and its port when the
   * status lists one) when the Service has one; else the Service's cluster DNS name, which resolves
   * only inside the cluster.
   */
  async endpoint(namespace: string, name: string, signal?: AbortSignal): Promise<string> {
    for (;;) {
      const svc = await call(`read Service ${namespace}/${name}`, () => this.k.core.readNamespacedService({ name, namespace }));
      const port = svc.spec?.ports?.[0]?.port ?? 8000;
      const ingress = svc.status?.loadBalancer?.ingress?.[0];
      if (ingress && (ingress.ip || ingress.hostname)) return `http://${ingress.ip ?? ingress.hostname}:${ingress.ports?.[0]?.port ?? port}`;
      if (svc.spec?.type !== 'LoadBalancer') return `http://${name}.${namespace}.svc.cluster.local:${port}`;
      if (signal?.aborted) throw new RolloutFailed(`Service ${namespace}/${name} has no load balancer address yet`);
      await sleep(250); // the cloud controller assigns the address asynchronously
    }
  }

  /**
   * Rolls back from the revision whose template is `badTemplateHash`. Idempotent: if the Deployment no
   * longer carries that template, the rollback already happened. With no earlier revision there was
   * never a working endpoint, so the objects are removed instead.
   */
  async rollback(namespace: string, name: string, badTemplateHash: string): Promise<{ action: 'rolled-back' | 'already-rolled-back' | 'removed'; generation?: number; toRevision?: string }> {
    for (let attempt = 1; ; attempt++) {
      const d = await this.read(namespace, name);
      if (!d) return { action: 'removed' };
      if (d.metadata?.annotations?.[ANNOTATIONS.templateHash] !== badTemplateHash) return { action: 'already-rolled-back', generation: d.metadata?.generation };
      const target = (await this.replicaSets(d))
        .filter((rs) => rs.spec?.template?.metadata?.annotations?.[ANNOTATIONS.templateHash] !== badTemplateHash && revisionOf(rs))
        .sort((a, b) => Number(revisionOf(b)) - Number(revisionOf(a)))[0];
      if (!target) {
        await this.teardown(namespace, name);
        return { action: 'removed' };
      }
      const template = structuredClone(target.spec!.template!);
      delete template.metadata?.labels?.['pod-template-hash']; // added by the controller, not part of the template
      const ann = template.metadata?.annotations ?? {};
      const body: V1Deployment = {
        ...d,
        metadata: { ...d.metadata, annotations: { ...d.metadata?.annotations, [ANNOTATIONS.model]: ann[ANNOTATIONS.model] ?? '', [ANNOTATIONS.checkpoint]: ann[ANNOTATIONS.checkpoint] ?? '', [ANNOTATIONS.templateHash]: ann[ANNOTATIONS.templateHash] ?? '' } },
        spec: { ...d.spec!, template },
      };
      try {
        const updated = await this.k.apps.replaceNamespacedDeployment({ name, namespace, body });
        return { action: 'rolled-back', generation: updated.metadata?.generation, toRevision: revisionOf(target) };
      } catch (e) {
        const err = kubeError(e, `roll back Deployment ${namespace}/${name}`);
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  }

  /** Idempotent: deletes the Deployment (its ReplicaSets and pods follow) and the Service. */
  async teardown(namespace: string, name: string): Promise<{ deleted: string[] }> {
    const deleted: string[] = [];
    if (await callOrMissing(`delete Deployment ${namespace}/${name}`, () => this.k.apps.deleteNamespacedDeployment({ name, namespace, propagationPolicy: 'Background' }))) deleted.push(`deployment/${name}`);
    if (await callOrMissing(`delete Service ${namespace}/${name}`, () => this.k.core.deleteNamespacedService({ name, namespace }))) deleted.push(`service/${name}`);
    return { deleted };
  }

  /** Tandem-managed Deployments in a namespace (status, tests). */
  async list(namespace = this.k.namespace): Promise<V1Deployment[]> {
    const l = await call(`list Deployments in ${namespace}`, () => this.k.apps.listNamespacedDeployment({ namespace, labelSelector: 'app.kubernetes.io/managed-by=tandem' }));
    return l.items;
  }
}

export { KubeApiError };
