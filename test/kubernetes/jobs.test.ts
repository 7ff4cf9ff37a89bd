// Preprocess Jobs on Kubernetes, through the real @kubernetes/client-node against the fake API server.
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { KubeClients, KubeApiError } from '../../backends/kubernetes/client.js';
import { KubernetesJobBackend, type KubernetesJobRequest } from '../../backends/kubernetes/jobs.js';
import { KubernetesOptionsError } from '../../contract/kubernetes.js';
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
  test('a preprocess Job runs to COMPLETED; its spec carries resources, node selector, tolerations and the Kueue label', async () => {
    const jobs = backend({ 'fake.tandem.dev/run-ms': '1500' });
    const ref = await jobs.submit(request('tandem-k-ok-preprocess-1', { kubernetes: { nodeSelector: { 'kubernetes.io/hostname': 'fake-node-1' }, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }], queueName: 'team-a' } }));
    expect(ref).toEqual({ runtime: 'kubernetes', jobId: 'tandem/tandem-k-ok-preprocess-1', name: 'tandem-k-ok-preprocess-1', site: new URL(cluster.url).host, adopted: false });

    // Read back through a separate client, as kubectl would.
    const job = await cluster.kubeConfig().makeApiClient(BatchV1Api).readNamespacedJob({ name: ref.name, namespace: 'tandem' });
    expect(job.metadata!.labels).toMatchObject({ 'kueue.x-k8s.io/queue-name': 'team-a', 'app.kubernetes.io/managed-by': 'tandem' });
    const pod = job.spec!.template.spec!;
    expect(pod).toMatchObject({ restartPolicy: 'Never', nodeSelector: { 'kubernetes.io/hostname': 'fake-node-1' }, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] });
    expect(pod.containers[0]).toMatchObject({ image: 'ghcr.io/tandem/steps:0.1', command: ['tandem-step', 'preprocess'], env: [{ name: 'TANDEM_STAGE', value: 'preprocess' }], resources: { requests: { cpu: '2', memory: '512Mi', 'nvidia.com/gpu': '1' }, limits: { memory: '512Mi', 'nvidia.com/gpu': '1' } } });
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 600 });

    const seen: string[] = [];
    const final = await jobs.awaitFinished(ref.jobId, { onChange: (s) => seen.push(s.state) });
    expect(final).toMatchObject({ state: 'COMPLETED', exitCode: 0, progress: { step: 1, total: 1 } });
    expect(seen).toContain('RUNNING');
    expect(await jobs.status(ref.jobId)).toMatchObject({ state: 'COMPLETED' });
  });

  test('submit is idempotent by name: a second submit gets 409 and adopts the same Job', async () => {
    const jobs = backend();
    const first = await jobs.submit(request('tandem-k-idem-preprocess-1'));
    const again = await jobs.submit(request('tandem-k-idem-preprocess-1'));
    expect(again).toEqual({ ...first, adopted: true });
    expect(await jobs.findByName('tandem-k-idem-preprocess-1')).toEqual({ ...first, adopted: true });
    expect(await jobs.findByName('tandem-k-nonexistent')).toBeUndefined();
    const posts = cluster.api.requests.filter((r) => r.method === 'POST' && r.path === '/apis/batch/v1/namespaces/tandem/jobs' && r.status !== 0);
    expect(posts.filter((r) => r.status === 201)).toHaveLength(2); // this test's Job and the previous test's
    expect(posts.filter((r) => r.status === 409)).toHaveLength(1);
    await jobs.cancel(first.jobId);
  });

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

  test('walltime becomes activeDeadlineSeconds: a Job that runs too long ends TIMEOUT', async () => {
    const jobs = backend({ 'fake.tandem.dev/run-ms': '60000' });
    const ref = await jobs.submit(request('tandem-k-slow-preprocess-1', { walltimeMs: 3000 })); // 3 simulated s = 300 ms
    expect(await jobs.awaitFinished(ref.jobId)).toMatchObject({ state: 'TIMEOUT', reason: expect.stringMatching(/DeadlineExceeded/) });
  });

  test('cancel deletes the Job and its pods; the status is CANCELLED and a second cancel is fine', async () => {
    const jobs = backend({ 'fake.tandem.dev/run-ms': '60000' });
    const ref = await jobs.submit(request('tandem-k-cancel-preprocess-1'));
    const core = cluster.kubeConfig().makeApiClient(CoreV1Api);
    const pods = async () => (await core.listNamespacedPod({ namespace: 'tandem', labelSelector: `job-name=${ref.name}` })).items;
    const running = jobs.awaitFinished(ref.jobId);
    for (let i = 0; i < 100 && (await jobs.status(ref.jobId)).state !== 'RUNNING'; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await pods()).toHaveLength(1);
    await jobs.cancel(ref.jobId);
    expect(await running).toMatchObject({ state: 'CANCELLED' });
    expect(await pods()).toHaveLength(0);
    await expect(jobs.cancel(ref.jobId)).resolves.toBeUndefined();
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

  test('a pod whose nodeSelector matches no node stays PENDING (Unschedulable)', async () => {
    const jobs = backend();
    const ref = await jobs.submit(request('tandem-k-unsched-preprocess-1', { kubernetes: { nodeSelector: { 'nvidia.com/gpu.product': 'H100' } } }));
    await new Promise((r) => setTimeout(r, 300));
    expect(await jobs.status(ref.jobId)).toMatchObject({ state: 'PENDING' });
    const [pod] = (await clients.core.listNamespacedPod({ namespace: 'tandem', labelSelector: `job-name=${ref.name}` })).items;
    expect(pod!.status!.conditions).toEqual([expect.objectContaining({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' })]);
    await jobs.cancel(ref.jobId);
  });

  test('a spec asking for a privileged pod or a hostPath volume is rejected naming the field, before any request', async () => {
    const jobs = backend();
    const before = cluster.api.requests.length;
    const reject = (kubernetes: KubernetesJobRequest['kubernetes']) => jobs.submit(request('tandem-k-bad-preprocess-1', { kubernetes })).then(() => undefined, (e: unknown) => e);
    const priv = await reject({ securityContext: { privileged: true } });
    expect(priv).toBeInstanceOf(KubernetesOptionsError);
    expect((priv as Error).message).toMatch(/kubernetes\.securityContext\.privileged: privileged pods are not allowed/);
    const host = await reject({ volumes: [{ name: 'data', mountPath: '/data', hostPath: { path: '/var/lib' } }] });
    expect((host as Error).message).toMatch(/kubernetes\.volumes\[0\]\.hostPath: hostPath volumes are not allowed/);
    expect(cluster.api.requests.length).toBe(before);
  });

  test('the API server validates too: an invalid object is answered 422 Invalid naming the field', async () => {
    const err = await clients.batch
      .createNamespacedJob({ namespace: 'tandem', body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'Bad_Name' }, spec: { template: { spec: { restartPolicy: 'Always', containers: [{ name: 'main', image: 'x' }] } } } } })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 422 });
    expect(JSON.parse((err as { body: string }).body)).toMatchObject({ reason: 'Invalid', details: { causes: expect.arrayContaining([expect.objectContaining({ field: 'metadata.name' }), expect.objectContaining({ field: 'spec.template.spec.restartPolicy' })]) } });
  });
});
