// [fake] Preprocess Jobs on Kubernetes, through the real @kubernetes/client-node against the fake API
// server (fake/), only for what the real control plane (jobs.cp.test.ts) cannot do: injected 500s,
// dropped watch streams and 410 Gone; a pod that fails and then succeeds inside one Job; pod log
// tails. Everything else about Jobs runs against a real kube-apiserver in jobs.cp.test.ts.
import { KubeClients, KubeApiError } from '../../backends/kubernetes/client.js';
import { KubernetesJobBackend, type KubernetesJobRequest } from '../../backends/kubernetes/jobs.js';
import { ResourcesSchema } from '../../contract/pipeline.js';
import { startFakeCluster, type FakeCluster } from './fake/cluster.js';

let cluster: FakeCluster;
let clients: KubeClients;
beforeAll(async () => {
  cluster = await startFakeCluster({ secondMs: 100 });
  clients = new KubeClients({ kubeConfig: cluster.kubeConfig() });
});
afterAll(() => cluster.close());

const backend = (annotations: Record<string, string> = {}, extra: { backoffLimit?: number } = {}) =>
  new KubernetesJobBackend({ clients, defaultImage: 'ghcr.io/tandem/steps:0.1', podAnnotations: annotations, ...extra });

const request = (name: string, extra: Partial<KubernetesJobRequest> = {}): KubernetesJobRequest => ({
  name,
  command: ['tandem-step', 'preprocess'],
  env: { TANDEM_STAGE: 'preprocess' },
  resources: ResourcesSchema.parse({ cpusPerTask: 2, memoryMB: 512, gpusPerNode: 1 }),
  walltimeMs: 600_000,
  ...extra,
});

describe('KubernetesJobBackend', () => {
  test('a failing Job is FAILED with its exit code and the tail of the pod log; OOMKilled is OUT_OF_MEMORY', async () => {
    const jobs = backend({ 'fake.tandem.dev/exit-codes': '3', 'fake.tandem.dev/log': 'loading shard 1\nloading shard 2\nValueError: bad record at line 7' });
    const ref = await jobs.submit(request('tandem-k-fail-preprocess-1'));
    const final = await jobs.awaitFinished(ref.jobId);
    expect(final).toMatchObject({ state: 'FAILED', exitCode: 3 });
    expect(final.reason).toMatch(/BackoffLimitExceeded.*container exited 3 \(Error\)/);
    expect(final.tail).toMatch(/ValueError: bad record at line 7\nerror: exiting with code 3$/);

    const oom = backend({ 'fake.tandem.dev/exit-codes': 'oom' });
    const oref = await oom.submit(request('tandem-k-oom-preprocess-1'));
    expect(await oom.awaitFinished(oref.jobId)).toMatchObject({ state: 'OUT_OF_MEMORY', exitCode: 137 });
  });

  test('retry: a pod that fails once is retried inside the Job (backoffLimit), and Tandem-level retries use a new Job', async () => {
    const podRetry = backend({ 'fake.tandem.dev/exit-codes': '1,0' }, { backoffLimit: 1 });
    const ref = await podRetry.submit(request('tandem-k-podretry-preprocess-1'));
    expect(await podRetry.awaitFinished(ref.jobId)).toMatchObject({ state: 'COMPLETED' });
    const job = await clients.batch.readNamespacedJob({ name: ref.name, namespace: 'tandem' });
    expect(job.status).toMatchObject({ failed: 1, succeeded: 1 });

    // The workflow's job-level retry: attempt 1 fails (no pod retries), attempt 2 is a new Job and succeeds.
    const jobs = backend({ 'fake.tandem.dev/exit-codes': '1,0', 'fake.tandem.dev/script': 'job-level-retry' });
    const a1 = await jobs.submit(request('tandem-k-retry-preprocess-1'));
    expect(await jobs.awaitFinished(a1.jobId)).toMatchObject({ state: 'FAILED', exitCode: 1 });
    const a2 = await jobs.submit(request('tandem-k-retry-preprocess-2'));
    expect(await jobs.awaitFinished(a2.jobId)).toMatchObject({ state: 'COMPLETED' });
  });

  test('could not observe is not a verdict: a 500 surfaces as a transient error, and the watch survives dropped streams and 410 Gone', async () => {
    const jobs = backend({ 'fake.tandem.dev/run-ms': '600' });
    const ref = await jobs.submit(request('tandem-k-flaky-preprocess-1'));
    cluster.api.injectFault('GET', /\/jobs\/tandem-k-flaky-preprocess-1$/, 500);
    const err = await jobs.status(ref.jobId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ code: 500, transient: true });
    expect((err as Error).message).not.toMatch(/authorization|Bearer/i);

    const final = jobs.awaitFinished(ref.jobId);
    for (let i = 0; i < 100 && cluster.api.openWatches('jobs') === 0; i++) await new Promise((r) => setTimeout(r, 10));
    cluster.api.dropWatches(); // the stream ends: the watcher re-watches from its last resourceVersion
    await new Promise((r) => setTimeout(r, 50));
    cluster.api.store.compact(); // and its version is compacted away: 410 Gone, so it re-reads
    cluster.api.dropWatches();
    expect(await final).toMatchObject({ state: 'COMPLETED' });
    const watches = cluster.api.requests.filter((r) => r.path === '/apis/batch/v1/namespaces/tandem/jobs' && r.query.includes('watch=true') && r.query.includes('tandem-k-flaky'));
    expect(watches.length).toBeGreaterThanOrEqual(2);
  });

});
