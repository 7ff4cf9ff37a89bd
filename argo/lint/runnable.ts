// Can a resolved workflow run on this host's local runtime? Only reachable templates count; the
// answer names the first thing missing (an interpreter, Kubernetes, the network, a cloud bucket).
import type { Json } from './load.js';
import { findExecutable, localArgv, SANDBOX_PATH } from '../local-command.js';

const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const REMOTE_ARTIFACTS = ['s3', 'gcs', 'oss', 'hdfs', 'artifactory', 'azure', 'git', 'http'];

export function reachableTemplates(spec: Json): Json[] {
  const byName = new Map(arr(spec.templates).map((t) => [String(t.name), t]));
  const seen = new Map<string, Json>();
  const visit = (name: unknown, inline?: Json) => {
    if (inline) {
      if (seen.has(String(name))) return;
    } else if (typeof name !== 'string' || seen.has(name) || !byName.has(name)) return;
    const t = inline ?? byName.get(name as string)!;
    seen.set(String(name), t);
    const calls = [...arr(t.steps).flatMap((g) => (Array.isArray(g) ? (g as Json[]) : [])), ...arr((t.dag as Json | undefined)?.tasks)];
    for (const c of calls) {
      // Inline templates (steps[].inline, tasks[].inline) run like named ones.
      if (c.inline) visit(`${String(name)}/${String(c.name)}-inline`, { name: `${String(c.name)}-inline`, ...(c.inline as Json) });
      visit(c.template);
      visit(c.onExit);
      for (const h of Object.values((c.hooks ?? {}) as Record<string, Json>)) visit(h.template);
    }
  };
  visit(spec.entrypoint);
  visit(spec.onExit);
  for (const h of Object.values((spec.hooks ?? {}) as Record<string, Json>)) visit(h.template);
  return [...seen.values()];
}

/** The kind of a volume (`emptyDir`, `secret`, `persistentVolumeClaim`, …): its one key besides `name`. */
const volumeKind = (v: Json): string => Object.keys(v).find((k) => k !== 'name') ?? 'unknown';

/**
 * Whether a container's mounts exist on this host: emptyDir volumes (each pod gets its own directory,
 * activities/argo/sandbox.ts) and hostPath ones (this host's directory); a PVC, Secret or ConfigMap needs Kubernetes.
 */
function mountNeeds(mounts: unknown, volumes: Json[], claims: Set<string>): string | undefined {
  for (const m of arr(mounts)) {
    const name = String(m.name);
    if (claims.has(name)) return `volumeMount ${name}: a volumeClaimTemplates PVC needs Kubernetes`;
    const v = volumes.find((x) => x.name === name);
    if (!v) return `volumeMount ${name}: no volume of that name in the template or the workflow`;
    if (volumeKind(v) !== 'emptyDir' && volumeKind(v) !== 'hostPath') return `volume ${name}: ${volumeKind(v)} volumes need Kubernetes (emptyDir and hostPath run on this host)`;
  }
  return undefined;
}

