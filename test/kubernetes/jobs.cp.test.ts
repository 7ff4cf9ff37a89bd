// [real control plane] Preprocess Jobs on a real kube-apiserver, Job controller, garbage collector and
// scheduler (test/kubernetes/control-plane.ts); kwok plays the kubelets, and its Stages
// (kwok-stages.ts) end each pod with the exit code the test put in its annotations.
// Still on the fake (jobs.test.ts): injected 500s, dropped watch streams and 410 Gone (fault
// injection the real apiserver cannot be told to do), a pod that fails and then succeeds inside one
// Job (kwok cannot tell a Job's identical pods apart), and pod log tails (kwok serves no kubelet API here).
import { KubeApiError, type KubeClients } from '../../backends/kubernetes/client.js';
import { KubernetesJobBackend, type KubernetesJobRequest } from '../../backends/kubernetes/jobs.js';
import { KubernetesOptionsError } from '../../contract/kubernetes.js';
import { ResourcesSchema } from '../../contract/pipeline.js';
import { waitFor } from '../helpers.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { KWOK_ANNOTATIONS } from './kwok-stages.js';

let cp: ControlPlane;
let clients: KubeClients;
beforeAll(async () => {
  cp = await startControlPlane({
    nodes: [
      { name: 'node-a', gpus: 8, labels: { 'nvidia.com/gpu.product': 'A100' }, taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] },
      { name: 'node-b', cpu: '4', memory: '8Gi' },
    ],
  });
  clients = cp.clients();
}, 120_000);
afterAll(() => cp?.stop());

const NS = 'tandem';
const GPU_TOLERATION = { key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const };

const backend = (pod: { run?: string; exitCodes?: string } = {}, extra: { backoffLimit?: number } = {}) =>
  new KubernetesJobBackend({
    clients,
    defaultImage: 'ghcr.io/tandem/steps:0.1',
    podAnnotations: { ...(pod.run ? { [KWOK_ANNOTATIONS.run]: pod.run } : {}), ...(pod.exitCodes ? { [KWOK_ANNOTATIONS.exitCodes]: pod.exitCodes } : {}) },
    ...extra,
  });

const request = (name: string, extra: Partial<KubernetesJobRequest> = {}): KubernetesJobRequest => ({
  name,
  command: ['tandem-step', 'preprocess'],
  env: { TANDEM_STAGE: 'preprocess' },
  resources: ResourcesSchema.parse({ cpusPerTask: 2, memoryMB: 512, gpusPerNode: 1 }),
  walltimeMs: 600_000,
  kubernetes: { tolerations: [GPU_TOLERATION] },
  ...extra,
});

const podsOf = async (job: string) => (await clients.core.listNamespacedPod({ namespace: NS, labelSelector: `job-name=${job}` })).items;

