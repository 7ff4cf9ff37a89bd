// Wires Tandem's workflows and activities into a Temporal worker.
import { NativeConnection, Worker, type WorkflowBundleOption, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { createActivities, tenantGuardOf, type ActivityConfig } from '../activities/index.js';
import { closeActivities, closeWith } from '../activities/lifetime.js';
import { failure } from '../contract/failures.js';
import { createArgoActivities } from '../activities/argo/index.js';
import { SlurmTarget } from '../activities/argo/slurm.js';
import { KubernetesTarget } from '../activities/argo/kubernetes.js';
import { SlurmJobBackend } from '../backends/slurm/job-backend.js';
import { SlurmrestdJobBackend } from '../backends/slurm/slurmrestd-backend.js';
import { FirecrestJobBackend } from '../backends/slurm/firecrest-backend.js';
import { localMachineSource } from '../activities/placement.js';
import { firecrestSource, kubernetesSource, slurmrestdSource } from '../activities/placement-sources.js';
import { createMigrationActivities, type MigrationSiteConfig } from '../activities/migration.js';
import { createRecoveryActivities } from '../activities/recovery.js';
import { createKubernetesActivities } from '../activities/kubernetes.js';
import { activityAuditor } from '../activities/audit.js';
import { KubeClients } from '../backends/kubernetes/client.js';
import { KubernetesJobBackend } from '../backends/kubernetes/jobs.js';
import { KubernetesServingBackend } from '../backends/kubernetes/serving.js';
import { KubernetesResources } from '../backends/kubernetes/resources.js';
import { DEFAULTS } from '../config/defaults.js';
import { loadClusterConfig, type ClusterConfig, type TemporalConnection, type WorkerSlots } from '../config/worker.js';
import { loadAuditConfig, loadCodecConfig } from '../config/worker.js';
import { workerDataConverter } from '../codec/index.js';
import type { DataConverter } from '@temporalio/common';
import { isolateTimeout, workerParts } from './assembly.js';
import { slotOptions } from './slots.js';
import { bundleInChild } from './bundle.js';
import { OidcApiKey, type ClientCredentials } from '../sdk/oidc-token.js';
import { addInFlightSource } from '../observe/in-flight.js';
import { TRACING_WORKFLOW_MODULE, type Tracing } from '../observe/tracing.js';

export const TASK_QUEUE = DEFAULTS.taskQueue;
// The workflows' entry point for the bundler: the TypeScript source in a checkout, the compiled
// JavaScript next to this file in the published package (dist/).
export const WORKFLOWS_PATH = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../workflows/index.ts' : '../workflows/index.js', import.meta.url));

export interface TandemActivityOptions extends ActivityConfig {
  /** Kubernetes access and migration sites (config/worker.ts); loaded from the environment when omitted. */
  cluster?: ClusterConfig;
}

export interface TandemWorkerOptions extends TandemActivityOptions {
  address: string;
  /** TLS, API key and gRPC metadata (config/worker.ts `connection`, from TEMPORAL_* and temporal.toml). */
  connection?: Omit<TemporalConnection, 'address'>;
  /** OIDC client credentials (config/worker.ts `oidc`, TEMPORAL_OIDC_*): the API key is a token from this grant, refreshed until the connection closes. */
  oidc?: ClientCredentials;
  namespace?: string;
  taskQueue?: string;
  /** A prebuilt bundle, in memory or as a file (tests and benchmarks share one); built from workflows/ otherwise. */
  workflowBundle?: WorkflowBundleOption;
  /** Replaces the real activities (workflow tests, benchmarks). */
  activities?: object;
  heartbeatThrottleMs?: number;
  /** Payload encryption (codec/): default the keys of TANDEM_CODEC_KEYS_FILE / TANDEM_CODEC_KEY, if any. */
  dataConverter?: DataConverter;
  /** Metrics (observe/): workflow sinks and the activity interceptor; default true. Served only where an entry point starts observe/server.ts. */
  observe?: boolean;
  /** OpenTelemetry tracing (observe/tracing.ts), as the entry point started it; default off. A prebuilt bundle must then be bundleWorkflows({ tracing: true }). */
  tracing?: Tracing;
  /** How much work it takes at once (config/worker.ts TANDEM_WORKER_*): beyond it the worker polls no more and the server keeps the tasks. Default DEFAULTS.worker*. */
  slots?: Partial<WorkerSlots>;
}

/**
 * The workflow code for the bundle option. With a data converter (the codec's), its converter paths
 * are bundled in: the workflow code's own failures are then encoded like the activities' are.
 */
export function bundleWorkflows(opts: { dataConverter?: DataConverter; tracing?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  const { failureConverterPath, payloadConverterPath } = opts.dataConverter ?? {};
  // Tracing's workflow interceptors only when tracing is on: off, the bundle is what it always was.
  const workflowInterceptorModules = opts.tracing ? [TRACING_WORKFLOW_MODULE] : undefined;
  // In a child process (workers/bundle.ts): webpack's memory leaves with it.
  return bundleInChild({ workflowsPath: WORKFLOWS_PATH, failureConverterPath, payloadConverterPath, workflowInterceptorModules });
}

export async function createTandemWorker(opts: TandemWorkerOptions): Promise<{ worker: Worker; connection: NativeConnection }> {
  const tokens = opts.oidc ? new OidcApiKey(opts.oidc) : undefined;
  const apiKey = tokens ? await tokens.start() : undefined;
  const connection = await NativeConnection.connect({ ...opts.connection, ...(apiKey !== undefined ? { apiKey } : {}), address: opts.address }).catch((e: unknown) => {
    tokens?.stop();
    throw e;
  });
  if (tokens) {
    // Core keeps one API key per connection: each refreshed token replaces it; closing stops the refresh.
    tokens.onRefresh((t) => connection.setApiKey(t));
    const close = connection.close.bind(connection);
    connection.close = async () => {
      tokens.stop();
      await close();
    };
  }
  // A keyed worker refuses plaintext and undecryptable input (codec/index.ts workerDataConverter).
  const dataConverter = opts.dataConverter ?? workerDataConverter(loadCodecConfig());
  // The same parts a TandemPlugin puts on a team's Worker (workers/assembly.ts).
  const parts = workerParts({ dataConverter, heartbeatThrottleMs: opts.heartbeatThrottleMs, observe: opts.observe, tracing: opts.tracing });
  const activities = opts.activities ?? tandemActivities(opts);
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace ?? DEFAULTS.namespace,
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    // A prebuilt bundle must have been built with the same data converter (bundleWorkflows({ dataConverter })).
    workflowBundle: opts.workflowBundle ?? (await bundleWorkflows({ dataConverter, tracing: !!opts.tracing })),
    activities,
    dataConverter,
    // Heartbeats carry training progress; a short throttle keeps `tandem status` and the CLI bar live.
    maxHeartbeatThrottleInterval: parts.maxHeartbeatThrottleInterval,
    ...isolateTimeout(parts.isolateExecutionTimeout),
    // Metrics and log attributes (observe/): the workflows' sink calls, activity durations and outcomes.
    sinks: parts.sinks,
    interceptors: { activity: parts.activityInterceptors },
    // Bounded work, so bounded memory: the cache holds the pipelines between their tasks (a pipeline
    // beyond it is replayed from its history when its next task comes); the slots bound what runs at once.
    // Long waits (a job watched to its end) have slots of their own beside the short calls' (workers/slots.ts).
    ...slotOptions(opts.slots),
  });
  // "Running now" gauges (tandem_pipelines, tandem_stages_running) read this queue's visibility through
  // the worker's own connection at scrape time (the process's last worker's queue, when it runs several).
  if (opts.observe !== false) addInFlightSource({ service: connection.workflowService, namespace: opts.namespace ?? DEFAULTS.namespace, taskQueue: opts.taskQueue ?? TASK_QUEUE });
  // What the activities hold open between calls (placement's Kubernetes watches) ends with the run.
  // A failing close is logged, never the run's result; a second run() (the SDK refuses it) closes nothing.
  const run = worker.run.bind(worker);
  let ran = false;
  worker.run = () => {
    if (ran) return run();
    ran = true;
    return run().finally(() => closeActivities(activities).catch((e: unknown) => console.warn(`tandem worker: closing the activities' watches failed: ${String((e as Error)?.message ?? e)}`)));
  };
  return { worker, connection };
}

