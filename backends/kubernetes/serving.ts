// vLLM serving on Kubernetes: one apps/v1 Deployment (rolling update, maxUnavailable 0, maxSurge 1)
// behind a v1 Service per served model endpoint. Each run's apply is a new revision of it: apply →
// awaitRollout → (gates, in activities/) → keep, or rollback to the revision that served before.
// Rollback is `kubectl rollout undo`: copy the pod template of an older ReplicaSet back into the
// Deployment, so the restored revision is exactly what served before.
import type { V1Deployment, V1ReplicaSet, V1Service } from '@kubernetes/client-node';
import { parseKubernetesOptions, type KubernetesOptionsInput } from '../../contract/kubernetes.js';
import { call, callOrMissing, isConflict, kubeError, KubeApiError, type KubeClients } from './client.js';
import { ANNOTATIONS, LABELS, servingManifests } from './manifests.js';
import { watchObject } from './watch.js';

export interface ServingRequest {
  name: string;
  pipeline: string;
  /** Tenant and run (workflow id): set by runs with PATCHES.servingEndpoint, which own the endpoint by tenant + pipeline. */
  tenant?: string;
  run?: string;
  model: string;
  checkpoint: string;
  env?: Record<string, string>;
  kubernetes?: KubernetesOptionsInput;
  /** Where the options came from, for errors (default `kubernetes`). */
  field?: string;
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
  /** Its pod template's hash: what a rollback restores, even if other revisions came in between. */
  previousTemplateHash?: string;
  adopted: boolean;
  /** The run that applied it; `created`: that run created the Deployment, so only its undo may delete it. */
  run?: string;
  created?: boolean;
}

/** An endpoint owned by another tenant or pipeline, or not by Tandem at all: never rolled out to. */
export class ServingOwnershipError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServingOwnershipError';
  }
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
  /**
   * Where the gates reach the model, given its Service (default: the load balancer's address or the
   * Service's cluster DNS name). Tests map it to a loopback stand-in.
   */
  resolveEndpoint?: (svc: V1Service) => string | undefined | Promise<string | undefined>;
}

/** One revision of an endpoint (a ReplicaSet), for `tandem deployments show`. */
export interface RevisionRow {
  revision: number;
  replicaSet: string;
  replicas: number;
  ready: number;
  current: boolean;
  run?: string;
  checkpoint?: string;
  model?: string;
  created?: string;
}

/** One endpoint, for `tandem deployments list`. */
export interface EndpointRow {
  name: string;
  namespace: string;
  model?: string;
  revision?: string;
  ready: number;
  desired: number;
  pipeline?: string;
  tenant?: string;
  run?: string;
  checkpoint?: string;
}

export const DEFAULT_VLLM_IMAGE = 'vllm/vllm-openai:v0.10.1';

const revisionOf = (o: { metadata?: { annotations?: Record<string, string> } } | undefined) => o?.metadata?.annotations?.[ANNOTATIONS.revision];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * kubectl's rollout-status rule: done when the controller has seen this generation, every replica is
 * updated and available, and no old replica is left; failed when Progressing says the deadline passed.
 */
