// [real control plane] hybridPipeline against a real kube-apiserver, controllers and scheduler, with
// kwok as the kubelets (control-plane.ts): preprocess Jobs that fail, retry and succeed; cancellation
// deleting the running Job and its pods; the deploy stage's Deployment rolled out by the real
// Deployment controller, reached through the load-balancer stand-in (load-balancer.ts) at
// 127.0.0.1, whose pods answer with the vLLM stand-in. The serving lifecycle itself (revisions,
// failed gates, rollback) is serving-lifecycle.cp.test.ts.
// A worker started in-process (test/helpers.ts startWorker) finds the cluster through KUBECONFIG.
import { execFile } from 'node:child_process';
import { WorkflowFailedError } from '@temporalio/client';
import type { KubeClients } from '../../backends/kubernetes/client.js';
import { LocalServingBackend } from '../../backends/local-serving.js';
import { address, spec, startWorker, tempDir, uniqueQueue, waitFor } from '../helpers.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { KWOK_ANNOTATIONS } from './kwok-stages.js';
import { startLoadBalancer, type LoadBalancer } from './load-balancer.js';

let cp: ControlPlane;
let lb: LoadBalancer;
let clients: KubeClients;
let w: Awaited<ReturnType<typeof startWorker>>;
const home = tempDir('k8s-cp-pipeline');
const ENV = ['KUBECONFIG', 'TANDEM_K8S_SERVICE_TYPE', 'TANDEM_K8S_NAMESPACE', 'TANDEM_K8S_STEP_IMAGE'];

beforeAll(async () => {
  // podLogs: kwok serves the kubelet API, so `tandem logs` reads pod logs through the apiserver.
  cp = await startControlPlane({ nodes: [{ name: 'gpu-node-1', gpus: 8, cpu: '32', memory: '256Gi' }], podLogs: true });
  cp.writePodLog([{ text: 'preprocess: reading corpus' }, { stream: 'stderr', text: 'preprocess: shard 3 is empty' }]);
  clients = cp.clients();
  // The shared filesystem the worker writes checkpoints to, as the claim the vLLM pods mount.
  await cp.createClaim('tandem-home');
  lb = await startLoadBalancer(cp);
  // The worker finds the cluster the way a real one does: KUBECONFIG; the LB address reaches the model.
  Object.assign(process.env, { KUBECONFIG: cp.kubeconfigPath, TANDEM_K8S_SERVICE_TYPE: 'LoadBalancer', TANDEM_K8S_NAMESPACE: cp.namespace, TANDEM_K8S_STEP_IMAGE: 'ghcr.io/tandem/steps:0.1' });
  try {
    w = await startWorker({ taskQueue: uniqueQueue('k8s-cp-pipeline'), home });
  } finally {
    for (const k of ENV) delete process.env[k];
  }
}, 120_000);
afterAll(async () => {
  await w?.stop();
  await lb?.stop();
  await cp?.stop();
});

const NS = 'tandem';
const jobsNamed = async (part: string) => (await clients.batch.listNamespacedJob({ namespace: NS })).items.filter((j) => j.metadata!.name!.includes(part));
const podsOf = async (job: string) => (await clients.core.listNamespacedPod({ namespace: NS, labelSelector: `job-name=${job}` })).items;
// This worker can run job stages on Kubernetes too (TANDEM_K8S_STEP_IMAGE), where kwok's pods write no
// data or checkpoints: the serving tests train locally, explicitly.
const LOCAL_TRAINING = { preprocess: { runtime: 'local' as const }, train: { runtime: 'local' as const, steps: 20, checkpointEvery: 10 } };
const onKubernetes = (annotations: Record<string, string>) => ({ runtime: 'kubernetes' as const, kubernetes: { annotations } });

const deployOn = (behaviour: string, readinessTimeout = '20s') => ({
  runtime: 'kubernetes' as const,
  model: 'tandem/sentiment',
  readinessTimeout,
  kubernetes: { annotations: { [KWOK_ANNOTATIONS.vllm]: behaviour, [KWOK_ANNOTATIONS.boot]: '300ms' }, modelVolume: { claimName: 'tandem-home', workerPath: home }, vllm: { progressDeadlineSeconds: 30 } },
});

