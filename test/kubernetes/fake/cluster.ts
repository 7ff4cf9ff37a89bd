// One fake cluster for a test: the API server, its controllers, and a KubeConfig for the real client.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { FakeApiServer } from './apiserver.js';
import { FakeControllers, nodeObject, type FakeNode } from './controllers.js';

export interface FakeCluster {
  api: FakeApiServer;
  url: string;
  token: string;
  namespace: string;
  kubeConfig(): KubeConfig;
  /** Writes a kubeconfig file (for worker processes) and returns its path. */
  writeKubeconfig(dir: string): string;
  close(): Promise<void>;
}

export interface FakeClusterOptions {
  /** Length of one simulated second (probe periods, deadlines); default 1000. */
  secondMs?: number;
  /** The single node of the default cluster (fake-node-1, 8 GPUs), adjusted. */
  node?: Partial<FakeNode>;
  /** Several nodes instead (each defaults to no taints, no GPUs); overrides `node`. */
  nodes?: (Partial<FakeNode> & { name: string })[];
  namespace?: string;
}

export async function startFakeCluster(opts: FakeClusterOptions = {}): Promise<FakeCluster> {
  const token = randomBytes(16).toString('hex');
  const api = new FakeApiServer({ token, bookmarkMs: 1000 });
  const url = await api.start();
  // Registered as Node objects (what kubelets do), so clients can read, list and replace them.
  const nodes: FakeNode[] = opts.nodes?.map((n) => ({ labels: {}, taints: [], gpus: 0, ...n })) ?? [{ name: 'fake-node-1', labels: { 'kubernetes.io/hostname': 'fake-node-1' }, taints: [], gpus: 8, ...opts.node }];
  for (const n of nodes) api.store.create('nodes', '', nodeObject(n));
  const controllers = new FakeControllers(api, { secondMs: opts.secondMs ?? 1000 });
  const namespace = opts.namespace ?? 'tandem';
  // skipTLSVerify: the client accepts an http:// server only with it (the client library refuses http:// otherwise).
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'tester', user: { token } }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'tester', namespace } }],
    'current-context': 'fake',
  };
  return {
    api,
    url,
    token,
    namespace,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromString(stringify(config));
      return kc;
    },
    writeKubeconfig(dir: string) {
      const path = join(dir, 'kubeconfig');
      writeFileSync(path, stringify(config), { mode: 0o600 });
      return path;
    },
    async close() {
      controllers.stop();
      await api.close();
    },
  };
}
