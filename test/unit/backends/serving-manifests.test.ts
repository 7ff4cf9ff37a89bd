// Pure pieces of serving on Kubernetes: where the pod finds the checkpoint (servableModel), the
// revision's labels and annotations, and who may roll out to an existing endpoint (ownershipProblem).
import { servableModel, servingManifests } from '../../../backends/kubernetes/manifests.js';
import { ownershipProblem } from '../../../backends/kubernetes/serving.js';
import { KubernetesOptionsError, parseKubernetesOptions } from '../../../contract/kubernetes.js';

const opts = (o: object) => parseKubernetesOptions(o);

describe('servableModel', () => {
  test('maps the checkpoint from the worker\'s shared path to the read-only claim in the pod', () => {
    const s = servableModel(opts({ modelVolume: { claimName: 'shared', subPath: 'tandem', workerPath: '/srv/tandem/' } }), '/srv/tandem/runs/r/checkpoints/step-20');
    expect(s).toEqual({ model: '/mnt/models/runs/r/checkpoints/step-20', volume: { name: 'model', persistentVolumeClaim: { claimName: 'shared', readOnly: true } }, mount: { name: 'model', mountPath: '/mnt/models', readOnly: true, subPath: 'tandem' } });
  });

  test('a model id wins over the checkpoint', () => {
    expect(servableModel(opts({ vllm: { model: 'org/m' } }), '/home/w/ckpt').model).toBe('org/m');
  });

  test.each([
    [{}, '/home/w/ckpt', 'stages.deploy.kubernetes.modelVolume', /is required: the checkpoint \/home\/w\/ckpt is on the worker's disk/],
    [{ modelVolume: { claimName: 'c', workerPath: '/srv/tandem' } }, '/srv/tandem-other/ckpt', 'stages.deploy.kubernetes.modelVolume.workerPath', /not under \/srv\/tandem/],
    [{ modelVolume: { claimName: 'c', workerPath: '/srv/tandem' } }, '/srv/tandem/../etc/ckpt', 'stages.deploy.kubernetes.modelVolume.workerPath', /not under/],
  ])('refuses %j for %s naming %s', (o, checkpoint, path, message) => {
    let err: unknown;
    try {
      servableModel(opts(o), checkpoint, 'stages.deploy.kubernetes');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KubernetesOptionsError);
    expect((err as KubernetesOptionsError).issues).toEqual([{ path, message: expect.stringMatching(message) }]);
  });
});

const manifests = (run: string, checkpoint = '/srv/t/c1') =>
  servingManifests({ name: 'chat', namespace: 'ns', pipeline: 'chat', tenant: 'research', run, model: 'm', checkpoint, image: 'vllm/vllm-openai:v0.10.1', options: opts({ modelVolume: { claimName: 'c', workerPath: '/srv/t' } }), serviceType: 'ClusterIP' });

test('each run is a new revision of the same Deployment; the pod template says where it came from', () => {
  const a = manifests('run-a');
  const b = manifests('run-b');
  expect(a.deployment.spec!.selector).toEqual(b.deployment.spec!.selector);
  expect(a.templateHash).not.toBe(b.templateHash);
  expect(manifests('run-a').templateHash).toBe(a.templateHash); // a retried apply is recognised
  expect(a.deployment.spec!.template.metadata).toMatchObject({ labels: { 'tandem.dev/run': 'run-a', 'tandem.dev/tenant': 'research', 'tandem.dev/pipeline': 'chat' }, annotations: { 'tandem.dev/run': 'run-a', 'tandem.dev/checkpoint': '/srv/t/c1', 'tandem.dev/tenant': 'research' } });
  expect(a.deployment.metadata!.annotations!['tandem.dev/created-by-run']).toBe('run-a');
  expect(a.deployment.spec).toMatchObject({ revisionHistoryLimit: 5, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } });
});

describe('ownershipProblem', () => {
  const own = manifests('run-a').deployment;
  const req = { name: 'chat', pipeline: 'chat', tenant: 'research' };
  test('the same tenant and pipeline may roll out', () => expect(ownershipProblem('Deployment', own, req)).toBeUndefined());
  test('another tenant or pipeline may not, and is told which field to change', () => {
    expect(ownershipProblem('Deployment', own, { ...req, tenant: 'other' })).toMatch(/Deployment ns\/chat belongs to pipeline "chat" of tenant "research", not to pipeline "chat" of tenant "other".*stages\.deploy\.name/);
    expect(ownershipProblem('Deployment', own, { ...req, pipeline: 'p2' })).toMatch(/not to pipeline "p2"/);
  });
  test('an object Tandem does not manage is never taken over', () => {
    expect(ownershipProblem('Service', { metadata: { name: 'chat', namespace: 'ns' } }, req)).toMatch(/Service ns\/chat exists and is not managed by Tandem/);
  });
});