describe('KubernetesJobBackend on a real control plane', () => {
  test('a preprocess Job is scheduled onto the GPU node, runs and COMPLETES; the stored spec carries resources, selector, tolerations, Kueue label', async () => {
    const jobs = backend({ run: '1500ms' });
    const ref = await jobs.submit(request('tandem-k-ok-preprocess-1', { kubernetes: { nodeSelector: { 'nvidia.com/gpu.product': 'A100' }, tolerations: [GPU_TOLERATION], queueName: 'team-a' } }));
    expect(ref).toEqual({ runtime: 'kubernetes', jobId: 'tandem/tandem-k-ok-preprocess-1', name: 'tandem-k-ok-preprocess-1', site: new URL(cp.server).host, adopted: false });

    const job = await clients.batch.readNamespacedJob({ name: ref.name, namespace: NS });
    expect(job.metadata!.labels).toMatchObject({ 'kueue.x-k8s.io/queue-name': 'team-a', 'app.kubernetes.io/managed-by': 'tandem' });
    const spec = job.spec!.template.spec!;
    expect(spec).toMatchObject({ restartPolicy: 'Never', nodeSelector: { 'nvidia.com/gpu.product': 'A100' }, tolerations: [GPU_TOLERATION] });
    // What the apiserver stored (defaulted and normalised), not what we sent.
    expect(spec.containers[0]).toMatchObject({ image: 'ghcr.io/tandem/steps:0.1', command: ['tandem-step', 'preprocess'], env: [{ name: 'TANDEM_STAGE', value: 'preprocess' }], resources: { requests: { cpu: '2', memory: '512Mi', 'nvidia.com/gpu': '1' }, limits: { memory: '512Mi', 'nvidia.com/gpu': '1' } } });
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 600, completionMode: 'NonIndexed' });

    const seen: string[] = [];
    const final = await jobs.awaitFinished(ref.jobId, { onChange: (s) => seen.push(s.state) });
    expect(final).toMatchObject({ state: 'COMPLETED', exitCode: 0, progress: { step: 1, total: 1 } });
    expect(seen).toContain('RUNNING');
    expect(await jobs.status(ref.jobId)).toMatchObject({ state: 'COMPLETED' });
    const [pod] = await podsOf(ref.name);
    expect(pod!.spec!.nodeName).toBe('node-a'); // the scheduler honoured selector, toleration and GPU request
    expect(pod!.status!.phase).toBe('Succeeded');
    // Traffic rule: pods and nodes carry loopback addresses only.
    expect(pod!.status!.podIP).toMatch(/^127\./);
    expect(pod!.status!.hostIP).toMatch(/^127\./);
  });

  test('submit is idempotent by name: the second create is answered 409 and adopts the same Job (one Job, one pod)', async () => {
    const jobs = backend({ run: '60s' });
    const first = await jobs.submit(request('tandem-k-idem-preprocess-1'));
    const uid = (await clients.batch.readNamespacedJob({ name: first.name, namespace: NS })).metadata!.uid;
    const again = await jobs.submit(request('tandem-k-idem-preprocess-1'));
    expect(again).toEqual({ ...first, adopted: true });
    expect(await jobs.findByName('tandem-k-idem-preprocess-1')).toEqual({ ...first, adopted: true });
    expect(await jobs.findByName('tandem-k-nonexistent')).toBeUndefined();
    expect((await clients.batch.readNamespacedJob({ name: first.name, namespace: NS })).metadata!.uid).toBe(uid);
    const sameName = (await clients.batch.listNamespacedJob({ namespace: NS })).items.filter((j) => j.metadata!.name === first.name);
    expect(sameName).toHaveLength(1);
    await waitFor('the Job pod', async () => ((await podsOf(first.name)).length === 1 ? true : undefined));
    await jobs.cancel(first.jobId);
  });

  test('a failing pod makes the Job FAILED with its exit code; OOMKilled is OUT_OF_MEMORY', async () => {
    const jobs = backend({ exitCodes: '3' });
    const ref = await jobs.submit(request('tandem-k-fail-preprocess-1'));
    const final = await jobs.awaitFinished(ref.jobId);
    expect(final).toMatchObject({ state: 'FAILED', exitCode: 3 });
    expect(final.reason).toMatch(/BackoffLimitExceeded.*container exited 3 \(Error\)/);

    const oom = backend({ exitCodes: 'oom' });
    const oref = await oom.submit(request('tandem-k-oom-preprocess-1'));
    expect(await oom.awaitFinished(oref.jobId)).toMatchObject({ state: 'OUT_OF_MEMORY', exitCode: 137 });
  });

  test('retries: backoffLimit makes the Job controller start another pod; a Tandem retry is a new Job that can succeed', async () => {
    // Pod-level: backoffLimit 1, every pod exits 2: two pods fail, then the Job does.
    const podRetry = backend({ exitCodes: '2' }, { backoffLimit: 1 });
    const ref = await podRetry.submit(request('tandem-k-podretry-preprocess-1'));
    expect(await podRetry.awaitFinished(ref.jobId)).toMatchObject({ state: 'FAILED', exitCode: 2 });
    const job = await clients.batch.readNamespacedJob({ name: ref.name, namespace: NS });
    expect(job.status).toMatchObject({ failed: 2 });

    // Job-level (what the workflow's retry policy does): attempt 1 fails, attempt 2 is a new Job and succeeds.
    const jobs = backend({ exitCodes: '1,0' });
    const a1 = await jobs.submit(request('tandem-k-retry-preprocess-1'));
    expect(await jobs.awaitFinished(a1.jobId)).toMatchObject({ state: 'FAILED', exitCode: 1 });
    const a2 = await jobs.submit(request('tandem-k-retry-preprocess-2'));
    expect(await jobs.awaitFinished(a2.jobId)).toMatchObject({ state: 'COMPLETED', exitCode: 0 });
  }, 120_000);

  test('walltime becomes activeDeadlineSeconds: the Job controller ends a Job that runs too long, TIMEOUT', async () => {
    const jobs = backend({ run: '10m' });
    const ref = await jobs.submit(request('tandem-k-slow-preprocess-1', { walltimeMs: 2000 }));
    expect(await jobs.awaitFinished(ref.jobId)).toMatchObject({ state: 'TIMEOUT', reason: expect.stringMatching(/DeadlineExceeded/) });
  });

  test('cancel deletes the Job, and the garbage collector its pods; CANCELLED; a second cancel is fine', async () => {
    const jobs = backend({ run: '10m' });
    const ref = await jobs.submit(request('tandem-k-cancel-preprocess-1'));
    const running = jobs.awaitFinished(ref.jobId);
    await waitFor('RUNNING', async () => ((await jobs.status(ref.jobId)).state === 'RUNNING' ? true : undefined), 30_000);
    expect(await podsOf(ref.name)).toHaveLength(1);
    await jobs.cancel(ref.jobId);
    expect(await running).toMatchObject({ state: 'CANCELLED' });
    await waitFor('the pods to be gone', async () => ((await podsOf(ref.name)).length === 0 ? true : undefined), 30_000);
    await waitFor('the Job to be gone', async () => ((await jobs.findByName(ref.name)) === undefined ? true : undefined), 30_000);
    await expect(jobs.cancel(ref.jobId)).resolves.toBeUndefined();
    expect(await jobs.status(ref.jobId)).toMatchObject({ state: 'CANCELLED' });
  });

  test('a pod whose nodeSelector matches no node stays PENDING; the real scheduler says Unschedulable', async () => {
    const jobs = backend();
    const ref = await jobs.submit(request('tandem-k-unsched-preprocess-1', { kubernetes: { nodeSelector: { 'nvidia.com/gpu.product': 'H100' }, tolerations: [GPU_TOLERATION] } }));
    const pod = await waitFor('the scheduler verdict', async () => (await podsOf(ref.name)).find((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')), 30_000);
    expect(pod.status!.conditions!.find((c) => c.type === 'PodScheduled')!.message).toMatch(/didn't match Pod's node affinity\/selector/);
    expect(await jobs.status(ref.jobId)).toMatchObject({ state: 'PENDING' });
    await jobs.cancel(ref.jobId);
  });

  test('a privileged pod or a hostPath volume is refused naming the field, and nothing is created', async () => {
    const jobs = backend();
    const reject = (kubernetes: KubernetesJobRequest['kubernetes']) => jobs.submit(request('tandem-k-bad-preprocess-1', { kubernetes })).then(() => undefined, (e: unknown) => e);
    const priv = await reject({ securityContext: { privileged: true } });
    expect(priv).toBeInstanceOf(KubernetesOptionsError);
    expect((priv as Error).message).toMatch(/kubernetes\.securityContext\.privileged: privileged pods are not allowed/);
    const host = await reject({ volumes: [{ name: 'data', mountPath: '/data', hostPath: { path: '/var/lib' } }] });
    expect(host).toBeInstanceOf(KubernetesOptionsError);
    expect((host as Error).message).toMatch(/kubernetes\.volumes\[0\]\.hostPath: hostPath volumes are not allowed/);
    expect(await jobs.findByName('tandem-k-bad-preprocess-1')).toBeUndefined();
    expect(await podsOf('tandem-k-bad-preprocess-1')).toEqual([]);
  });

  test("the real apiserver's 422 reaches the caller as a KubeApiError naming the field", async () => {
    const jobs = backend();
    // A Job name over 63 characters passes Tandem's checks here but not the apiserver's: the Job
    // controller puts the name in the pods' job-name label, whose values are at most 63 characters.
    const name = `tandem-k-${'x'.repeat(60)}-preprocess-1`;
    const err = await jobs.submit(request(name)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ code: 422, reason: 'Invalid', transient: false });
    expect((err as KubeApiError).causes.map((c) => c.field)).toEqual(['metadata.labels', 'spec.template.labels']);
    // One line naming each refused field once (the apiserver reports the template's label three times).
    expect((err as Error).message).toBe(`create Job tandem/${name}: 422 Invalid: metadata.labels: Invalid value: "${name}": must be no more than 63 characters; spec.template.labels: Invalid value: "${name}": must be no more than 63 characters`);
    expect(await jobs.findByName(name)).toBeUndefined();

    // And the apiserver answers a hand-made invalid Job with every offending field.
    const raw = await clients.batch
      .createNamespacedJob({ namespace: NS, body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'Bad_Name' }, spec: { template: { spec: { restartPolicy: 'Always', containers: [{ name: 'main', image: 'x' }] } } } } })
      .catch((e: unknown) => e);
    expect(raw).toMatchObject({ code: 422 });
    expect(JSON.parse((raw as { body: string }).body)).toMatchObject({ reason: 'Invalid', details: { causes: expect.arrayContaining([expect.objectContaining({ field: 'metadata.name' }), expect.objectContaining({ field: 'spec.template.spec.restartPolicy' })]) } });
  });
});