export function whyNotRunnable(spec: Json): string | undefined {
  const claims = new Set(arr(spec.volumeClaimTemplates).map((c) => String((c.metadata as Json | undefined)?.name)));
  for (const a of arr((spec.arguments as Json | undefined)?.artifacts)) {
    const src = REMOTE_ARTIFACTS.find((k) => a[k] !== undefined);
    if (src) return `needs a remote ${src} artifact`;
  }
  if (spec.artifactRepositoryRef) return 'needs a configured artifact repository';
  for (const p of arr((spec.arguments as Json | undefined)?.parameters)) if ((p.valueFrom as Json | undefined)?.configMapKeyRef) return `workflow parameter ${String(p.name)} comes from a Kubernetes ConfigMap`;
  const semaphoreCm = (sync: unknown): string | undefined => {
    const s = (sync ?? {}) as Json;
    const sem = [...(s.semaphore ? [s.semaphore as Json] : []), ...arr(s.semaphores)].find((x) => x.configMapKeyRef || x.database);
    if (!sem) return undefined;
    const ref = sem.configMapKeyRef as Json | undefined;
    return ref ? `its semaphore limit comes from the Kubernetes ConfigMap ${String(ref.name)} (key ${String(ref.key)})` : 'its semaphore lives in a synchronization database';
  };
  const wfSem = semaphoreCm(spec.synchronization);
  if (wfSem) return `synchronization: ${wfSem}`;
  for (const t of reachableTemplates(spec)) {
    const name = String(t.name);
    const sem = semaphoreCm(t.synchronization);
    if (sem) return `templates.${name}: ${sem}`;
    if (t.resource) return `templates.${name}: resource template needs Kubernetes`;
    if (t.http) return `templates.${name}: http template needs the network`;
    if (t.containerSet) return `templates.${name}: containerSet needs Kubernetes`;
    if (t.data) return `templates.${name}: data template needs an artifact repository`;
    const slurm = (t.plugin as Json | undefined)?.slurm as Json | undefined;
    if (t.plugin && !slurm) return `templates.${name}: executor plugin ${Object.keys(t.plugin as Json)[0]} not configured`;
    if (slurm) {
      // Slurm steps run on this host when the worker has no Slurm target (activities/argo/).
      const r = localArgv({ kind: 'plugin', command: [], args: [], source: String(slurm.script ?? '') }, '/dev/null');
      if (r.reason) return `templates.${name}: ${r.reason}`;
      continue;
    }
    if (t.daemon === true) return `templates.${name}: daemon pods reached over the pod network (needs Kubernetes)`;
    for (const a of arr((t.inputs as Json | undefined)?.artifacts)) {
      const src = REMOTE_ARTIFACTS.find((k) => a[k] !== undefined);
      if (src) return `templates.${name}: input artifact from ${src}`;
    }
    for (const a of arr((t.outputs as Json | undefined)?.artifacts)) {
      const src = REMOTE_ARTIFACTS.find((k) => a[k] !== undefined);
      if (src) return `templates.${name}: output artifact to ${src}`;
    }
    for (const a of [...arr((t.inputs as Json | undefined)?.artifacts), ...arr((t.outputs as Json | undefined)?.artifacts)]) {
      // A pod's / is its own root, but the host's directories are bound into it: all of / is not the pod's alone.
      if (typeof a.path === 'string' && /^\/+$/.test(a.path)) return `templates.${name}: artifact ${String(a.name)} is the whole / directory`;
    }
    for (const p of arr((t.inputs as Json | undefined)?.parameters)) if ((p.valueFrom as Json | undefined)?.configMapKeyRef) return `templates.${name}: input parameter ${String(p.name)} comes from a Kubernetes ConfigMap`;
    const c = (t.container ?? t.script) as Json | undefined;
    if (!c) continue;
    for (const e of arr(c.env)) if ((e.valueFrom as Json | undefined)?.secretKeyRef || (e.valueFrom as Json | undefined)?.configMapKeyRef) return `templates.${name}: needs a Kubernetes Secret/ConfigMap`;
    if (arr(t.sidecars).length) return `templates.${name}: sidecars need a pod network`;
    const volumes = [...arr(t.volumes), ...arr(spec.volumes)];
    const mounts = mountNeeds(c.volumeMounts, volumes, claims);
    if (mounts) return `templates.${name}: ${mounts}`;
    for (const i of arr(t.initContainers)) {
      // Init containers run before the main one in the same pod (its volumes; mirrorVolumeMounts: the main container's).
      const why = mountNeeds(i.volumeMounts, volumes, claims) ?? localArgv({ kind: 'container', command: (i.command as string[] | undefined) ?? [], args: (i.args as string[] | undefined) ?? [], image: i.image as string | undefined, source: '' }, '/dev/null').reason ?? shellNeeds(i);
      if (why) return `templates.${name}: init container ${String(i.name)}: ${why}`;
    }
    const r = localArgv({ kind: t.script ? 'script' : 'container', command: (c.command as string[] | undefined) ?? [], args: (c.args as string[] | undefined) ?? [], image: c.image as string | undefined, source: t.script ? String(c.source ?? '') : '' }, '/dev/null');
    if (r.reason) return `templates.${name}: ${r.reason}`;
    const why = shellNeeds(c);
    if (why) return `templates.${name}: ${why}`;
  }
  return undefined;
}

