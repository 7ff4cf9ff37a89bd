// [no cluster] stages.<stage>.kubernetes: defaults, and refusals that name the field and say why.
import { KubernetesOptionsError, parseKubernetesOptions } from '../../contract/kubernetes.js';
import { validatePipelineSpec } from '../../contract/parse.js';
import { InputError } from '../../contract/input-error.js';

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
    expect(o.vllm).toEqual({ model: 'meta-llama/Llama-3.1-8B-Instruct', tensorParallelSize: 1, gpuMemoryUtilization: 0.9, port: 8000, replicas: 1, progressDeadlineSeconds: 600, revisionHistoryLimit: 5 });
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

describe('Kubernetes stage options: privilege', () => {
  test('root, privilege escalation and unconfined seccomp/AppArmor are refused, naming the field', () => {
    expect(issues({ securityContext: { runAsUser: 0 } }, 'stages.train.kubernetes')).toEqual([{ path: 'stages.train.kubernetes.securityContext.runAsUser', message: expect.stringMatching(/^must not be 0: pods do not run as root/) }]);
    expect(issues({ securityContext: { allowPrivilegeEscalation: true } })).toEqual([{ path: 'kubernetes.securityContext.allowPrivilegeEscalation', message: expect.stringMatching(/^allowPrivilegeEscalation: true is not allowed/) }]);
    const confinement = issues({ annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.apparmor.security.beta.kubernetes.io/main': 'Unconfined', 'prometheus.io/scrape': 'true' } });
    expect(confinement.map((i) => i.path)).toEqual(['kubernetes.annotations.seccomp.security.alpha.kubernetes.io/pod', 'kubernetes.annotations.container.apparmor.security.beta.kubernetes.io/main']);
    expect(confinement[0]!.message).toMatch(/must not be "unconfined"/);
    // Unprivileged settings and a confined profile pass.
    expect(parseKubernetesOptions({ securityContext: { runAsUser: 1000, allowPrivilegeEscalation: false }, annotations: { 'container.apparmor.security.beta.kubernetes.io/main': 'runtime/default' } }).securityContext).toEqual({ runAsUser: 1000, allowPrivilegeEscalation: false });
  });

  test('mounts over system directories, and paths with "." or ".." segments, are refused', () => {
    const secret = (mountPath: string) => ({ volumes: [{ name: 'creds', mountPath, secret: { secretName: 'creds' } }] });
    for (const p of ['/etc', '/', '/usr/bin', '/var/run/secrets/kubernetes.io/serviceaccount', '/proc/sys', '/dev']) {
      expect(issues(secret(p))).toEqual([{ path: 'kubernetes.volumes[0].mountPath', message: expect.stringMatching(/^must not be .*: a volume there would replace the container's system files/) }]);
    }
    expect(issues(secret('/data/../etc'))).toEqual([{ path: 'kubernetes.volumes[0].mountPath', message: 'must not contain "." or ".." segments: give the normalised absolute path' }]);
    expect(issues(secret('/data/./x'))[0]!.message).toMatch(/"\." or "\.\." segments/);
    expect(issues(secret('//etc'))[0]!.message).toMatch(/normalised absolute path/);
    expect(parseKubernetesOptions(secret('/etc/tandem/creds')).volumes![0]!.mountPath).toBe('/etc/tandem/creds');
  });

  test('system namespaces, administrator service accounts and system priority classes are refused by default', () => {
    for (const namespace of ['kube-system', 'kube-public', 'kube-node-lease', 'kueue-system']) expect(issues({ namespace })).toEqual([{ path: 'kubernetes.namespace', message: expect.stringContaining(`namespace "${namespace}" belongs to`) }]);
    for (const serviceAccountName of ['cluster-admin', 'admin', 'tandem-admin', 'root']) expect(issues({ serviceAccountName })).toEqual([{ path: 'kubernetes.serviceAccountName', message: expect.stringContaining(`service account "${serviceAccountName}" looks like an administrator's`) }]);
    expect(issues({ priorityClassName: 'system-cluster-critical' })).toEqual([{ path: 'kubernetes.priorityClassName', message: expect.stringMatching(/reserved for the cluster's own critical components/) }]);
    expect(parseKubernetesOptions({ namespace: 'ml', serviceAccountName: 'tandem-runner', priorityClassName: 'batch-low' })).toMatchObject({ namespace: 'ml', serviceAccountName: 'tandem-runner', priorityClassName: 'batch-low' });
  });

  test('a site policy\'s lists are the complete set allowed there', () => {
    const policy = { namespaces: ['team-a', 'kueue-system'], serviceAccounts: ['trainer'], priorityClasses: ['gpu-high'] };
    expect(parseKubernetesOptions({ namespace: 'kueue-system', serviceAccountName: 'trainer', priorityClassName: 'gpu-high' }, 'kubernetes', policy)).toMatchObject({ namespace: 'kueue-system' });
    let err: unknown;
    try {
      parseKubernetesOptions({ namespace: 'ml', serviceAccountName: 'default', priorityClassName: 'batch-low' }, 'stages.train.kubernetes', policy);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KubernetesOptionsError);
    expect((err as KubernetesOptionsError).issues).toEqual([
      { path: 'stages.train.kubernetes.namespace', message: '"ml" is not allowed here; allowed: "team-a", "kueue-system"' },
      { path: 'stages.train.kubernetes.serviceAccountName', message: '"default" is not allowed here; allowed: "trainer"' },
      { path: 'stages.train.kubernetes.priorityClassName', message: '"batch-low" is not allowed here; allowed: "gpu-high"' },
    ]);
  });

  test('the pipeline spec refuses them too, before anything starts', () => {
    const e = (() => {
      try {
        validatePipelineSpec({ name: 'k', stages: { train: { runtime: 'kubernetes', kubernetes: { namespace: 'kube-system', securityContext: { runAsUser: 0 } } } } });
      } catch (x) {
        return x as InputError;
      }
      throw new Error('expected an error');
    })();
    expect(e).toBeInstanceOf(InputError);
    expect(e.issues.map((i) => i.path).sort()).toEqual(['stages.train.kubernetes.namespace', 'stages.train.kubernetes.securityContext.runAsUser']);
  });
});
