// Arbitrary Kubernetes objects for Argo `resource` templates: get / create / apply / replace / patch /
// delete on any manifest (CRDs included) through client-node's KubernetesObjectApi, which finds each
// kind's REST path by API discovery. `apply` and `patch` are done as read → merge → replace (PUT
// with the read resourceVersion, retried on a conflict), so they work on any API server without
// server-side apply. Errors are mapped by client.ts (KubeApiError: transient or not).
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { yamlLimitProblem } from '../../contract/limits.js';
import type { ArgoKubernetes, KObject } from '../../activities/argo/resource.js';
import { call, callOrMissing, isConflict, KubeApiError, type KubeClients } from './client.js';

type Obj = KubernetesObject & KObject;
type Named = Obj & { apiVersion: string; kind: string; metadata: { name: string; namespace: string } };

/** KubernetesObjectApi with its discovery lookup made available (to place objects by scope). */
class ObjectApi extends KubernetesObjectApi {
  discover(apiVersion: string, kind: string) {
    return this.resource(apiVersion, kind);
  }
}

/** RFC 7386 JSON merge patch (also used for strategic merges: maps merge, lists are replaced). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export class KubernetesResources implements ArgoKubernetes {
  private readonly api: ObjectApi;

  constructor(private readonly clients: KubeClients) {
    this.api = clients.kc.makeApiClient(ObjectApi);
  }

  /** Fills in the namespace of a namespaced kind (the worker's namespace when the manifest names none). */
  private async place(obj: Obj, namespace?: string): Promise<Obj> {
    if (!obj.apiVersion || !obj.kind) throw new KubeApiError(422, 'Invalid', 'the manifest needs apiVersion and kind');
    const res = await call(`discover ${obj.apiVersion} ${obj.kind}`, () => this.api.discover(obj.apiVersion!, obj.kind!));
    if (!res) throw new KubeApiError(404, 'NotFound', `the server has no resource for ${obj.apiVersion} ${obj.kind}`);
    const metadata = { ...(obj.metadata ?? {}) };
    if (res.namespaced) metadata.namespace ??= namespace ?? this.clients.namespace;
    else delete metadata.namespace;
    return { ...obj, metadata };
  }

  private what(action: string, o: Obj): string {
    return `${action} ${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? o.metadata?.generateName ?? ''}`;
  }

  async get(ref: { apiVersion: string; kind: string; namespace?: string; name: string }): Promise<KObject | undefined> {
    const o = await this.place({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } });
    return (await callOrMissing(this.what('get', o), () => this.api.read(o as Named))) as KObject | undefined;
  }

  async apply(manifest: string, action: string, opts: { namespace?: string; mergeStrategy?: string; flags?: string[] } = {}): Promise<KObject | undefined> {
    const limit = yamlLimitProblem(manifest);
    if (limit) throw new KubeApiError(422, 'Invalid', `the manifest${limit.line ? ` (line ${limit.line})` : ''}: ${limit.message}`);
    const parsed = parseYaml(manifest, { maxAliasCount: 100 }) as unknown;
    if (action === 'patch' && opts.mergeStrategy === 'json') {
      // The manifest is the patch (a list of operations); the target comes from the flags: [kind-or-resource, name].
      throw new KubeApiError(422, 'Invalid', 'patch with mergeStrategy json needs the target in flags, which Tandem does not read; use mergeStrategy merge with a manifest naming apiVersion, kind and metadata.name');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new KubeApiError(422, 'Invalid', 'the manifest is not a single object');
    const obj = await this.place(parsed as Obj, opts.namespace);
    const named = obj as Named;
    switch (action) {
      case 'create':
        return (await call(this.what('create', obj), () => this.api.create(obj))) as KObject;
      case 'get': {
        const got = await this.get({ apiVersion: obj.apiVersion!, kind: obj.kind!, namespace: obj.metadata?.namespace, name: String(obj.metadata?.name) });
        if (!got) throw new KubeApiError(404, 'NotFound', `${this.what('get', obj)}: not found`);
        return got;
      }
      case 'delete': {
        // As Argo does it (kubectl delete --ignore-not-found): an object already gone is success.
        await callOrMissing(this.what('delete', obj), () => this.api.delete(named, undefined, undefined, undefined, undefined, 'Background'));
        return undefined;
      }
      case 'apply':
      case 'replace':
      case 'patch':
        return this.update(named, action, opts.mergeStrategy);
      default:
        throw new KubeApiError(422, 'Invalid', `resource action ${JSON.stringify(action)} is not one of get, create, apply, replace, patch, delete`);
    }
  }

  /** read → merge (apply, patch) or take as is (replace) → PUT with the read resourceVersion; create when apply finds nothing. */
  private async update(obj: Named, action: 'apply' | 'replace' | 'patch', strategy?: string): Promise<KObject> {
    if (!obj.metadata.name) throw new KubeApiError(422, 'Invalid', `${action} needs metadata.name`);
    for (let attempt = 0; ; attempt++) {
      const current = (await callOrMissing(this.what('get', obj), () => this.api.read(obj))) as Obj | undefined;
      if (!current) {
        if (action === 'apply') return (await call(this.what('create', obj), () => this.api.create(obj))) as KObject;
        throw new KubeApiError(404, 'NotFound', `${this.what(action, obj)}: not found`);
      }
      if (strategy && !['strategic', 'merge'].includes(strategy)) throw new KubeApiError(422, 'Invalid', `mergeStrategy ${strategy} is not supported here (strategic, merge)`);
      const next = (action === 'replace' ? { ...obj } : mergePatch(current, obj)) as Obj;
      next.metadata = { ...next.metadata, resourceVersion: current.metadata?.resourceVersion } as Obj['metadata'];
      try {
        return (await call(this.what(action, obj), () => this.api.replace(next))) as KObject;
      } catch (e) {
        if (!isConflict(e) || attempt >= 4) throw e;
      }
    }
  }

  async configMapValue(namespace: string, name: string, key: string): Promise<string | undefined> {
    const cm = await callOrMissing(`get ConfigMap ${namespace}/${name}`, () => this.clients.core.readNamespacedConfigMap({ name, namespace }));
    return cm?.data?.[key];
  }
}
