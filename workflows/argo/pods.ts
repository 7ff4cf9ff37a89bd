// What the leaf activities are given: a pod (container, script or Slurm plugin), a Kubernetes resource
// action, an HTTP request. Everything is substituted here, in the workflow, so that the history shows
// exactly what ran; secret values stay references (`envFrom`) that the activity resolves.
import { parseDuration } from '../../contract/duration.js';
import { shortHash } from '../../contract/hash.js';
import { evaluateExpr } from '../../argo/lang/expr.js';
import { substitute, substituteDeep, type Scope } from '../../argo/lang/tags.js';
import type { HttpInput, HttpResult, Json, ResourceInput, RunPodInput } from '../../argo/lang/types.js';
import { arr } from './model.js';

/** The run a pod belongs to: its job name and artifact prefix derive from these. */
export interface PodRun {
  name: string;
  /** The Temporal run id: its random tail tells a retried run's pods from the previous attempt's (same node ids). */
  runId: string;
  artifactRoot?: string;
  /** Whether a name too long for the targets may end in a hash (ARGO_PATCHES.podNames); asked only
   *  for such a name, so that runs with short names record no marker. Default yes. */
  hashLongNames?: () => boolean;
  /** The workflow's `spec.volumes`: every pod may mount them (each pod gets its own emptyDir). */
  volumes?: Json[];
}

/** The longest job name every target takes (Slurm's is 128; Kubernetes objects hash it further). */
export const POD_JOB_NAME_MAX = 120;

/**
 * A job name unique to this node, attempt and run, in the character set every target accepts. A name
 * that does not fit is cut and ends in a hash of the whole identity: a plain cut would drop the node,
 * attempt and run id that come last, and give every pod of a long-named workflow the same job.
 */
export function podJobName(run: PodRun, nodeId: string, attempt: number): string {
  const full = `argo-${run.name}-${nodeId.slice(run.name.length + 1) || '0'}-${attempt}-${run.runId.replace(/-/g, '').slice(-8)}`.toLowerCase().replace(/[^a-z0-9.-]+/g, '-');
  if (full.length <= POD_JOB_NAME_MAX) return full;
  if (run.hashLongNames && !run.hashLongNames()) return full.slice(0, POD_JOB_NAME_MAX);
  const hash = shortHash(JSON.stringify([run.name, nodeId, attempt, run.runId]));
  return `${full.slice(0, POD_JOB_NAME_MAX - hash.length - 1).replace(/[.-]+$/, '')}-${hash}`;
}

export function podInput(tmpl: Json, scope: Scope, nodeId: string, artifacts: RunPodInput['inputArtifacts'], attempt: number, run: PodRun): RunPodInput {
  const leaf = substituteDeep(tmpl, scope);
  const c = (leaf.container ?? leaf.script ?? {}) as Json;
  const plugin = leaf.plugin as Json | undefined;
  const slurm = (plugin?.slurm as Json | undefined) ?? undefined;
  const annotations = ((leaf.metadata as Json | undefined)?.annotations ?? {}) as Record<string, string>;
  const target = slurm ? 'slurm' : ((annotations['tandem.io/target'] ?? 'local') as RunPodInput['target']);
  const env: Record<string, string> = {};
  const envFrom: NonNullable<RunPodInput['envFrom']> = [];
  for (const e of arr(c.env)) {
    if (e.value !== undefined) env[String(e.name)] = String(e.value);
    const vf = (e.valueFrom ?? {}) as Json;
    const sk = (vf.secretKeyRef ?? vf.configMapKeyRef) as Json | undefined;
    if (sk) envFrom.push({ name: String(e.name), [vf.secretKeyRef ? 'secret' : 'configMap']: String(sk.name), key: String(sk.key), optional: sk.optional === true });
    else if (vf.fieldRef) env[String(e.name)] = String(((vf.fieldRef as Json).fieldPath as string) === 'metadata.name' ? nodeId : '');
  }
  const deadline = leaf.activeDeadlineSeconds ?? leaf.timeout;
  const timeoutMs = deadline !== undefined ? parseDuration(String(deadline)) : undefined;
  return {
    jobName: podJobName(run, nodeId, attempt),
    target,
    templateName: String(tmpl.name),
    ...(Object.keys(annotations).length ? { annotations } : {}),
    kind: slurm ? 'plugin' : leaf.script ? 'script' : 'container',
    image: c.image as string | undefined,
    command: (c.command as string[] | undefined) ?? [],
    args: (c.args as string[] | undefined) ?? [],
    source: (leaf.script as Json | undefined)?.source as string | undefined,
    env,
    envFrom,
    workingDir: c.workingDir as string | undefined,
    timeoutMs,
    inputArtifacts: artifacts,
    outputParameters: arr((leaf.outputs as Json | undefined)?.parameters)
      .filter((p) => (p.valueFrom as Json | undefined)?.path !== undefined)
      .map((p) => ({ name: String(p.name), path: String((p.valueFrom as Json).path), default: (p.valueFrom as Json).default as string | undefined })),
    outputArtifacts: arr((leaf.outputs as Json | undefined)?.artifacts).filter((a) => a.path !== undefined).map((a) => ({ name: String(a.name), path: String(a.path), optional: a.optional === true })),
    artifactPrefix: `${run.artifactRoot ?? ''}${run.name}/${nodeId}`,
    slurm,
    slurmFallback: annotations['tandem.io/slurm-fallback'] === 'fail' ? 'fail' : annotations['tandem.io/slurm-fallback'] === 'local' ? 'local' : undefined,
    ...podVolumes(leaf, c, run.volumes),
  };
}

