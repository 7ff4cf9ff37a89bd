// The served model endpoint in the spec (stages.deploy.name, a DNS-1035 label) and what a vLLM pod
// can load (modelVolume, or vllm.model): refused naming the field before anything starts.
import { parsePipelineSpec, validatePipelineSpec } from '../../../contract/parse.js';
import { endpointName } from '../../../workflows/pipeline/identity.js';
import { issuesOf } from '../../spec-issues.js';

const onKubernetes = (deploy: object) => ({ name: 'chat', stages: { deploy: { runtime: 'kubernetes', ...deploy } } });
const volume = { modelVolume: { claimName: 'tandem-home', workerPath: '/srv/tandem' } };

describe('stages.deploy.name', () => {
  test.each(['9chat', 'Chat', 'chat-', 'ch_at', 'a'.repeat(64)])('%s is refused, naming the field', (name) => {
    expect(issuesOf(() => validatePipelineSpec(onKubernetes({ name, kubernetes: volume })))).toEqual([{ path: 'stages.deploy.name', message: expect.stringMatching(/DNS-1035 label|at most 63/), line: undefined }]);
  });

  test('in YAML with its line', () => {
    const text = 'name: chat\nstages:\n  deploy:\n    runtime: kubernetes\n    name: 1-endpoint\n    kubernetes: {vllm: {model: org/model}}\n';
    expect(issuesOf(() => parsePipelineSpec(text, 'p.yaml'))).toEqual([{ path: 'stages.deploy.name', message: expect.stringMatching(/starting with a letter/), line: 5 }]);
  });

  test('defaults to the pipeline, prefixed when that starts with a digit (a Service name may not)', () => {
    expect(endpointName('chat')).toBe('chat');
    expect(endpointName('7b-chat')).toBe('m-7b-chat');
    expect(endpointName('chat', 'chat-prod')).toBe('chat-prod');
  });
});

describe('what the pod loads', () => {
  test('on Kubernetes, a spec with neither a model volume nor a model id is refused naming modelVolume', () => {
    expect(issuesOf(() => validatePipelineSpec(onKubernetes({})))).toEqual([{ path: 'stages.deploy.kubernetes.modelVolume', message: expect.stringMatching(/is required on Kubernetes unless stages\.deploy\.kubernetes\.vllm\.model.*worker's disk/), line: undefined }]);
  });

  test('a model volume or a Hugging Face id is accepted; other runtimes need neither', () => {
    expect(validatePipelineSpec(onKubernetes({ kubernetes: volume })).stages.deploy.kubernetes?.modelVolume).toEqual({ claimName: 'tandem-home', workerPath: '/srv/tandem', mountPath: '/mnt/models' });
    expect(validatePipelineSpec(onKubernetes({ kubernetes: { vllm: { model: 'Qwen/Qwen2.5-0.5B-Instruct' } } })).stages.deploy.kubernetes?.vllm?.model).toBe('Qwen/Qwen2.5-0.5B-Instruct');
    expect(() => validatePipelineSpec({ name: 'chat', stages: { deploy: { runtime: 'local' } } })).not.toThrow();
  });

  test('a model path no volume of the pod mounts is refused naming vllm.model', () => {
    expect(issuesOf(() => validatePipelineSpec(onKubernetes({ kubernetes: { vllm: { model: '/weights/llama' } } })))).toEqual([{ path: 'stages.deploy.kubernetes.vllm.model', message: expect.stringMatching(/\/weights\/llama is not under any volume of the pod/), line: undefined }]);
    expect(() => validatePipelineSpec(onKubernetes({ kubernetes: { ...volume, vllm: { model: '/mnt/models/llama' } } }))).not.toThrow();
  });

  test.each([
    [{ claimName: 'Bad_Claim', workerPath: '/srv' }, 'stages.deploy.kubernetes.modelVolume.claimName'],
    [{ claimName: 'c', workerPath: 'relative' }, 'stages.deploy.kubernetes.modelVolume.workerPath'],
    [{ claimName: 'c', workerPath: '/srv', subPath: '/abs' }, 'stages.deploy.kubernetes.modelVolume.subPath'],
    [{ claimName: 'c', workerPath: '/srv', subPath: 'a/../b' }, 'stages.deploy.kubernetes.modelVolume.subPath'],
    [{ claimName: 'c', workerPath: '/srv', mountPath: '/etc' }, 'stages.deploy.kubernetes.modelVolume.mountPath'],
  ])('modelVolume %j is refused at %s', (modelVolume, path) => {
    expect(issuesOf(() => validatePipelineSpec(onKubernetes({ kubernetes: { modelVolume } })))).toEqual([expect.objectContaining({ path })]);
  });
});
