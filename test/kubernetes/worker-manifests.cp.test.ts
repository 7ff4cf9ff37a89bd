// [real control plane] The manifests for running Tandem workers in a cluster
// (templates/kubernetes/worker.yaml, worker-rbac.yaml) pass the real apiserver's validation
// (server-side dry run), and the Role really grants what a worker needs: `tandem doctor`'s
// Kubernetes check, run with the worker ServiceAccount's own token, finds every verb allowed —
// and names the missing ones for a ServiceAccount without the Role.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { kubernetesChecks } from '../../cli/doctor.js';
import { loadWorkerConfig } from '../../config/worker.js';
import { tempDir } from '../helpers.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';

let cp: ControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'node-a' }] });
}, 120_000);
afterAll(() => cp?.stop());

const manifests = (file: string) => parseAllDocuments(readFileSync(join('templates/kubernetes', file), 'utf8')).map((d) => d.toJS() as KubernetesObject);

/** A kubeconfig that authenticates as a ServiceAccount of the tandem namespace (a TokenRequest). */
async function kubeconfigAs(serviceAccount: string): Promise<string> {
  const core = cp.clients().core;
  const tr = await core.createNamespacedServiceAccountToken({ name: serviceAccount, namespace: 'tandem', body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } } });
  const admin = cp.kubeConfig();
  const cluster = admin.getCurrentCluster()!;
  const file = join(tempDir('sa-kubeconfig'), 'kubeconfig');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'cp', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData ?? readFileSync(cluster.caFile!).toString('base64') } }],
      users: [{ name: serviceAccount, user: { token: tr.status!.token } }],
      contexts: [{ name: 'cp', context: { cluster: 'cp', user: serviceAccount, namespace: 'tandem' } }],
      'current-context': 'cp',
    }),
    { mode: 0o600 },
  );
  return file;
}

test('every worker manifest passes the apiserver (server-side dry run)', async () => {
  const api = KubernetesObjectApi.makeApiClient(cp.kubeConfig());
  const docs = [...manifests('worker-rbac.yaml'), ...manifests('worker.yaml')];
  expect(docs.map((d) => d.kind)).toEqual(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'PersistentVolumeClaim', 'PodDisruptionBudget']);
  for (const d of docs) await expect(api.create(d, undefined, 'All')).resolves.toMatchObject({ kind: d.kind, metadata: { name: d.metadata!.name } });
  // Dry run: nothing was created.
  await expect(cp.clients().apps.readNamespacedDeployment({ name: 'tandem-worker', namespace: 'tandem' })).rejects.toThrow();
}, 60_000);

test("with the Role, doctor finds every verb allowed; without it, it names what is missing", async () => {
  const api = KubernetesObjectApi.makeApiClient(cp.kubeConfig());
  for (const d of manifests('worker-rbac.yaml')) await api.create(d);
  await cp.clients().core.createNamespacedServiceAccount({ namespace: 'tandem', body: { metadata: { name: 'bare' } } });
  const withRole = await kubernetesChecks(loadWorkerConfig({ KUBECONFIG: await kubeconfigAs('tandem-worker'), TANDEM_K8S_NAMESPACE: 'tandem', TANDEM_HOME: tempDir('doctor') }));
  expect(withRole).toEqual([expect.objectContaining({ name: 'kubernetes', ok: true, detail: 'namespace tandem: every verb Tandem needs is allowed' })]);
  const bare = await kubernetesChecks(loadWorkerConfig({ KUBECONFIG: await kubeconfigAs('bare'), TANDEM_K8S_NAMESPACE: 'tandem', TANDEM_HOME: tempDir('doctor') }));
  expect(bare).toEqual([expect.objectContaining({ name: 'kubernetes', ok: false, detail: 'namespace tandem: not allowed to create jobs, get jobs, list jobs, delete jobs, get pods, list pods, get pods/log, create deployments, get deployments, patch deployments, delete deployments, list replicasets, create services, get services, delete services', fix: expect.stringContaining('worker-rbac.yaml') })]);
}, 60_000);

test("the Argo executor plugin's ConfigMap and its sidecar container pass the apiserver, and the two forms agree", async () => {
  const api = KubernetesObjectApi.makeApiClient(cp.kubeConfig());
  const dir = 'templates/argo/executor-plugin';
  const [plugin] = parseAllDocuments(readFileSync(join(dir, 'plugin.yaml'), 'utf8')).map((d) => d.toJS() as { spec: { sidecar: { container: Record<string, unknown> } } });
  const [configMap] = parseAllDocuments(readFileSync(join(dir, 'tandem-executor-plugin-configmap.yaml'), 'utf8')).map((d) => d.toJS() as KubernetesObject & { data: Record<string, string> });
  // The ConfigMap Argo's controller reads (labelled workflows.argoproj.io/configmap-type: ExecutorPlugin).
  await expect(api.create({ ...configMap!, metadata: { ...configMap!.metadata, namespace: 'tandem' } }, undefined, 'All')).resolves.toMatchObject({ kind: 'ConfigMap' });
  const container = parseAllDocuments(configMap!.data['sidecar.container']!)[0]!.toJS() as Record<string, unknown>;
  expect(container).toEqual(plugin!.spec.sidecar.container);
  // The sidecar as the agent pod will carry it: the apiserver's Pod validation (ports, resources,
  // securityContext), with the agent's token volume mounted where --token-file reads it.
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'agent-dry-run', namespace: 'tandem' },
    spec: {
      containers: [{ ...container, volumeMounts: [{ name: 'var-run-argo', mountPath: '/var/run/argo' }] }],
      volumes: [{ name: 'var-run-argo', emptyDir: {} }],
    },
  };
  await expect(api.create(pod as KubernetesObject, undefined, 'All')).resolves.toMatchObject({ kind: 'Pod', spec: { containers: [expect.objectContaining({ name: 'tandem-executor-plugin' })] } });
}, 60_000);