const mountsOf = (v: unknown): NonNullable<RunPodInput['volumeMounts']> =>
  arr(v).map((m) => ({ name: String(m.name), mountPath: String(m.mountPath), ...(m.readOnly === true ? { readOnly: true } : {}), ...(m.subPath !== undefined ? { subPath: String(m.subPath) } : {}) }));

/**
 * Volumes, mounts, init containers and limits of a pod; only the fields a template has, so the
 * activity input of a pod without them is what it was before they existed.
 */
function podVolumes(leaf: Json, c: Json, wfVolumes: Json[] | undefined): Partial<RunPodInput> {
  const out: Partial<RunPodInput> = {};
  const volumeMounts = mountsOf(c.volumeMounts);
  if (volumeMounts.length) out.volumeMounts = volumeMounts;
  const inits = arr(leaf.initContainers).map((i) => ({
    name: String(i.name),
    image: i.image as string | undefined,
    command: (i.command as string[] | undefined) ?? [],
    args: (i.args as string[] | undefined) ?? [],
    workingDir: i.workingDir as string | undefined,
    // mirrorVolumeMounts: Argo gives the init container the main container's mounts.
    volumeMounts: [...mountsOf(i.volumeMounts), ...(i.mirrorVolumeMounts === true ? volumeMounts : [])],
  }));
  if (inits.length) out.initContainers = inits;
  const named = new Set([...volumeMounts, ...inits.flatMap((i) => i.volumeMounts)].map((m) => m.name));
  if (named.size) {
    const declared = [...arr(leaf.volumes), ...(wfVolumes ?? [])];
    out.volumes = [...named].map((name) => {
      const v = declared.find((d) => d.name === name);
      const kind = v ? (Object.keys(v).find((k) => k !== 'name') ?? 'unknown') : 'undeclared';
      const hostPath = kind === 'hostPath' ? ((v!.hostPath as Json).path as string | undefined) : undefined;
      return { name, kind, ...(hostPath !== undefined ? { hostPath: String(hostPath) } : {}) };
    });
  }
  const limits = (c.resources as Json | undefined)?.limits as Json | undefined;
  if (limits && (limits.cpu !== undefined || limits.memory !== undefined)) {
    out.limits = { ...(limits.cpu !== undefined ? { cpu: String(limits.cpu) } : {}), ...(limits.memory !== undefined ? { memory: String(limits.memory) } : {}) };
  }
  return out;
}

/** A `resource` template's action; output parameters read from the object by jsonPath or jqFilter. */
export function resourceInput(tmpl: Json, scope: Scope): ResourceInput {
  const res = tmpl.resource as Json;
  const str = (v: unknown) => (v === undefined ? undefined : substitute(String(v), scope));
  return {
    manifest: str(res.manifest) ?? '',
    action: String(res.action),
    mergeStrategy: str(res.mergeStrategy),
    flags: Array.isArray(res.flags) ? res.flags.map((f) => substitute(String(f), scope)) : undefined,
    successCondition: str(res.successCondition),
    failureCondition: str(res.failureCondition),
    outputParameters: arr((tmpl.outputs as Json | undefined)?.parameters)
      .filter((p) => (p.valueFrom as Json | undefined)?.jsonPath !== undefined || (p.valueFrom as Json | undefined)?.jqFilter !== undefined)
      .map((p) => {
        const vf = p.valueFrom as Json;
        return { name: String(p.name), jsonPath: str(vf.jsonPath), jqFilter: str(vf.jqFilter), default: vf.default === undefined ? undefined : String(vf.default) };
      }),
  };
}

/** An `http` template's request; `h` is the template's (substituted) `http` block. */
export function httpRequest(h: Json): HttpInput {
  const headers: Record<string, string> = {};
  for (const x of arr(h.headers)) if (x.value !== undefined) headers[String(x.name)] = String(x.value);
  return { url: String(h.url), method: String(h.method ?? 'GET'), headers, body: h.body as string | undefined, timeoutMs: h.timeoutSeconds !== undefined ? Number(h.timeoutSeconds) * 1000 : undefined };
}

/** Whether the response meets `successCondition` (an expr over `response`), or is a 2xx without one. */
export function httpOutcome(h: Json, r: HttpResult): { ok: boolean; message?: string } {
  const cond = h.successCondition !== undefined ? String(h.successCondition) : undefined;
  const env = { response: { statusCode: r.statusCode, body: r.body, headers: r.headers } };
  const ok = cond ? evaluateExpr(cond, env) === true : r.statusCode >= 200 && r.statusCode < 300;
  return { ok, message: ok ? undefined : `HTTP ${r.statusCode}${cond ? `: successCondition '${cond}' false` : ''}` };
}
