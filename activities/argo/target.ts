// Where an Argo pod runs (local host, Slurm, Kubernetes) and what the Argo activities are configured with.
import type { RunPodInput, RunPodResult } from '../../argo/lang/types.js';
import type { ArgoKubernetes } from './resource.js';
import type { AuditSettings } from '../audit.js';

/** Where a pod runs. Slurm and Kubernetes targets are provided by their backends when configured. */
export interface ExecutionTarget {
  readonly name: RunPodInput['target'];
  run(input: RunPodInput, ctx: { heartbeat(details?: unknown): void; sleep(ms: number): Promise<void> }): Promise<RunPodResult>;
}

export interface ArgoActivityConfig {
  home: string;
  /** Extra targets (slurm, kubernetes) keyed by name. */
  targets?: Partial<Record<RunPodInput['target'], ExecutionTarget>>;
  /** Performs `resource` templates' actions (and reads semaphore ConfigMaps) when a cluster is configured. */
  kubernetes?: ArgoKubernetes;
  /**
   * Local ConfigMap store for semaphore limits: <dir>/<configMap>/<key> files; <home>/argo/configmaps
   * by default. With `kubernetes` configured the ConfigMap is read from the cluster instead.
   */
  configMapsDir?: string;
  /** Local secret store: <dir>/<secret>/<key> files (Kubernetes Secrets stand-in). */
  secretsDir?: string;
  pollInitialMs?: number;
  pollMaxMs?: number;
  /** memoize caches: <memoDir>/<cache name>/<sha256 of key>.json; <home>/argo/memo by default. */
  memoDir?: string;
  /** What a Slurm step does when no Slurm target is configured: run on this host (default) or fail. */
  slurmFallback?: 'local' | 'fail';
  /** The audit log (default <home>/audit.jsonl). */
  audit?: AuditSettings;
  /** Host directories hostPath volumes may lie in (never overlapping TANDEM_HOME or the stores); the temp directory by default. */
  hostPathRoots?: string[];
}
