// The Argo interpreter's activities: pods on an execution target (local.ts, slurm.ts, kubernetes.ts),
// HTTP templates, Kubernetes resources, memoize caches and semaphore limits.
import { Context } from '@temporalio/activity';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { LocalJobBackend } from '../../backends/local-jobs.js';
import { offloadedStatusFile } from '../../argo/slices.js';
import type { ArgoStatus, HttpInput, HttpResult, NodeOutputs, ResourceInput, ResourceResult, RunPodInput, RunPodResult } from '../../argo/lang/types.js';
import { conditionHolds, jqPath, kubectlJsonPath, type KObject } from './resource.js';
import { failure } from '../../contract/failures.js';
import { LocalTarget, unavailable } from './local.js';
import { slurmJobSpec } from './slurm-job.js';
import type { ArgoActivityConfig, ExecutionTarget } from './target.js';
import { activityAuditor, defaultAuditSettings } from '../audit.js';

export type { ArgoActivityConfig, ExecutionTarget } from './target.js';
export { slurmJobSpec, type SlurmJobSpec } from './slurm-job.js';

export function createArgoActivities(config: ArgoActivityConfig) {
  const local = new LocalTarget(new LocalJobBackend(config.home), config);
  const memoFile = (cache: string, key: string) => {
    if (!/^[A-Za-z0-9._-]+$/.test(cache)) throw failure('InvalidRequest', `memoize.cache.configMap.name ${JSON.stringify(cache)} is not a valid name`);
    return join(config.memoDir ?? join(config.home, 'argo', 'memo'), cache, `${createHash('sha256').update(key).digest('hex')}.json`);
  };
  const targets: Partial<Record<RunPodInput['target'], ExecutionTarget>> = { local, ...config.targets };
  const audit = activityAuditor(config.audit ?? defaultAuditSettings(config.home));
  return {
    async argoRunPod(input: RunPodInput): Promise<RunPodResult> {
      let target = targets[input.target];
      let note: string | undefined;
      if (!target && input.target === 'slurm' && (input.slurmFallback ?? config.slurmFallback ?? 'local') === 'local') {
        // The fallback rule (see the top of this file): a Slurm step runs here when no Slurm target is configured.
        const job = input.slurm ? slurmJobSpec(input.slurm) : undefined;
        target = local;
        note = `slurm: no Slurm target on this worker; ran locally${job ? ` (${job.nodes} node${job.nodes === 1 ? '' : 's'} requested)` : ''}`;
      }
      if (!target) throw unavailable(`no ${input.target} execution target is configured on this worker (template ${input.templateName})`);
      const ctx = Context.current();
      // The intent before the pod starts (a pod runs to its end inside this activity), the outcome after it ended.
      const what = { where: { runtime: target.name }, details: { template: input.templateName, name: input.jobName, attempt: ctx.info.attempt } };
      await audit.intent({ what: 'job.submitted', ...what });
      const r = await target.run(input, { heartbeat: (d) => ctx.heartbeat(d), sleep: (ms) => ctx.sleep(ms) });
      await audit({ what: 'job.submitted', ...what, details: { ...what.details, podPhase: r.phase } });
      return note ? { ...r, message: r.message ? `${note}: ${r.message}` : note } : r;
    },

    /** A child workflow's node status, kept in the run store rather than in its parent's history (argo/slices.ts). */
    async argoOffloadStatus(input: { workflowId: string; status: ArgoStatus }): Promise<void> {
      const file = offloadedStatusFile(config.home, input.workflowId);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify(input.status));
      renameSync(`${file}.tmp`, file);
    },

    /** memoize: the entry for `key` in `cache` when it is younger than maxAgeMs (Argo's ConfigMap cache, as files). */
    async argoMemoGet(input: { cache: string; key: string; maxAgeMs?: number }): Promise<{ outputs?: NodeOutputs; nodeId?: string; createdAt?: string }> {
      const file = memoFile(input.cache, input.key);
      if (!existsSync(file)) return {};
      const e = JSON.parse(readFileSync(file, 'utf8')) as { key: string; nodeID: string; outputs: NodeOutputs; creationTimestamp: string };
      if (e.key !== input.key) return {};
      if (input.maxAgeMs !== undefined && Date.now() - Date.parse(e.creationTimestamp) > input.maxAgeMs) return {};
      return { outputs: e.outputs, nodeId: e.nodeID, createdAt: e.creationTimestamp };
    },

    async argoMemoPut(input: { cache: string; key: string; nodeId: string; outputs: NodeOutputs }): Promise<void> {
      const file = memoFile(input.cache, input.key);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify({ key: input.key, nodeID: input.nodeId, outputs: input.outputs, creationTimestamp: new Date().toISOString() }));
      renameSync(`${file}.tmp`, file);
    },

    async argoHttp(input: HttpInput): Promise<HttpResult> {
      const res = await fetch(input.url, { method: input.method, headers: input.headers, body: input.body, signal: AbortSignal.timeout(input.timeoutMs ?? 30_000) });
      return { statusCode: res.status, body: await res.text(), headers: Object.fromEntries(res.headers.entries()) };
    },

    /** A semaphore's limit: the integer in its ConfigMap key (Argo re-reads it on every acquire). */
    async argoSyncLimit(input: { namespace: string; configMap: string; key: string }): Promise<number> {
      const where = `ConfigMap ${input.namespace}/${input.configMap} key ${input.key}`;
      let text: string | undefined;
      if (config.kubernetes?.configMapValue) text = await config.kubernetes.configMapValue(input.namespace, input.configMap, input.key);
      else {
        if (![input.configMap, input.key].every((p) => /^[A-Za-z0-9._-]+$/.test(p) && p !== '.' && p !== '..')) throw failure('InvalidRequest', `${where}: not a valid name`);
        const file = join(config.configMapsDir ?? join(config.home, 'argo', 'configmaps'), input.configMap, input.key);
        if (existsSync(file)) text = readFileSync(file, 'utf8');
      }
      if (text === undefined) throw failure('InvalidRequest', `semaphore limit: ${where} does not exist`);
      const n = Number(text.trim());
      if (!Number.isInteger(n) || n < 0) throw failure('InvalidRequest', `semaphore limit: ${where} is ${JSON.stringify(text.trim())}, not a whole number`);
      return n;
    },

    /**
     * A `resource` template: the action on the manifest, then (with success/failureCondition) the
     * object is watched by polling until one holds; output parameters come from the final object.
     */
    async argoResource(input: ResourceInput): Promise<ResourceResult> {
      const k8s = config.kubernetes;
      if (!k8s) throw unavailable('resource templates need a Kubernetes backend, and none is configured on this worker');
      const ctx = Context.current();
      let obj: KObject | undefined;
      try {
        obj = await k8s.apply(input.manifest, input.action, { namespace: input.namespace, mergeStrategy: input.mergeStrategy, flags: input.flags });
      } catch (e) {
        const err = e as Error & { code?: number; transient?: boolean };
        // API refusals (invalid object, already exists, forbidden…) are the template's failure; an
        // unreachable or overloaded API server is retried by the activity's policy.
        if (err.transient) throw e;
        return { phase: 'Failed', message: err.message, parameters: {} };
      }
      const meta = (obj?.metadata ?? {}) as { name?: string; namespace?: string };
      const ref = obj ? { apiVersion: String(obj.apiVersion), kind: String(obj.kind), namespace: meta.namespace, name: String(meta.name) } : undefined;
      await audit({ what: `resource.${input.action}`, where: { runtime: 'kubernetes' }, details: { object: ref ?? { namespace: input.namespace } } });
      if (ref && (input.successCondition || input.failureCondition) && input.action !== 'delete') {
        let delay = config.pollInitialMs ?? 50;
        for (;;) {
          if (input.failureCondition && conditionHolds(obj!, input.failureCondition)) {
            // A failed object may lack what the outputs read (a real failed Job has no status.succeeded):
            // the node's verdict is its failure condition, not a missing output.
            let parameters: Record<string, string> = {};
            try {
              parameters = outputsOf(obj!);
            } catch {
              /* no outputs from a failed object */
            }
            return { phase: 'Failed', message: `failure condition '${input.failureCondition}' met for ${ref.kind} ${ref.name}`, parameters, resourceName: `${ref.kind.toLowerCase()}/${ref.name}` };
          }
          if (!input.successCondition || conditionHolds(obj!, input.successCondition)) break;
          ctx.heartbeat({ waiting: `${ref.kind}/${ref.name}` });
          await ctx.sleep(delay);
          delay = Math.min(delay * 2, config.pollMaxMs ?? 1000);
          const next = await k8s.get(ref);
          if (!next) return { phase: 'Failed', message: `${ref.kind} ${ref.name} was deleted before its success condition held`, parameters: {} };
          obj = next;
        }
      }
      return { phase: 'Succeeded', parameters: obj ? outputsOf(obj) : {}, resourceName: ref ? `${ref.kind.toLowerCase()}/${ref.name}` : undefined };

      function outputsOf(o: KObject): Record<string, string> {
        const out: Record<string, string> = {};
        for (const p of input.outputParameters ?? []) {
          try {
            if (p.jsonPath !== undefined) out[p.name] = kubectlJsonPath(o, p.jsonPath);
            else if (p.jqFilter !== undefined) out[p.name] = jqPath(o, p.jqFilter);
          } catch (e) {
            if (p.default === undefined) throw failure('InvalidRequest', `output parameter ${p.name}: ${(e as Error).message}`);
          }
          if (out[p.name] === undefined && p.default !== undefined) out[p.name] = p.default;
        }
        return out;
      }
    },
  };
}
