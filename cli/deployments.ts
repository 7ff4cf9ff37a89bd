// `tandem deployments list | show <name> | stop <name> | rollback <name> [--to-revision N] | delete <name>`:
// the served model endpoints.
// - On Kubernetes (one Deployment + Service per pipeline's stages.deploy.name, a revision per run), read
//   straight from the cluster the workers use (KUBECONFIG, TANDEM_K8S_NAMESPACE). rollback is `kubectl
//   rollout undo`; delete removes the Deployment (its ReplicaSets and pods follow) and the Service. Only
//   Tandem-managed Deployments are shown or touched.
// - On the local runtime (a model server process per run under the workers' TANDEM_HOME, `--home`;
//   backends/local-serving.ts): a pipeline's deployments are its revisions; stop stops a server and
//   keeps its record, rollback starts an earlier revision again and retires the current one, delete
//   stops it and forgets it.
// `--runtime` picks; the default is kubernetes when a cluster is configured (and no --home given), else local.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { KubeClients } from '../backends/kubernetes/client.js';
import { KubernetesServingBackend, type EndpointRow, type RevisionRow } from '../backends/kubernetes/serving.js';
import { LocalServingBackend, type LocalDeploymentRow } from '../backends/local-serving.js';
import { loadCliConfig, loadClusterConfig } from '../config/worker.js';
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

export function formatLocalRows(rows: LocalDeploymentRow[], home: string): string {
  if (!rows.length) return `no local model deployments under ${home}`;
  return table([
    ['NAME', 'PIPELINE', 'REVISION', 'STATE', 'MODEL', 'ENDPOINT', 'PID', 'RUN', 'CREATED'],
    ...rows.map((r) => [r.name, dash(r.pipeline), dash(r.revision), r.state, r.model, dash(r.endpoint), r.alive ? String(r.pid) : '-', dash(r.run), dash(r.created)]),
  ]);
}

export function formatLocalRevisions(name: string, rows: LocalDeploymentRow[]): string {
  const serving = rows.filter((r) => r.state === 'serving');
  const head = `${name} (local): ${serving.length ? `serving revision ${serving.map((r) => `${dash(r.revision)} at ${dash(r.endpoint)}`).join(', ')}` : 'nothing serving'}, ${rows.length} revision(s)`;
  return `${head}\n${table([
    ['REVISION', 'NAME', 'STATE', 'RUN', 'CHECKPOINT', 'CREATED', 'STOPPED'],
    ...[...rows].reverse().map((r) => [dash(r.revision), r.name, r.state === 'retired' && r.retiredBy ? `retired by ${r.retiredBy}` : r.state, dash(r.run), r.checkpoint, dash(r.created), dash(r.stopped)]),
  ])}`;
}

type RuntimeFlag = 'local' | 'kubernetes';
interface Where {
  runtime?: RuntimeFlag;
  home?: string;
  k8sNamespace?: string;
  json?: boolean;
}

