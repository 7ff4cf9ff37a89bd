// Shapes shared by the Argo interpreter workflow, its activities, the CLI and the SDK. Sandbox-safe.
export type Json = Record<string, unknown>;

/** The kinds of template Argo knows, each a key of the template; a template is exactly one of them. */
export const TEMPLATE_TYPES = ['container', 'containerSet', 'steps', 'script', 'resource', 'dag', 'suspend', 'data', 'http', 'plugin'] as const;

/** Which of TEMPLATE_TYPES a template is (the first it sets), or undefined for none. */
export function templateTypeOf(t: Json): (typeof TEMPLATE_TYPES)[number] | undefined {
  return TEMPLATE_TYPES.find((k) => t[k] !== undefined);
}

/** A node's (and a workflow's) phases, in the order Argo's CLI lists them. */
export const PHASES = ['Pending', 'Running', 'Succeeded', 'Skipped', 'Failed', 'Error', 'Omitted'] as const;
export type Phase = (typeof PHASES)[number];

export interface ArgoNode {
  id: string;
  name: string;
  displayName: string;
  type: 'Pod' | 'Steps' | 'StepGroup' | 'DAG' | 'TaskGroup' | 'Retry' | 'Skipped' | 'Suspend' | 'HTTP' | 'Resource' | 'Plugin';
  templateName?: string;
  phase: Phase;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  parentId?: string;
  children: string[];
  outputs?: NodeOutputs;
  /** Where a pod ran: local / slurm / kubernetes, and the job's name there. */
  target?: string;
  jobName?: string;
  daemoned?: boolean;
  /** Set when the node's result was reused from an earlier attempt of the run. */
  reusedFrom?: string;
  /** memoize: whether the cache answered for this node, with the key and cache it used. */
  memoizationStatus?: { hit: boolean; key: string; cacheName: string };
}

export interface NodeOutputs {
  parameters: Record<string, string>;
  result?: string;
  exitCode?: string;
  /** Artifact name → location in the artifact store (a local path, or s3://…). */
  artifacts: Record<string, string>;
}

export interface ArgoStatus {
  name: string;
  phase: Phase;
  message?: string;
  startedAt: string;
  finishedAt?: string;
  entrypoint: string;
  nodes: Record<string, ArgoNode>;
  outputs?: { parameters: Record<string, string> };
  /**
   * Child workflows that ran part of this run's nodes (large loops and DAGs; docs/argo-scale.md), by
   * workflow id; their nodes are in their own status, which `ArgoClient.status`/`wait` merge in.
   */
  slices?: string[];
}

/** A node that succeeded in an earlier attempt of the same run: reused, not re-run (retry). */
export interface ReusedNode {
  outputs: NodeOutputs;
  /** The node's id in the attempt that produced it. */
  from: string;
}

export interface ArgoRunInput {
  /** The Workflow spec with templateRefs inlined and submitted parameters applied (see argo/resolve.ts). */
  spec: Json;
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Where local artifacts live; the worker's home by default. */
  artifactRoot?: string;
  /** maxActivitiesInFlight, sliceNodes: see ARGO_SCALE_DEFAULTS in contract/tuning.ts (docs/argo-scale.md). */
  tuning?: { heartbeatTimeoutMs?: number; pollMaxMs?: number; maxActivitiesInFlight?: number; sliceNodes?: number };
  /** Retry: successful leaf nodes of the previous attempt, by node name. */
  reuse?: Record<string, ReusedNode>;
}

/** What the pod-running activity needs; everything already substituted by the workflow. */
export interface RunPodInput {
  jobName: string;
  target: 'local' | 'slurm' | 'kubernetes';
  templateName: string;
  kind: 'container' | 'script' | 'plugin';
  image?: string;
  command: string[];
  args: string[];
  source?: string;
  env: Record<string, string>;
  /** env entries whose value comes from a Secret/ConfigMap: resolved by the activity, never in history. */
  envFrom?: { name: string; secret?: string; configMap?: string; key: string; optional?: boolean }[];
  workingDir?: string;
  timeoutMs?: number;
  inputArtifacts: { name: string; path: string; from?: string; raw?: string; optional?: boolean; mode?: number }[];
  outputParameters: { name: string; path: string; default?: string }[];
  outputArtifacts: { name: string; path: string; optional?: boolean }[];
  artifactPrefix: string;
  /** `plugin: {slurm: {...}}` or an annotation: the Slurm resources and script. */
  slurm?: Json;
  /** `tandem.io/slurm-fallback` on the template: run locally when no Slurm target exists, or fail. */
  slurmFallback?: 'local' | 'fail';
  /** The template's metadata.annotations (a Kubernetes pod carries them). */
  annotations?: Record<string, string>;
  /** The pod's volumes its containers mount (the template's and the workflow's `volumes`): name and kind. */
  volumes?: { name: string; kind: string; hostPath?: string }[];
  volumeMounts?: PodVolumeMount[];
  /** Run in order before the main container, in the same pod (its volumes), each with its own filesystem. */
  initContainers?: { name: string; image?: string; command: string[]; args: string[]; workingDir?: string; volumeMounts: PodVolumeMount[] }[];
  /** The container's `resources.limits` (Kubernetes quantities). */
  limits?: { cpu?: string; memory?: string };
}

export interface PodVolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}

export interface RunPodResult {
  phase: 'Succeeded' | 'Failed' | 'Error';
  exitCode?: number;
  result?: string;
  parameters: Record<string, string>;
  artifacts: Record<string, string>;
  message?: string;
  target: string;
}

export interface HttpInput {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  insecureSkipVerify?: boolean;
}

export interface HttpResult {
  statusCode: number;
  body: string;
  headers: Record<string, string>;
}

/** A `resource` template's action, everything substituted by the workflow. */
export interface ResourceInput {
  manifest: string;
  action: string;
  /** The namespace for objects whose manifest names none; the worker's Kubernetes namespace by default. */
  namespace?: string;
  mergeStrategy?: string;
  flags?: string[];
  successCondition?: string;
  failureCondition?: string;
  outputParameters?: { name: string; jsonPath?: string; jqFilter?: string; default?: string }[];
}

export interface ResourceResult {
  phase: 'Succeeded' | 'Failed';
  message?: string;
  parameters: Record<string, string>;
  /** `<kind>/<name>` of the object acted on. */
  resourceName?: string;
}