const SHELL_WORDS = new Set(['echo', 'printf', 'cd', 'exit', 'set', 'export', 'for', 'while', 'if', 'test', 'read', 'true', 'false', 'sleep', 'cat', 'ls', 'eval', 'exec', 'trap', 'wait', 'case', 'until', 'return', 'shift', 'local', 'unset', '[', '{', '(']);

/**
 * What a `sh -c "<script>"` (or a script template's source) needs beyond the shell itself: the first
 * program it runs, when that is a plain word (image-provided tools such as cowsay), and the network
 * (curl/wget to a remote host).
 */
function shellNeeds(c: Json): string | undefined {
  const cmd = (c.command as string[] | undefined) ?? [];
  const shell = /(^|\/)(ba|da|z)?sh$/.test(cmd[0] ?? '');
  const text = typeof c.source === 'string' ? c.source : shell && cmd[1] === '-c' ? [...cmd.slice(2), ...((c.args as string[] | undefined) ?? [])].join(' ') : '';
  if (!text || (!shell && typeof c.source === 'string')) return undefined;
  // Any URL but loopback: a literal host, or one from a variable or parameter (a webhook to fill in).
  if (/\b(curl|wget)\b/.test(text) && !/\b(curl|wget)\b[^\n]*\b(localhost|127\.0\.0\.1)\b/.test(text)) return 'calls a URL (curl/wget): needs the network';
  const first = /^\s*([A-Za-z0-9_.-]+)(\s|$)/.exec(text.replace(/^(\s*#[^\n]*\n)+/, ''))?.[1];
  // Looked up as the pod will: on the sandbox's PATH, not the worker's (a program only in ~/.local/bin or
  // node_modules/.bin would lint clean and then not be found).
  if (first && !SHELL_WORDS.has(first) && !/=/.test(first) && !findExecutable(first, SANDBOX_PATH)) return `${first} (from image ${String(c.image ?? '(none)')}) is not installed on this host`;
  return undefined;
}

/**
 * Fields Argo acts on that Tandem's interpreter does not apply: `tandem argo submit` names them (on
 * stderr, before it starts the run), so none is ignored without a word. They do not stop a run.
 */
export function notApplied(spec: Json): string[] {
  const out: string[] = [];
  if (spec.ttlStrategy !== undefined) out.push("spec.ttlStrategy is not applied: a finished run stays in Temporal for the namespace's retention period");
  if (spec.podGC !== undefined) out.push("spec.podGC is not applied: pods run as jobs of their target (local, Slurm, Kubernetes), not as pods Argo's garbage collector deletes");
  const archived = [spec.archiveLogs === true ? 'spec.archiveLogs' : undefined, ...arr(spec.templates).map((t) => ((t.archiveLocation as Json | undefined)?.archiveLogs === true ? `templates.${String(t.name)}.archiveLocation.archiveLogs` : undefined))].filter((x): x is string => !!x);
  // Lifecycle hooks run when their `expression` holds (workflows/argo/call.ts Hooks); Argo refuses a
  // hook other than `exit` without one ("Expression required for hook"), and so it never runs here.
  const noExpression = (hooks: unknown) => Object.entries((hooks ?? {}) as Record<string, Json>).filter(([h, v]) => h !== 'exit' && !v?.expression).map(([h]) => h);
  const hooks = [
    ...noExpression(spec.hooks).map((h) => `spec.hooks.${h}`),
    ...arr(spec.templates).flatMap((t) => [...arr(t.steps).flatMap((g) => arr(g)), ...arr((t.dag as Json | undefined)?.tasks)].flatMap((c) => noExpression(c.hooks).map((h) => `templates.${String(t.name)}.${String(c.name)}.hooks.${h}`))),
  ];
  if (hooks.length) out.push(`lifecycle hook${hooks.length > 1 ? 's' : ''} ${hooks.join(', ')} will not run: a hook other than exit needs an expression`);
  if (archived.length) out.push(`${archived.join(', ')} ${archived.length > 1 ? 'are' : 'is'} not applied: pod logs are not archived as artifacts (they stay with each pod's job)`);
  return out;
}
