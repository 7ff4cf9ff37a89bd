// Opt-in: the same Job and serving scenarios against a real cluster (npm run test:k8s-real). Needs
// KUBECONFIG; TANDEM_K8S_NAMESPACE (default "default") must exist and allow Jobs, Deployments and
// Services. The serving scenario also needs TANDEM_K8S_VLLM_MODEL (a small HF model id, e.g.
// "Qwen/Qwen2.5-0.5B-Instruct") and a node with an NVIDIA GPU; the worker must reach the Service
// (run it in-cluster, or set TANDEM_K8S_SERVICE_TYPE=LoadBalancer on a cluster with a load balancer).
import { KubeClients } from '../../backends/kubernetes/client.js';
import { KubernetesJobBackend } from '../../backends/kubernetes/jobs.js';
import { KubernetesServingBackend } from '../../backends/kubernetes/serving.js';
import { checkReadiness } from '../../activities/readiness.js';
import { ResourcesSchema } from '../../contract/pipeline.js';

const KUBECONFIG = process.env.KUBECONFIG;
const namespace = process.env.TANDEM_K8S_NAMESPACE ?? 'default';
const suffix = Date.now().toString(36);
let clients: KubeClients;

beforeAll(() => {
  // Fail loudly: a suite that silently passes without a cluster would prove nothing.
  if (!KUBECONFIG) throw new Error('KUBECONFIG is not set: the real-cluster suite needs a cluster (npm run test:k8s-real with KUBECONFIG=/path/to/kubeconfig)');
  clients = new KubeClients({ kubeconfigPath: KUBECONFIG, namespace });
});

const request = (name: string, script: string) => ({ name, command: ['sh', '-c', script], env: { GREETING: 'hello' }, resources: ResourcesSchema.parse({ memoryMB: 64 }), walltimeMs: 300_000 });

describe('real cluster', () => {
  test('a Job succeeds; a second submit adopts it', async () => {
    const jobs = new KubernetesJobBackend({ clients, defaultImage: 'busybox:1.36' });
    const ref = await jobs.submit(request(`tandem-real-ok-${suffix}`, 'echo "$GREETING"; sleep 2'));
    expect(await jobs.submit(request(`tandem-real-ok-${suffix}`, 'echo "$GREETING"; sleep 2'))).toEqual({ ...ref, adopted: true });
    expect(await jobs.awaitFinished(ref.jobId)).toMatchObject({ state: 'COMPLETED' });
    await jobs.cancel(ref.jobId);
  }, 300_000);

  test('a failing Job is FAILED with its exit code and log tail', async () => {
    const jobs = new KubernetesJobBackend({ clients, defaultImage: 'busybox:1.36' });
    const ref = await jobs.submit(request(`tandem-real-fail-${suffix}`, 'echo "bad record at line 7"; exit 3'));
    const st = await jobs.awaitFinished(ref.jobId);
    expect(st).toMatchObject({ state: 'FAILED', exitCode: 3, tail: expect.stringMatching(/bad record at line 7/) });
    await jobs.cancel(ref.jobId);
  }, 300_000);

  test('cancel deletes a running Job and its pods', async () => {
    const jobs = new KubernetesJobBackend({ clients, defaultImage: 'busybox:1.36' });
    const ref = await jobs.submit(request(`tandem-real-cancel-${suffix}`, 'sleep 600'));
    await jobs.cancel(ref.jobId);
    expect(await jobs.awaitFinished(ref.jobId)).toMatchObject({ state: 'CANCELLED' });
  }, 300_000);

  test('vLLM: deploy, roll out, pass the gates, tear down', async () => {
    const model = process.env.TANDEM_K8S_VLLM_MODEL;
    if (!model) throw new Error('TANDEM_K8S_VLLM_MODEL is not set: the serving scenario needs a small model id and a GPU node');
    const serving = new KubernetesServingBackend({ clients, serviceType: (process.env.TANDEM_K8S_SERVICE_TYPE as 'LoadBalancer' | undefined) ?? 'ClusterIP' });
    const name = `tandem-real-vllm-${suffix}`;
    try {
      const rev = await serving.apply({ name, pipeline: 'real', model: 'tandem/real', checkpoint: model, kubernetes: { vllm: { model, gpuMemoryUtilization: 0.8, maxNumSeqs: 8, maxModelLen: 2048 } } });
      const state = await serving.awaitRollout(rev);
      const ready = await checkReadiness({ deployment: { runtime: 'kubernetes', name, endpoint: state.endpoint, model: 'tandem/real', checkpoint: model, adopted: false }, prompt: 'Hello', timeoutMs: 120_000 }, { heartbeat() {}, sleep: (ms) => new Promise((r) => setTimeout(r, Number(ms))) });
      expect(ready.models).toContain('tandem/real');
    } finally {
      await serving.teardown(namespace, name);
    }
  }, 1_200_000);
});
