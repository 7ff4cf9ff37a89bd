// `tandem deployments list | show <name> | rollback <name> [--to-revision N] | delete <name>`: the
// served model endpoints on Kubernetes (one Deployment + Service per pipeline's stages.deploy.name,
// a revision per run), read straight from the cluster the workers use (KUBECONFIG, TANDEM_K8S_NAMESPACE).
// rollback is `kubectl rollout undo`; delete removes the Deployment (its ReplicaSets and pods follow)
// and the Service. Only Tandem-managed Deployments are shown or touched.
import type { Command } from 'commander';
import { KubeClients } from '../backends/kubernetes/client.js';
import { KubernetesServingBackend, type EndpointRow, type RevisionRow } from '../backends/kubernetes/serving.js';
import { loadClusterConfig } from '../config/worker.js';
import { table } from './runs.js';

/** No cluster to talk to: printed as `tandem: <message>`, exit 2. */
export class DeploymentsError extends Error {
  override name = 'DeploymentsError';
}

interface Target {
  serving: KubernetesServingBackend;
  namespace: string;
}

/** The workers' cluster and namespace (config/worker.ts), or the namespace a flag names. */
export function connectCluster(namespace?: string): Target {
  const { kubernetes } = loadClusterConfig();
  if (!kubernetes.cluster) throw new DeploymentsError('no Kubernetes cluster configured: set KUBECONFIG (as for the workers), or run inside a pod');
  const clients = new KubeClients({ kubeconfigPath: kubernetes.cluster.kubeconfigPath, namespace: kubernetes.namespace });
  return { serving: new KubernetesServingBackend({ clients }), namespace: namespace ?? clients.namespace };
}

const dash = (v?: string | number) => (v === undefined || v === '' ? '-' : String(v));

export function formatEndpoints(rows: EndpointRow[]): string {
  if (!rows.length) return 'no model endpoints';
  return table([
    ['NAME', 'NAMESPACE', 'MODEL', 'REVISION', 'READY', 'PIPELINE', 'TENANT', 'RUN', 'CHECKPOINT'],
    ...rows.map((r) => [r.name, r.namespace, dash(r.model), dash(r.revision), `${r.ready}/${r.desired}`, dash(r.pipeline), dash(r.tenant), dash(r.run), dash(r.checkpoint)]),
  ]);
}

export function formatRevisions(endpoint: EndpointRow, revisions: RevisionRow[]): string {
  const head = `${endpoint.namespace}/${endpoint.name}: model ${dash(endpoint.model)}, revision ${dash(endpoint.revision)}, ${endpoint.ready}/${endpoint.desired} ready, pipeline ${dash(endpoint.pipeline)} of tenant ${dash(endpoint.tenant)}`;
  if (!revisions.length) return `${head}\nno revisions`;
  return `${head}\n${table([
    ['REVISION', 'REPLICASET', 'READY', 'RUN', 'CHECKPOINT', 'CREATED', ''],
    ...revisions.map((r) => [String(r.revision), r.replicaSet, `${r.ready}/${r.replicas}`, dash(r.run), dash(r.checkpoint), dash(r.created), r.current ? '(current)' : '']),
  ])}`;
}

function revisionNumber(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new DeploymentsError(`--to-revision must be a revision number (1, 2, …), not ${JSON.stringify(v)}`);
  return n;
}

export function registerDeploymentCommands(program: Command, connect: (namespace?: string) => Target = connectCluster): void {
  const group = program.command('deployments').description('the served model endpoints on Kubernetes: list, revisions, rollback, delete');
  const ns = ['--k8s-namespace <ns>', 'Kubernetes namespace (default: TANDEM_K8S_NAMESPACE, or the kubeconfig context\'s)'] as const;

  group
    .command('list')
    .description('every model endpoint: model, revision, ready/desired, and the pipeline, tenant, run and checkpoint it serves')
    .option(...ns)
    .option('--json', 'machine-readable output')
    .action(async (o: { k8sNamespace?: string; json?: boolean }) => {
      const { serving, namespace } = connect(o.k8sNamespace);
      const rows = await serving.endpoints(namespace);
      console.log(o.json ? JSON.stringify(rows, null, 2) : formatEndpoints(rows));
    });

  group
    .command('show <name>')
    .description("an endpoint's revisions (ReplicaSets), newest first, with the run and checkpoint of each")
    .option(...ns)
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: { k8sNamespace?: string; json?: boolean }) => {
      const { serving, namespace } = connect(o.k8sNamespace);
      const { endpoint, revisions } = await serving.revisions(namespace, name);
      console.log(o.json ? JSON.stringify({ ...endpoint, revisions }, null, 2) : formatRevisions(endpoint, revisions));
    });

  group
    .command('rollback <name>')
    .description('roll the endpoint back to its previous revision, or to --to-revision N (kubectl rollout undo)')
    .option('--to-revision <n>', 'the revision to restore (see `tandem deployments show`)', revisionNumber)
    .option(...ns)
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: { toRevision?: number; k8sNamespace?: string; json?: boolean }) => {
      const { serving, namespace } = connect(o.k8sNamespace);
      const r = await serving.undo(namespace, name, o.toRevision);
      if (o.json) console.log(JSON.stringify({ namespace, name, ...r }, null, 2));
      else if (r.skipped) console.log(`${namespace}/${name}: already serving revision ${r.toRevision}'s template; nothing to roll back`);
      else console.log(`${namespace}/${name}: rolling back from revision ${dash(r.fromRevision)} to the template of revision ${r.toRevision} (the previous revision keeps serving until it is ready; follow with \`tandem deployments show ${name}\`)`);
    });

  group
    .command('delete <name>')
    .description('delete the endpoint: its Deployment (ReplicaSets and pods follow) and its Service')
    .option(...ns)
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: { k8sNamespace?: string; json?: boolean }) => {
      const { serving, namespace } = connect(o.k8sNamespace);
      const r = await serving.remove(namespace, name);
      console.log(o.json ? JSON.stringify({ namespace, name, ...r }, null, 2) : `${namespace}/${name}: deleted ${r.deleted.join(', ') || 'nothing (already gone)'}`);
    });
}
