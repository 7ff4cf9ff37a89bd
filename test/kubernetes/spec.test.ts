// stages.<stage>.kubernetes: defaults, and refusals that name the field and say why.
import { KubernetesOptionsError, parseKubernetesOptions } from '../../contract/kubernetes.js';

const issues = (input: unknown, prefix?: string) => {
  try {
    parseKubernetesOptions(input, prefix);
  } catch (e) {
    if (e instanceof KubernetesOptionsError) return e.issues;
    throw e;
  }
  throw new Error('expected a KubernetesOptionsError');
};

describe('Kubernetes stage options', () => {
  test('vLLM options get their defaults; scheduling options pass through', () => {
    const o = parseKubernetesOptions({ image: 'vllm/vllm-openai:v0.10.1', queueName: 'team-a', nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' }, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }], vllm: { model: 'meta-llama/Llama-3.1-8B-Instruct' } });
    expect(o.vllm).toEqual({ model: 'meta-llama/Llama-3.1-8B-Instruct', tensorParallelSize: 1, gpuMemoryUtilization: 0.9, port: 8000, replicas: 1, progressDeadlineSeconds: 600 });
    expect(o.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
  });

  test('privileged pods, hostPath volumes, hostNetwork and hostPID are refused with the reason', () => {
    expect(issues({ securityContext: { privileged: true } }, 'stages.deploy.kubernetes')).toEqual([{ path: 'stages.deploy.kubernetes.securityContext.privileged', message: expect.stringMatching(/^privileged pods are not allowed/) }]);
    expect(issues({ volumes: [{ name: 'ok', mountPath: '/a', emptyDir: {} }, { name: 'root', mountPath: '/host', hostPath: { path: '/' } }] }, 'stages.preprocess.kubernetes')).toEqual([{ path: 'stages.preprocess.kubernetes.volumes[1].hostPath', message: expect.stringMatching(/^hostPath volumes are not allowed/) }]);
    expect(issues({ hostNetwork: true, hostPID: true }).map((i) => i.path)).toEqual(['kubernetes.hostNetwork', 'kubernetes.hostPID']);
    // privileged: false is harmless and accepted
    expect(parseKubernetesOptions({ securityContext: { privileged: false, runAsNonRoot: true } }).securityContext).toMatchObject({ runAsNonRoot: true });
  });

  test('bad values name their field: image, tolerations, vLLM numbers, unknown fields, volume sources', () => {
    expect(issues({ image: 'Bad Image!' })[0]!.path).toBe('kubernetes.image');
    expect(issues({ tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] })).toEqual([{ path: 'kubernetes.tolerations[0].value', message: 'must be empty when operator is "Exists"' }]);
    expect(issues({ vllm: { gpuMemoryUtilization: 1.5, tensorParallelSize: 0 } }).map((i) => i.path).sort()).toEqual(['kubernetes.vllm.gpuMemoryUtilization', 'kubernetes.vllm.tensorParallelSize']);
    expect(issues({ vllm: { downloadDir: 'relative/dir' } })).toEqual([{ path: 'kubernetes.vllm.downloadDir', message: 'must be an absolute path' }]);
    expect(issues({ privileged: true })).toEqual([{ path: 'kubernetes.privileged', message: 'unknown field "privileged"' }]);
    expect(issues({ volumes: [{ name: 'v', mountPath: '/v' }] })[0]!.message).toMatch(/exactly one source/);
    expect(issues({ queueName: 'Team A' })[0]!.path).toBe('kubernetes.queueName');
  });
});