/**
 * Every activity a Tandem worker serves. Kubernetes is used when a cluster is reachable (KUBECONFIG, or
 * running in a pod): its namespace, the image of Tandem's built-in steps, the vLLM image and service
 * type come from `opts.cluster` (config/worker.ts: TANDEM_K8S_*).
 */
export function tandemActivities(opts: TandemActivityOptions): object {
  const { kubernetes: kube, migration } = opts.cluster ?? loadClusterConfig();
  const audit = opts.audit ?? loadAuditConfig(undefined, { home: opts.home });
  const k8s = kube.cluster ? new KubeClients({ kubeconfigPath: kube.cluster.kubeconfigPath, namespace: kube.namespace }) : undefined;
  const backends = { ...opts.backends };
  // The tenant policy's checks in the activities beside createActivities' own (kubernetes, recovery).
  const guardOf = () => tenantGuardOf(opts.tenantPolicy, backends);
  // Without a cluster the deploy activities still exist, to fail with a clear, non-retryable reason.
  const noCluster = async (): Promise<never> => {
    throw failure('RuntimeUnavailable', 'stages.deploy.runtime is "kubernetes", but this worker has no Kubernetes cluster configured (set KUBECONFIG, or run the worker in a pod)');
  };
  const argoTargets: Parameters<typeof createArgoActivities>[0]['targets'] = {};
  if (backends.slurm instanceof SlurmJobBackend) argoTargets.slurm = new SlurmTarget(backends.slurm);
  // Argo templates name their own image; the step image only matters for Tandem's built-in steps.
  if (k8s) argoTargets.kubernetes = new KubernetesTarget(backends.kubernetes instanceof KubernetesJobBackend ? backends.kubernetes : new KubernetesJobBackend({ clients: k8s, site: kube.site, defaultImage: kube.stepImage ?? '' }));
  let k8sActivities: object = { k8sApplyServing: noCluster, k8sAwaitRollout: noCluster, k8sGateServing: noCluster, k8sRollbackServing: noCluster, k8sTeardownServing: noCluster };
  if (k8s) {
    if (kube.stepImage) backends.kubernetes = new KubernetesJobBackend({ clients: k8s, site: kube.site, defaultImage: kube.stepImage });
    k8sActivities = createKubernetesActivities({
      serving: new KubernetesServingBackend({ clients: k8s, image: kube.vllmImage, serviceType: kube.serviceType }),
      audit: activityAuditor(audit),
      tenantGuard: guardOf(),
    });
  }
  // Placement sees the local machine and every configured Slurm site's nodes.
  const slurm = backends.slurm;
  const inventorySources = opts.inventorySources ?? [
    localMachineSource(),
    ...(slurm instanceof SlurmrestdJobBackend ? [slurmrestdSource(slurm)] : slurm instanceof FirecrestJobBackend ? [firecrestSource(slurm, slurm.system)] : []),
    ...(k8s ? [kubernetesSource(k8s, kube.site)] : []),
  ];
  const base = createActivities({ ...opts, backends, inventorySources, audit });
  return closeWith({
    ...base,
    // Failover between Slurm sites, used by pipelines launched with tuning.failover.
    ...createRecoveryActivities({ home: opts.home, sites: opts.recoverySites ?? [], audit, tenantGuard: guardOf() }), ...createArgoActivities({ home: opts.home, targets: argoTargets, kubernetes: k8s ? new KubernetesResources(k8s) : undefined, audit }), ...k8sActivities, ...createMigrationActivities({ home: opts.home, sites: migrationSites(opts.home, migration), audit }) }, () => closeActivities(base));
}

/**
 * The sites this worker administers for staged migration (config/worker.ts): Slurm sites from
 * TANDEM_SLURM_SITES ("zurich=/etc/slurm-zurich/slurm.conf,…"), their work files under the home, and
 * Kubernetes sites from TANDEM_K8S_SITES ("k8s-a=/etc/tandem/k8s-a.kubeconfig,k8s-b").
 */
export function migrationSites(home: string, m: ClusterConfig['migration']): Record<string, MigrationSiteConfig> {
  const out: Record<string, MigrationSiteConfig> = {};
  for (const [name, slurmConf] of Object.entries(m.slurmSites)) out[name] = { slurmConf, workDir: `${home}/sites/${name}/work` };
  for (const [name, k] of Object.entries(m.kubernetesSites)) out[name] = { kind: 'kubernetes', ...k };
  return out;
}
