// The shipped tandem executor plugin as an operator installs it for the real-Argo suites: the ConfigMap
// (templates/argo/executor-plugin/tandem-executor-plugin-configmap.yaml) with their Temporal address and
// task queue set, and the sidecar's RBAC (rbac.yaml); plus how the kubelet stand-in runs its image's
// `tandem` command (this checkout's CLI).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';

export const PLUGIN_DIR = join(process.cwd(), 'templates/argo/executor-plugin');

const yamlDocs = (file: string) => parseAllDocuments(readFileSync(join(PLUGIN_DIR, file), 'utf8')).map((d) => d.toJS() as KubernetesObject & { data?: Record<string, string> });

export function tandemPluginObjects(o: { temporalAddress: string; taskQueue: string; extraArgs?: string[] }): KubernetesObject[] {
  const [cm] = yamlDocs('tandem-executor-plugin-configmap.yaml');
  const container = parse(cm!.data!['sidecar.container']) as { command: string[]; env: { name: string; value: string }[] };
  const env: Record<string, string> = { TEMPORAL_ADDRESS: o.temporalAddress, TANDEM_TASK_QUEUE: o.taskQueue };
  container.env = container.env.map((e) => (e.name in env ? { ...e, value: env[e.name]! } : e));
  container.command = [...container.command, ...(o.extraArgs ?? [])];
  return [{ ...cm!, data: { ...cm!.data, 'sidecar.container': JSON.stringify(container) } } as KubernetesObject, ...yamlDocs('rbac.yaml')];
}

/** The sidecar image's `tandem` → this checkout's CLI. */
export const TANDEM_COMMAND = { tandem: [process.execPath, join(process.cwd(), 'bin/tandem.js')] };
