// Can a resolved workflow run on this host's local runtime? Only reachable templates count; the
// answer names the first thing missing (an interpreter, Kubernetes, the network, a cloud bucket).
import type { Json } from './load.js';
import { localArgv } from '../activities/argo.js';

const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const REMOTE_ARTIFACTS = ['s3', 'gcs', 'oss', 'hdfs', 'artifactory', 'azure', 'git', 'http'];

export function reachableTemplates(spec: Json): Json[] {
  const byName = new Map(arr(spec.templates).map((t) => [String(t.name), t]));
  const seen = new Map<string, Json>();
  const visit = (name: unknown) => {
    if (typeof name !== 'string' || seen.has(name) || !byName.has(name)) return;
    const t = byName.get(name)!;
    seen.set(name, t);
    const calls = [...arr(t.steps).flatMap((g) => (Array.isArray(g) ? (g as Json[]) : [])), ...arr((t.dag as Json | undefined)?.tasks)];
    for (const c of calls) {
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

export function whyNotRunnable(spec: Json): string | undefined {
  if (spec.volumeClaimTemplates || arr(spec.volumes).some((v) => v.persistentVolumeClaim)) return 'needs Kubernetes volumes (PVC)';
  for (const a of arr((spec.arguments as Json | undefined)?.artifacts)) {
    const src = REMOTE_ARTIFACTS.find((k) => a[k] !== undefined);
    if (src) return `needs a remote ${src} artifact`;
  }
  if (spec.artifactRepositoryRef) return 'needs a configured artifact repository';
  for (const t of reachableTemplates(spec)) {
    const name = String(t.name);
    if (t.resource) return `templates.${name}: resource template needs Kubernetes`;
    if (t.http) return `templates.${name}: http template needs the network`;
    if (t.containerSet) return `templates.${name}: containerSet needs Kubernetes`;
    if (t.data) return `templates.${name}: data template needs an artifact repository`;
    if (t.plugin) return `templates.${name}: executor plugin ${Object.keys(t.plugin as Json)[0]} not configured`;
    if (t.daemon === true) return `templates.${name}: daemon pods reached over the pod network (needs Kubernetes)`;
    for (const a of arr((t.inputs as Json | undefined)?.artifacts)) {
      const src = REMOTE_ARTIFACTS.find((k) => a[k] !== undefined);
      if (src) return `templates.${name}: input artifact from ${src}`;
    }
    for (const a of arr((t.outputs as Json | undefined)?.artifacts)) {
      const src = REMOTE_ARTIFACTS.find((k) => a[k] !== undefined);
      if (src) return `templates.${name}: output artifact to ${src}`;
    }
    const c = (t.container ?? t.script) as Json | undefined;
    if (!c) continue;
    for (const e of arr(c.env)) if ((e.valueFrom as Json | undefined)?.secretKeyRef || (e.valueFrom as Json | undefined)?.configMapKeyRef) return `templates.${name}: needs a Kubernetes Secret/ConfigMap`;
    if (arr(t.sidecars).length) return `templates.${name}: sidecars need a pod network`;
    const r = localArgv({ kind: t.script ? 'script' : 'container', command: (c.command as string[] | undefined) ?? [], args: (c.args as string[] | undefined) ?? [], image: c.image as string | undefined, source: '' }, '/dev/null');
    if (r.reason) return `templates.${name}: ${r.reason}`;
  }
  return undefined;
}
