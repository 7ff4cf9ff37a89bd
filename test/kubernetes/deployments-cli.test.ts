// `tandem deployments …` against the fake API server (test/kubernetes/fake/): two runs' revisions of one
// endpoint applied and rolled out through the serving backend, then listed, shown, rolled back (to the
// previous revision and to a named one) and deleted through the commands themselves.
import { jest } from '@jest/globals';
import { Command } from 'commander';
import { KubeClients } from '../../backends/kubernetes/client.js';
import { KubernetesServingBackend, type ServingRequest } from '../../backends/kubernetes/serving.js';
import { registerDeploymentCommands } from '../../cli/deployments.js';
import { startFakeCluster, type FakeCluster } from './fake/cluster.js';

let cluster: FakeCluster;
let serving: KubernetesServingBackend;
let clients: KubeClients;
const NS = 'tandem';

beforeAll(async () => {
  cluster = await startFakeCluster({ secondMs: 100 });
  clients = new KubeClients({ kubeConfig: cluster.kubeConfig() });
  serving = new KubernetesServingBackend({ clients, serviceType: 'LoadBalancer' });
});
afterAll(() => cluster?.close());

const revisionOf = (run: string, checkpoint: string): ServingRequest => ({
  name: 'chat',
  pipeline: 'chat',
  tenant: 'research',
  run,
  model: 'tandem/chat',
  checkpoint,
  kubernetes: { annotations: { 'fake.tandem.dev/boot-ms': '50' }, modelVolume: { claimName: 'shared', workerPath: '/srv/tandem' } },
});

async function tandem(...args: string[]): Promise<{ out: string; error?: Error }> {
  const program = new Command().exitOverride();
  registerDeploymentCommands(program, (namespace) => ({ serving, namespace: namespace ?? NS }));
  const lines: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((l: unknown) => void lines.push(String(l)));
  try {
    await program.parseAsync(['node', 'tandem', 'deployments', ...args]);
    return { out: lines.join('\n') };
  } catch (error) {
    return { out: lines.join('\n'), error: error as Error };
  } finally {
    log.mockRestore();
  }
}

test('list, show, rollback and delete an endpoint with two runs\' revisions', async () => {
  await serving.awaitRollout(await serving.apply(revisionOf('run-a', '/srv/tandem/runs/a/checkpoints/step-10')));
  await serving.awaitRollout(await serving.apply(revisionOf('run-b', '/srv/tandem/runs/b/checkpoints/step-20')));

  const list = JSON.parse((await tandem('list', '--json')).out);
  expect(list).toEqual([{ name: 'chat', namespace: NS, model: 'tandem/chat', revision: '2', ready: 1, desired: 1, pipeline: 'chat', tenant: 'research', run: 'run-b', checkpoint: '/srv/tandem/runs/b/checkpoints/step-20' }]);
  expect((await tandem('list')).out.split('\n')).toEqual([
    expect.stringMatching(/^NAME\s+NAMESPACE\s+MODEL\s+REVISION\s+READY\s+PIPELINE\s+TENANT\s+RUN\s+CHECKPOINT$/),
    expect.stringMatching(/^chat\s+tandem\s+tandem\/chat\s+2\s+1\/1\s+chat\s+research\s+run-b\s+\/srv\/tandem\/runs\/b\/checkpoints\/step-20$/),
  ]);

  const show = JSON.parse((await tandem('show', 'chat', '--json')).out);
  expect(show.revisions.map((r: { revision: number; run: string; checkpoint: string; current: boolean; replicas: number }) => [r.revision, r.run, r.checkpoint, r.current, r.replicas])).toEqual([
    [2, 'run-b', '/srv/tandem/runs/b/checkpoints/step-20', true, 1],
    [1, 'run-a', '/srv/tandem/runs/a/checkpoints/step-10', false, 0],
  ]);
  expect((await tandem('show', 'chat')).out).toMatch(/^tandem\/chat: model tandem\/chat, revision 2, 1\/1 ready, pipeline chat of tenant research\nREVISION/);

  // kubectl rollout undo: back to revision 1's template, which becomes revision 3.
  expect((await tandem('rollback', 'chat')).out).toMatch(/rolling back from revision 2 to the template of revision 1/);
  const d = await clients.apps.readNamespacedDeployment({ name: 'chat', namespace: NS });
  expect(d.spec!.template.metadata!.annotations!['tandem.dev/run']).toBe('run-a');
  await serving.awaitRollout({ namespace: NS, name: 'chat', generation: d.metadata!.generation! });
  expect(JSON.parse((await tandem('list', '--json')).out)[0]).toMatchObject({ revision: '3', run: 'run-a' });
  // --to-revision names a kept revision; the current one's template is "nothing to do".
  expect((await tandem('rollback', 'chat', '--to-revision', '2')).out).toMatch(/from revision 3 to the template of revision 2/);
  expect((await tandem('rollback', 'chat', '--to-revision', '4')).out).toMatch(/already serving revision 4's template/);
  expect((await tandem('rollback', 'chat', '--to-revision', '9')).error?.message).toMatch(/Deployment tandem\/chat has no revision 9 \(revisions kept: 4, 3\)/);
  expect((await tandem('rollback', 'chat', '--to-revision', 'two')).error?.message).toMatch(/--to-revision must be a revision number/);

  expect((await tandem('delete', 'chat')).out).toBe('tandem/chat: deleted deployment/chat, service/chat');
  expect((await tandem('show', 'chat')).error?.message).toBe('no Deployment tandem/chat');
  expect((await tandem('list')).out).toBe('no model endpoints');
});

test('a Deployment Tandem does not manage is neither shown nor touched', async () => {
  await clients.apps.createNamespacedDeployment({ namespace: NS, body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'theirs' }, spec: { selector: { matchLabels: { app: 'theirs' } }, template: { metadata: { labels: { app: 'theirs' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } } });
  expect((await tandem('list')).out).toBe('no model endpoints');
  expect((await tandem('delete', 'theirs')).error?.message).toMatch(/Deployment tandem\/theirs is not managed by Tandem/);
  await clients.apps.readNamespacedDeployment({ name: 'theirs', namespace: NS });
});
