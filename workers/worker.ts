// Wires Tandem's workflows and activities into a Temporal worker.
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundleOption, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { createActivities, type ActivityConfig } from '../activities/index.js';
import { FAILURES } from '../contract/failures.js';
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
import { KubeClients } from '../backends/kubernetes/client.js';
import { KubernetesJobBackend } from '../backends/kubernetes/jobs.js';
import { KubernetesServingBackend } from '../backends/kubernetes/serving.js';
import { KubernetesResources } from '../backends/kubernetes/resources.js';

export const TASK_QUEUE = 'tandem';
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface TandemWorkerOptions extends ActivityConfig {
  address: string;
  namespace?: string;
  taskQueue?: string;
  /** A prebuilt bundle, in memory or as a file (tests and benchmarks share one); built from workflows/ otherwise. */
  workflowBundle?: WorkflowBundleOption;
  /** Replaces the real activities (workflow tests, benchmarks). */
  activities?: object;
  heartbeatThrottleMs?: number;
}

export function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
}

const quietLogger = { trace() {}, debug() {}, info() {}, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m), log() {} };

export async function createTandemWorker(opts: TandemWorkerOptions): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    workflowBundle: opts.workflowBundle ?? (await bundleWorkflows()),
    activities: opts.activities ?? tandemActivities(opts),
    // Heartbeats carry training progress; a short throttle keeps `tandem status` and the CLI bar live.
    maxHeartbeatThrottleInterval: opts.heartbeatThrottleMs ?? 1000,
  });
  return { worker, connection };
}

/**
 * Every activity a Tandem worker serves. Kubernetes is configured from the environment when a cluster
 * is reachable (KUBECONFIG, or running in a pod): TANDEM_K8S_NAMESPACE, TANDEM_K8S_STEP_IMAGE (image of
 * Tandem's built-in steps), TANDEM_K8S_VLLM_IMAGE, TANDEM_K8S_SERVICE_TYPE (ClusterIP|LoadBalancer).
 */
export function tandemActivities(opts: ActivityConfig, env: NodeJS.ProcessEnv = process.env): object {
  const k8s = env.KUBECONFIG || env.KUBERNETES_SERVICE_HOST ? new KubeClients({ kubeconfigPath: env.KUBECONFIG || undefined, namespace: env.TANDEM_K8S_NAMESPACE }) : undefined;
  const backends = { ...opts.backends };
  // Without a cluster the deploy activities still exist, to fail with a clear, non-retryable reason.
  const noCluster = async (): Promise<never> => {
    throw ApplicationFailure.create({ ...FAILURES.RuntimeUnavailable, message: 'stages.deploy.runtime is "kubernetes", but this worker has no Kubernetes cluster configured (set KUBECONFIG, or run the worker in a pod)' });
  };
  const argoTargets: Parameters<typeof createArgoActivities>[0]['targets'] = {};
  if (backends.slurm instanceof SlurmJobBackend) argoTargets.slurm = new SlurmTarget(backends.slurm);
  // Argo templates name their own image; the step image only matters for Tandem's built-in steps.
  if (k8s) argoTargets.kubernetes = new KubernetesTarget(backends.kubernetes instanceof KubernetesJobBackend ? backends.kubernetes : new KubernetesJobBackend({ clients: k8s, defaultImage: env.TANDEM_K8S_STEP_IMAGE ?? '' }));
  let k8sActivities: object = { k8sApplyServing: noCluster, k8sAwaitRollout: noCluster, k8sGateServing: noCluster, k8sRollbackServing: noCluster, k8sTeardownServing: noCluster };
  if (k8s) {
    if (env.TANDEM_K8S_STEP_IMAGE) backends.kubernetes = new KubernetesJobBackend({ clients: k8s, defaultImage: env.TANDEM_K8S_STEP_IMAGE });
    k8sActivities = createKubernetesActivities({
      serving: new KubernetesServingBackend({ clients: k8s, image: env.TANDEM_K8S_VLLM_IMAGE, serviceType: env.TANDEM_K8S_SERVICE_TYPE === 'LoadBalancer' ? 'LoadBalancer' : 'ClusterIP' }),
    });
  }
  // Placement sees the local machine and every configured Slurm site's nodes.
  const slurm = backends.slurm;
  const inventorySources = opts.inventorySources ?? [
    localMachineSource(),
    ...(slurm instanceof SlurmrestdJobBackend ? [slurmrestdSource(slurm)] : slurm instanceof FirecrestJobBackend ? [firecrestSource(slurm, slurm.system)] : []),
    ...(k8s ? [kubernetesSource(k8s)] : []),
  ];
  return {
    ...createActivities({ ...opts, backends, inventorySources }),
    // Failover between Slurm sites, used by pipelines launched with tuning.failover.
    ...createRecoveryActivities({ home: opts.home, sites: opts.recoverySites ?? [] }), ...createArgoActivities({ home: opts.home, targets: argoTargets, kubernetes: k8s ? new KubernetesResources(k8s) : undefined }), ...k8sActivities, ...createMigrationActivities({ home: opts.home, sites: { ...slurmSites(opts.home, env), ...kubernetesSites(env) } }) };
}

/**
 * Slurm sites this worker administers (staged migration), from TANDEM_SLURM_SITES:
 * "zurich=/etc/slurm-zurich/slurm.conf,lugano=/etc/slurm-lugano/slurm.conf".
 */
export function slurmSites(home: string, env: NodeJS.ProcessEnv = process.env): Record<string, { slurmConf: string; workDir: string }> {
  const out: Record<string, { slurmConf: string; workDir: string }> = {};
  for (const entry of (env.TANDEM_SLURM_SITES ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const [name, conf] = entry.split('=');
    if (!name || !conf) throw new Error(`TANDEM_SLURM_SITES entry ${JSON.stringify(entry)} must look like site=/path/to/slurm.conf`);
    out[name] = { slurmConf: conf, workDir: `${home}/sites/${name}/work` };
  }
  return out;
}

/** Kubernetes sites for staged migration, from TANDEM_K8S_SITES: "k8s-a=/etc/tandem/k8s-a.kubeconfig,k8s-b" (no path: $KUBECONFIG or in-cluster). */
export function kubernetesSites(env: NodeJS.ProcessEnv = process.env): Record<string, MigrationSiteConfig> {
  const out: Record<string, MigrationSiteConfig> = {};
  for (const entry of (env.TANDEM_K8S_SITES ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const [name, path] = entry.split('=');
    if (!name) throw new Error(`TANDEM_K8S_SITES entry ${JSON.stringify(entry)} must look like site[=/path/to/kubeconfig]`);
    out[name] = { kind: 'kubernetes', kubeconfigPath: path || env.KUBECONFIG || undefined, namespace: env.TANDEM_K8S_NAMESPACE, nodeSelector: env.TANDEM_K8S_MIGRATION_NODE_SELECTOR || undefined };
  }
  return out;
}