export function registerDeploymentCommands(program: Command, connect: (namespace?: string) => Target = connectCluster): void {
  const group = program.command('deployments').description('the served model endpoints, local or on Kubernetes: list, revisions, stop, rollback, delete');
  const ns = ['--k8s-namespace <ns>', 'Kubernetes namespace (default: TANDEM_K8S_NAMESPACE, or the kubeconfig context\'s)'] as const;
  const home = ['--home <dir>', "the workers' TANDEM_HOME, for local deployments (default: $TANDEM_HOME, or .tandem; `tandem dev`: its --state)"] as const;
  const runtime = ['--runtime <runtime>', 'local or kubernetes (default: kubernetes when a cluster is configured and no --home is given, else local)'] as const;
  // The runtime a command acts on; the local backend when it is local.
  const where = (o: Where): { local?: { serving: LocalServingBackend; home: string } } => {
    if (o.runtime && o.runtime !== 'local' && o.runtime !== 'kubernetes') throw new DeploymentsError(`--runtime must be local or kubernetes, not ${JSON.stringify(o.runtime)}`);
    const local = o.runtime === 'local' || (!o.runtime && (o.home !== undefined || (connect === connectCluster && !loadClusterConfig().kubernetes.cluster)));
    if (!local) return {};
    const dir = resolve(o.home ?? loadCliConfig().home);
    return { local: { serving: new LocalServingBackend(dir), home: dir } };
  };
  const pickRevision = (v: string) => revisionNumber(v);

  group
    .command('list')
    .description('every model endpoint: model, revision, ready/desired (local: state and pid), and the pipeline, tenant, run and checkpoint it serves')
    .option(...runtime)
    .option(...home)
    .option(...ns)
    .option('--json', 'machine-readable output')
    .addHelpText('after', '\nExamples:\n  tandem deployments list                      # the cluster\'s, or the local ones without a cluster\n  tandem deployments list --home .tandem       # the model servers of `tandem dev`')
    .action(async (o: Where) => {
      const { local } = where(o);
      if (local) {
        const rows = local.serving.rows();
        return console.log(o.json ? JSON.stringify(rows, null, 2) : formatLocalRows(rows, local.home));
      }
      const { serving, namespace } = connect(o.k8sNamespace);
      const rows = await serving.endpoints(namespace);
      console.log(o.json ? JSON.stringify(rows, null, 2) : formatEndpoints(rows));
    });

  group
    .command('show <name>')
    .description("an endpoint's revisions (Kubernetes: ReplicaSets; local: the pipeline's deployments), newest first, with the run and checkpoint of each")
    .option(...runtime)
    .option(...home)
    .option(...ns)
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: Where) => {
      const { local } = where(o);
      if (local) {
        const rows = local.serving.revisions(name);
        if (!rows.length) throw new DeploymentsError(`no local deployment or pipeline named ${JSON.stringify(name)} under ${local.home} (see \`tandem deployments list --home ${local.home}\`)`);
        return console.log(o.json ? JSON.stringify({ name, runtime: 'local', revisions: rows }, null, 2) : formatLocalRevisions(name, rows));
      }
      const { serving, namespace } = connect(o.k8sNamespace);
      const { endpoint, revisions } = await serving.revisions(namespace, name);
      console.log(o.json ? JSON.stringify({ ...endpoint, revisions }, null, 2) : formatRevisions(endpoint, revisions));
    });

  group
    .command('rollback <name>')
    .description('roll the endpoint back to its previous revision, or to --to-revision N (kubectl rollout undo)')
    .option('--to-revision <n>', 'the revision to restore (see `tandem deployments show`)', pickRevision)
    .option(...runtime)
    .option(...home)
    .option(...ns)
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: Where & { toRevision?: number }) => {
      const { local } = where(o);
      if (local) {
        let r;
        try {
          r = await local.serving.rollback(name, o.toRevision);
        } catch (e) {
          throw new DeploymentsError((e as Error).message);
        }
        return console.log(o.json ? JSON.stringify({ runtime: 'local', name, ...r }, null, 2) : `${name} (local): ${r.from === r.to ? `already serving ${r.to}` : `serving ${r.to} again at ${r.endpoint}${r.from ? `; ${r.from} retired` : ''}`}`);
      }
      const { serving, namespace } = connect(o.k8sNamespace);
      const r = await serving.undo(namespace, name, o.toRevision);
      if (o.json) console.log(JSON.stringify({ namespace, name, ...r }, null, 2));
      else if (r.skipped) console.log(`${namespace}/${name}: already serving revision ${r.toRevision}'s template; nothing to roll back`);
      else console.log(`${namespace}/${name}: rolling back from revision ${dash(r.fromRevision)} to the template of revision ${r.toRevision} (the previous revision keeps serving until it is ready; follow with \`tandem deployments show ${name}\`)`);
    });

  group
    .command('stop <name>')
    .description('local: stop a deployment\'s model server (or every serving one of the pipeline so named), keeping its record for rollback')
    .option(...runtime)
    .option(...home)
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: Where) => {
      const { local } = where(o);
      if (!local) throw new DeploymentsError('stop is for local deployments (--runtime local, --home <dir>); on Kubernetes, `tandem deployments rollback` or `delete`');
      const revs = local.serving.revisions(name);
      const rows = revs.filter((r) => r.name === name || r.state === 'serving');
      if (!revs.length) throw new DeploymentsError(`no local deployment or pipeline named ${JSON.stringify(name)} under ${local.home} (see \`tandem deployments list --home ${local.home}\`)`);
      const stopped: string[] = [];
      for (const r of rows) if (r.alive && (await local.serving.stop(r.name))) stopped.push(r.name);
      console.log(o.json ? JSON.stringify({ runtime: 'local', name, stopped }, null, 2) : `${name} (local): ${stopped.length ? `stopped ${stopped.join(', ')}` : 'nothing was running'}`);
    });

  group
    .command('delete <name>')
    .description('delete the endpoint: on Kubernetes its Deployment (ReplicaSets and pods follow) and its Service; local: stop the server and forget the deployment')
    .option(...runtime)
    .option(...home)
    .option(...ns)
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: Where) => {
      const { local } = where(o);
      if (local) {
        const removed = await local.serving.undeploy(name);
        return console.log(o.json ? JSON.stringify({ runtime: 'local', name, removed }, null, 2) : `${name} (local): ${removed ? 'stopped and deleted' : 'nothing (already gone)'}`);
      }
      const { serving, namespace } = connect(o.k8sNamespace);
      const r = await serving.remove(namespace, name);
      console.log(o.json ? JSON.stringify({ namespace, name, ...r }, null, 2) : `${namespace}/${name}: deleted ${r.deleted.join(', ') || 'nothing (already gone)'}`);
    });
}