test('trains locally and serves on Kubernetes: the real Deployment controller rolls out, the gates pass through the load balancer', async () => {
  const h = await w.tandem.launch(spec({ stages: { ...LOCAL_TRAINING, deploy: deployOn('ok') } }), { id: 'k8s-cp-pipe-ok', tuning: { pollMaxMs: 300 } });
  const result = await h.result();
  expect(result).toMatchObject({ model: 'tandem/sentiment', checkpoint: { step: 20 } });
  expect(result.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(result.completion).toMatch(/hello from tandem\/sentiment/);
  const deployments = (await clients.apps.listNamespacedDeployment({ namespace: NS })).items;
  expect(deployments.map((d) => d.metadata?.name)).toEqual(['test']); // one endpoint per pipeline
  expect(deployments[0]!.status).toMatchObject({ replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1 });
  const pods = (await clients.core.listNamespacedPod({ namespace: NS, labelSelector: 'tandem.dev/deployment=test' })).items;
  expect(pods).toHaveLength(1);
  expect(pods[0]!.spec!.nodeName).toBe('gpu-node-1');
  expect(pods[0]!.status!.podIP).toMatch(/^127\./);
  expect(lb.served.get(pods[0]!.metadata!.name!)).toBeGreaterThan(0); // the gates reached this pod
  expect(new LocalServingBackend(home).list()).toEqual([]); // nothing served locally
  expect((await h.status()).stages.deploy).toMatchObject({ status: 'completed', runtime: 'kubernetes' });
});

test('a preprocess Job that exits 3 on every attempt fails the stage naming the exit code; each attempt was its own Job', async () => {
  const stages = { preprocess: { ...onKubernetes({ [KWOK_ANNOTATIONS.exitCodes]: '3' }), retry: { maxAttempts: 2, initialInterval: '100ms' } } };
  const h = await w.tandem.launch(spec({ stages }), { id: 'k8s-cp-pre-fail', tuning: { pollMaxMs: 300 } });
  const err = (await h.result().catch((e: unknown) => e)) as WorkflowFailedError;
  expect(err).toBeInstanceOf(WorkflowFailedError);
  expect(err.cause?.message).toMatch(/stage preprocess failed: preprocess job \S+-preprocess-2 ended FAILED.*exit(ed)? (code )?3/);
  const jobs = await jobsNamed('-preprocess-');
  const mine = jobs.filter((j) => j.metadata!.name!.includes('k8s-cp-pre-fail'));
  expect(mine.map((j) => j.metadata!.name!.replace(/^.*-preprocess-/, '')).sort()).toEqual(['1', '2']);
  for (const j of mine) expect(j.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
  expect((await h.status()).stages.preprocess).toMatchObject({ status: 'failed', attempts: 2, runtime: 'kubernetes' });

  // `tandem logs`, the CLI process as an operator runs it: each attempt's pod log, read from the Job's
  // pod through the apiserver and the kubelet API (kwok's), with the workers' KUBECONFIG.
  const logs = (...args: string[]) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const env = { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), KUBECONFIG: cp.kubeconfigPath, TANDEM_K8S_NAMESPACE: cp.namespace };
      execFile(process.execPath, ['bin/tandem.js', 'logs', 'k8s-cp-pre-fail', ...args], { encoding: 'utf8', env, timeout: 60_000 }, (e, out, err) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out, err }));
    });
  const all = await logs('--stage', 'preprocess');
  expect(all).toMatchObject({ code: 0, err: '' });
  const body = 'preprocess: reading corpus\npreprocess: shard 3 is empty\n';
  expect(all.out).toMatch(new RegExp(`^==> preprocess attempt 1: kubernetes( \\S+)? job ${NS}/\\S+-preprocess-1 <==\n${body}==> preprocess attempt 2: kubernetes( \\S+)? job ${NS}/\\S+-preprocess-2 <==\n${body}$`));
  const second = await logs('--stage', 'preprocess', '--attempt', '2');
  expect(second.out.split('\n')[0]).toMatch(/^==> preprocess attempt 2: kubernetes( \S+)? job \S+-preprocess-2 <==$/);
  // The failure names the pod's last lines, read the same way.
  expect(err.cause?.message).toContain('preprocess: shard 3 is empty');
});

test('preprocess fails, is retried as a new Job and succeeds; cancelling the run during train deletes the running Job and its pods', async () => {
  const stages = {
    preprocess: { ...onKubernetes({ [KWOK_ANNOTATIONS.exitCodes]: '1,0' }), retry: { maxAttempts: 3, initialInterval: '100ms' } },
    train: { ...onKubernetes({ [KWOK_ANNOTATIONS.run]: '10m' }), steps: 20, checkpointEvery: 10 },
  };
  const h = await w.tandem.launch(spec({ stages }), { id: 'k8s-cp-pre-retry', tuning: { pollMaxMs: 300 } });
  const train = await waitFor('the train Job to run', async () => {
    const st = await h.status();
    return st.stages.train?.status === 'running' && st.stages.train.jobId ? st.stages.train.jobId : undefined;
  }, 60_000, 200);
  const st = await h.status();
  expect(st.stages.preprocess).toMatchObject({ status: 'completed', attempts: 2, runtime: 'kubernetes' });
  const pre = (await jobsNamed('k8s-cp-pre-retry')).filter((j) => j.metadata!.name!.includes('-preprocess-'));
  const outcome = (n: string) => pre.find((j) => j.metadata!.name!.endsWith(`-preprocess-${n}`))?.status?.conditions?.find((c) => c.status === 'True' && (c.type === 'Failed' || c.type === 'Complete'))?.type;
  expect([outcome('1'), outcome('2')]).toEqual(['Failed', 'Complete']);
  const trainName = train.split('/')[1]!;
  await waitFor('the train pod', async () => ((await podsOf(trainName)).length === 1 ? true : undefined), 30_000);

  await h.cancel();
  expect(await h.result().catch((e: unknown) => e)).toBeInstanceOf(WorkflowFailedError);
  expect((await h.status()).phase).toBe('cancelled');
  await waitFor('the train Job to be deleted', async () => ((await jobsNamed(trainName)).length === 0 ? true : undefined), 30_000);
  await waitFor('its pods to be gone', async () => ((await podsOf(trainName)).length === 0 ? true : undefined), 30_000);
});