export function rolloutState(d: V1Deployment | undefined, generation: number, staleBefore?: Date): { done: true } | { failed: string } | { waiting: string } {
  if (!d) return { failed: 'the Deployment was deleted during the rollout' };
  const s = d.status ?? {};
  if ((s.observedGeneration ?? 0) < generation || (d.metadata?.generation ?? 0) > generation) {
    if ((d.metadata?.generation ?? 0) > generation) return { failed: `the Deployment was changed again (generation ${d.metadata?.generation}) during the rollout of generation ${generation}` };
    return { waiting: 'waiting for the Deployment controller to observe the update' };
  }
  const progressing = s.conditions?.find((c) => c.type === 'Progressing');
  // After a rollback from a timed-out revision the controller keeps the old ProgressDeadlineExceeded
  // condition until the restored revision is complete (its DeploymentTimedOut keeps an existing
  // TimedOut reason): a condition set before the rollback is that old verdict, not this rollout's.
  // (lastUpdateTime has whole seconds: one set in the same second as the rollback is the old one too;
  // a new verdict needs at least progressDeadlineSeconds after it.)
  const stale = staleBefore && progressing?.lastUpdateTime && new Date(progressing.lastUpdateTime).getTime() < staleBefore.getTime() + 1000;
  if (progressing?.reason === 'ProgressDeadlineExceeded' && !stale) return { failed: `rollout exceeded its progress deadline (${progressing.message ?? 'no progress'})` };
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

  private options(input: KubernetesOptionsInput | undefined, field: string) {
    return parseKubernetesOptions({ ...this.opts.defaults, ...input }, field);
  }

  private read(namespace: string, name: string) {
    return callOrMissing(`read Deployment ${namespace}/${name}`, () => this.k.apps.readNamespacedDeployment({ name, namespace }));
  }

  /**
   * Creates the endpoint's Deployment and Service, or rolls a new revision out to them; idempotent
   * for the same request. With a tenant (PATCHES.servingEndpoint runs) an existing endpoint must be
   * Tandem's and belong to the same tenant and pipeline, or nothing is changed.
   */
  async apply(req: ServingRequest): Promise<ServingRevision> {
    const field = req.field ?? 'kubernetes';
    const options = this.options(req.kubernetes, field); // throws naming the field: nothing is created
    const namespace = options.namespace ?? this.k.namespace;
    const { deployment, service, templateHash } = servingManifests({
      name: req.name,
      namespace,
      pipeline: req.pipeline,
      tenant: req.tenant,
      run: req.run,
      model: req.model,
      checkpoint: req.checkpoint,
      image: options.image ?? this.opts.image ?? DEFAULT_VLLM_IMAGE,
      options,
      env: req.env,
      serviceType: this.opts.serviceType ?? 'ClusterIP',
      podAnnotations: this.opts.podAnnotations,
      field,
    }); // also throws when the checkpoint is on no volume a pod can read
    const base = { namespace, name: req.name, model: req.model, checkpoint: req.checkpoint, templateHash, run: req.run };
    await this.ensureService(namespace, service, req);
    try {
      const created = await this.k.apps.createNamespacedDeployment({ namespace, body: deployment });
      return { ...base, generation: created.metadata?.generation ?? 1, adopted: false, created: req.run ? true : undefined };
    } catch (e) {
      const err = kubeError(e, `create Deployment ${namespace}/${req.name}`);
      if (!isConflict(err)) throw err;
    }
    // It exists: adopt it if it already carries this template, else update it (optimistic concurrency).
    for (let attempt = 1; ; attempt++) {
      const current = await call(`read Deployment ${namespace}/${req.name}`, () => this.k.apps.readNamespacedDeployment({ name: req.name, namespace }));
      const problem = ownershipProblem('Deployment', current, req);
      if (problem) throw new ServingOwnershipError(problem);
      const ann = current.metadata?.annotations ?? {};
      const created = req.run ? ann[ANNOTATIONS.createdBy] === req.run : undefined;
      if (ann[ANNOTATIONS.templateHash] === templateHash) {
        // The same template: a retried apply. What served before it was recorded by the update.
        const previousTemplateHash = ann[ANNOTATIONS.previousTemplateHash];
        return { ...base, generation: current.metadata?.generation ?? 1, adopted: true, created, previousTemplateHash, previousRevision: await this.previousRevision(current, templateHash, previousTemplateHash) };
      }
      const previousRevision = revisionOf(current);
      const previousTemplateHash = ann[ANNOTATIONS.templateHash];
      const annotations: Record<string, string> = { ...ann, ...deployment.metadata!.annotations };
      // The creator stays the creator; the previous revision is recorded for a retried apply.
      if (ann[ANNOTATIONS.createdBy]) annotations[ANNOTATIONS.createdBy] = ann[ANNOTATIONS.createdBy];
      else delete annotations[ANNOTATIONS.createdBy];
      if (previousTemplateHash) annotations[ANNOTATIONS.previousTemplateHash] = previousTemplateHash;
      const body: V1Deployment = {
        ...current,
        metadata: { ...current.metadata, annotations, labels: { ...current.metadata?.labels, ...deployment.metadata!.labels } },
        spec: { ...current.spec!, ...deployment.spec!, selector: current.spec!.selector },
      };
      try {
        const updated = await this.k.apps.replaceNamespacedDeployment({ name: req.name, namespace, body });
        return { ...base, generation: updated.metadata?.generation ?? 1, adopted: false, created, previousRevision, previousTemplateHash };
      } catch (e) {
        const err = kubeError(e, `update Deployment ${namespace}/${req.name}`);
        if (!isConflict(err) || attempt >= 5) throw err; // 409 Conflict: someone wrote in between, re-read
      }
    }
  }

  private async ensureService(namespace: string, body: V1Service, req: ServingRequest): Promise<void> {
    try {
      await this.k.core.createNamespacedService({ namespace, body });
    } catch (e) {
      const err = kubeError(e, `create Service ${namespace}/${body.metadata!.name}`);
      if (!isConflict(err)) throw err;
      // It exists: its selector is the endpoint's name, so it fits, if it is this endpoint's.
      const current = await call(`read Service ${namespace}/${body.metadata!.name}`, () => this.k.core.readNamespacedService({ name: body.metadata!.name!, namespace }));
      const problem = ownershipProblem('Service', current, req);
      if (problem) throw new ServingOwnershipError(problem);
    }
  }

  private async replicaSets(d: V1Deployment): Promise<V1ReplicaSet[]> {
    const { namespace } = d.metadata!;
    const selector = Object.entries(d.spec!.selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
    const list = await call(`list ReplicaSets of ${namespace}/${d.metadata!.name}`, () => this.k.apps.listNamespacedReplicaSet({ namespace: namespace!, labelSelector: selector }));
    return list.items.filter((rs) => rs.metadata?.ownerReferences?.some((o) => o.uid === d.metadata!.uid && o.controller));
  }

  /** What a rollback from the template `badHash` restores: the ReplicaSet of `preferHash` when it is
   *  still kept, else the newest one with another template. */
  private async rollbackTarget(d: V1Deployment, badHash: string, preferHash?: string): Promise<V1ReplicaSet | undefined> {
    const candidates = (await this.replicaSets(d))
      .filter((rs) => templateHashOf(rs) !== badHash && revisionOf(rs))
      .sort((a, b) => Number(revisionOf(b)) - Number(revisionOf(a)));
    return candidates.find((rs) => preferHash !== undefined && templateHashOf(rs) === preferHash) ?? candidates[0];
  }

  private async previousRevision(d: V1Deployment, excludeHash: string, preferHash?: string): Promise<string | undefined> {
    return revisionOf(await this.rollbackTarget(d, excludeHash, preferHash));
  }

  /** Watches until this generation is rolled out, then resolves the endpoint. Throws RolloutFailed. */
  /** `staleBefore`: a progress-deadline verdict older than this is not this rollout's (a rollback's wait). */
  async awaitRollout(rev: Pick<ServingRevision, 'namespace' | 'name' | 'generation'>, opts: { signal?: AbortSignal; onProgress?: (msg: string) => void; staleBefore?: Date } = {}): Promise<ServingState> {
    const { namespace, name, generation } = rev;
    let last = '';
    const outcome = await watchObject<V1Deployment, { d: V1Deployment } | { failed: string }>({
      clients: this.k,
      path: `/apis/apps/v1/namespaces/${namespace}/deployments`,
      name,
      signal: opts.signal,
      read: () => this.read(namespace, name),
      until: (d) => {
        const st = rolloutState(d, generation, opts.staleBefore);
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
      const resolved = await this.opts.resolveEndpoint?.(svc);
      if (resolved) return resolved;
      const port = svc.spec?.ports?.[0]?.port ?? 8000;
      const ingress = svc.status?.loadBalancer?.ingress?.[0];
      if (ingress && (ingress.ip || ingress.hostname)) return `http://${ingress.ip ?? ingress.hostname}:${ingress.ports?.[0]?.port ?? port}`;
      if (svc.spec?.type !== 'LoadBalancer') return `http://${name}.${namespace}.svc.cluster.local:${port}`;
      if (signal?.aborted) throw new RolloutFailed(`Service ${namespace}/${name} has no load balancer address yet`);
      await sleep(250); // the cloud controller assigns the address asynchronously
    }
  }

  /**
   * Undoes the revision `rev` applied (a failed rollout or gate, or a cancelled run): if the Deployment
   * still carries its template, restore the revision that served before (`previousTemplateHash`, or
   * the newest older one). Idempotent: once the template is gone, the undo already happened. With no
   * earlier revision there was never a working endpoint: the objects are removed, but only by the run
   * that created them (runs before PATCHES.servingEndpoint carry no `run`, and always removed them).
   */
  async rollback(rev: Pick<ServingRevision, 'namespace' | 'name' | 'templateHash' | 'previousTemplateHash' | 'created' | 'run'>): Promise<{ action: 'rolled-back' | 'already-rolled-back' | 'removed' | 'kept'; generation?: number; toRevision?: string }> {
    const { namespace, name, templateHash: bad } = rev;
    for (let attempt = 1; ; attempt++) {
      const d = await this.read(namespace, name);
      if (!d) return { action: 'removed' };
      if (templateHashOf(d) !== bad) return { action: 'already-rolled-back', generation: d.metadata?.generation };
      const target = await this.rollbackTarget(d, bad, rev.previousTemplateHash);
      if (!target) {
        if (rev.run !== undefined && !rev.created) return { action: 'kept' }; // not this run's to delete
        await this.teardown(namespace, name);
        return { action: 'removed' };
      }
      try {
        const updated = await this.restore(d, target);
        return { action: 'rolled-back', generation: updated.metadata?.generation, toRevision: revisionOf(target) };
      } catch (e) {
        const err = kubeError(e, `roll back Deployment ${namespace}/${name}`);
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  }

  /** The Deployment with `target`'s pod template (what `kubectl rollout undo` writes). */
  private async restore(d: V1Deployment, target: V1ReplicaSet): Promise<V1Deployment> {
    const { namespace, name } = d.metadata as { namespace: string; name: string };
    const template = structuredClone(target.spec!.template!);
    delete template.metadata?.labels?.['pod-template-hash']; // added by the controller, not part of the template
    const ann = template.metadata?.annotations ?? {};
    const annotations: Record<string, string> = { ...d.metadata?.annotations };
    for (const k of [ANNOTATIONS.model, ANNOTATIONS.checkpoint, ANNOTATIONS.templateHash, ANNOTATIONS.run]) {
      if (ann[k] !== undefined) annotations[k] = ann[k];
      else delete annotations[k];
    }
    delete annotations[ANNOTATIONS.previousTemplateHash]; // a retried apply of the undone revision updates again
    const body: V1Deployment = { ...d, metadata: { ...d.metadata, annotations }, spec: { ...d.spec!, template } };
    return this.k.apps.replaceNamespacedDeployment({ name, namespace, body });
  }

  /**
   * `kubectl rollout undo [--to-revision N]` for an operator (`tandem deployments rollback`): to
   * revision N, or to the newest revision before the current one. Returns the new revision's generation.
   */
  async undo(namespace: string, name: string, toRevision?: number): Promise<{ generation: number; fromRevision?: string; toRevision: string; skipped?: boolean }> {
    for (let attempt = 1; ; attempt++) {
      const d = await this.managed(namespace, name);
      const current = Number(revisionOf(d) ?? 0);
      const sets = (await this.replicaSets(d)).filter((rs) => revisionOf(rs)).sort((a, b) => Number(revisionOf(b)) - Number(revisionOf(a)));
      const target = toRevision !== undefined ? sets.find((rs) => Number(revisionOf(rs)) === toRevision) : sets.find((rs) => Number(revisionOf(rs)) < current);
      if (!target) {
        const kept = sets.map((rs) => revisionOf(rs)).join(', ') || 'none';
        throw new ServingNotFound(toRevision !== undefined ? `Deployment ${namespace}/${name} has no revision ${toRevision} (revisions kept: ${kept})` : `Deployment ${namespace}/${name} has no revision before ${current} to roll back to (revisions kept: ${kept})`);
      }
      if (templateHashOf(target) !== undefined && templateHashOf(target) === templateHashOf(d)) return { generation: d.metadata?.generation ?? 1, fromRevision: revisionOf(d), toRevision: revisionOf(target)!, skipped: true };
      try {
        const updated = await this.restore(d, target);
        return { generation: updated.metadata?.generation ?? 1, fromRevision: revisionOf(d), toRevision: revisionOf(target)! };
      } catch (e) {
        const err = kubeError(e, `roll back Deployment ${namespace}/${name}`);
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  }

  /** A Tandem-managed Deployment, or ServingNotFound saying why not. */
  private async managed(namespace: string, name: string): Promise<V1Deployment> {
    const d = await this.read(namespace, name);
    if (!d) throw new ServingNotFound(`no Deployment ${namespace}/${name}`);
    if (d.metadata?.labels?.[LABELS.managedBy] !== 'tandem') throw new ServingNotFound(`Deployment ${namespace}/${name} is not managed by Tandem (no ${LABELS.managedBy}=tandem label)`);
    return d;
  }

  /** The revisions (ReplicaSets) of an endpoint, newest first, with the run and checkpoint of each. */
  async revisions(namespace: string, name: string): Promise<{ endpoint: EndpointRow; revisions: RevisionRow[] }> {
    const d = await this.managed(namespace, name);
    const current = revisionOf(d);
    const revisions = (await this.replicaSets(d))
      .map((rs): RevisionRow => {
        const ann = rs.spec?.template?.metadata?.annotations ?? {};
        return { revision: Number(revisionOf(rs) ?? 0), replicaSet: rs.metadata!.name!, replicas: rs.status?.replicas ?? 0, ready: rs.status?.readyReplicas ?? 0, current: revisionOf(rs) === current, run: ann[ANNOTATIONS.run], checkpoint: ann[ANNOTATIONS.checkpoint], model: ann[ANNOTATIONS.model], created: rs.metadata?.creationTimestamp ? new Date(rs.metadata.creationTimestamp).toISOString() : undefined };
      })
      .sort((a, b) => b.revision - a.revision);
    return { endpoint: endpointRow(d), revisions };
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
    const l = await call(`list Deployments in ${namespace}`, () => this.k.apps.listNamespacedDeployment({ namespace, labelSelector: `${LABELS.managedBy}=tandem` }));
    return l.items;
  }

  /** The served model endpoints in a namespace, as `tandem deployments list` shows them. */
  async endpoints(namespace = this.k.namespace): Promise<EndpointRow[]> {
    return (await this.list(namespace)).filter((d) => d.metadata?.labels?.[LABELS.name] === 'vllm').map(endpointRow).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** `tandem deployments delete`: the endpoint's Deployment (its ReplicaSets and pods follow) and Service. */
  async remove(namespace: string, name: string): Promise<{ deleted: string[] }> {
    await this.managed(namespace, name);
    return this.teardown(namespace, name);
  }
}

/** An endpoint or revision an operator named that is not there (or not Tandem's). */
export class ServingNotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServingNotFound';
  }
}

const templateHashOf = (o: V1Deployment | V1ReplicaSet | undefined) => o?.spec?.template?.metadata?.annotations?.[ANNOTATIONS.templateHash] ?? o?.metadata?.annotations?.[ANNOTATIONS.templateHash];

function endpointRow(d: V1Deployment): EndpointRow {
  const ann = d.metadata?.annotations ?? {};
  const tpl = d.spec?.template?.metadata?.annotations ?? {};
  return {
    name: d.metadata!.name!,
    namespace: d.metadata!.namespace!,
    model: tpl[ANNOTATIONS.model] ?? ann[ANNOTATIONS.model],
    revision: revisionOf(d),
    ready: d.status?.readyReplicas ?? 0,
    desired: d.spec?.replicas ?? 1,
    pipeline: ann[ANNOTATIONS.pipeline] ?? d.metadata?.labels?.[LABELS.pipeline],
    tenant: ann[ANNOTATIONS.tenant] ?? d.metadata?.labels?.[LABELS.tenant],
    run: tpl[ANNOTATIONS.run],
    checkpoint: tpl[ANNOTATIONS.checkpoint] ?? ann[ANNOTATIONS.checkpoint],
  };
}

/**
 * Why a run may not roll out to an existing object (undefined: it may). A run without a tenant (before
 * PATCHES.servingEndpoint, its name held its workflow id) checks nothing, as before.
 */
export function ownershipProblem(kind: string, o: V1Deployment | V1Service, req: Pick<ServingRequest, 'tenant' | 'pipeline' | 'name'>): string | undefined {
  if (req.tenant === undefined) return undefined;
  const at = `${kind} ${o.metadata?.namespace}/${o.metadata?.name}`;
  const fix = 'choose another stages.deploy.name (or delete it with `tandem deployments delete`)';
  if (o.metadata?.labels?.[LABELS.managedBy] !== 'tandem') return `${at} exists and is not managed by Tandem: a run never takes over another's objects; ${fix}`;
  const ann = o.metadata?.annotations ?? {};
  const pipeline = ann[ANNOTATIONS.pipeline];
  const tenant = ann[ANNOTATIONS.tenant];
  if (pipeline === req.pipeline && tenant === req.tenant) return undefined;
  const owner = pipeline || tenant ? `pipeline "${pipeline ?? o.metadata?.labels?.[LABELS.pipeline] ?? '?'}" of tenant "${tenant ?? '?'}"` : `a run that recorded no owner (pipeline label "${o.metadata?.labels?.[LABELS.pipeline] ?? ''}")`;
  return `${at} belongs to ${owner}, not to pipeline "${req.pipeline}" of tenant "${req.tenant}": a run rolls out only to its own pipeline's endpoint; ${fix}`;
}

export { KubeApiError };
