// Pod, resource and HTTP inputs of the Argo interpreter (workflows/argo/pods.ts), without a server.
import { httpOutcome, httpRequest, podInput, podJobName, resourceInput } from '../../../workflows/argo/pods.js';

const run = { name: 'hello-abc', runId: '0f6e2a1c-1111-2222-3333-44445555aaaa', artifactRoot: '/art/' };

test('job names are unique per node, attempt and run, and safe for every target', () => {
  expect(podJobName(run, 'hello-abc', 0)).toBe('argo-hello-abc-0-0-5555aaaa');
  expect(podJobName(run, 'hello-abc-3', 2)).toBe('argo-hello-abc-3-2-5555aaaa');
  expect(podJobName({ ...run, name: 'A_B' }, 'A_B-1', 0)).toBe('argo-a-b-1-0-5555aaaa');
  expect(podJobName({ ...run, name: 'x'.repeat(200) }, 'n', 0)).toHaveLength(120);
});

test('a name too long for the targets is cut but stays unique per node, attempt and run', () => {
  const long = { ...run, name: 'w'.repeat(130) };
  const names = [
    podJobName(long, `${long.name}-1`, 0),
    podJobName(long, `${long.name}-2`, 0),
    podJobName(long, `${long.name}-1`, 1),
    podJobName({ ...long, runId: '0f6e2a1c-1111-2222-3333-44445555aaab' }, `${long.name}-1`, 0),
  ];
  expect(new Set(names).size).toBe(names.length);
  for (const n of names) {
    expect(n.length).toBeLessThanOrEqual(120);
    expect(n).toMatch(/^argo-w+-[0-9a-z]{13}$/);
  }
  expect(podJobName(long, `${long.name}-1`, 0)).toBe(podJobName({ ...long }, `${long.name}-1`, 0));
  // A run recorded before ARGO_PATCHES.podNames keeps its plain cut; names that fit never change.
  expect(podJobName({ ...long, hashLongNames: () => false }, `${long.name}-1`, 0)).toBe(`argo-${'w'.repeat(115)}`);
  let asked = false;
  expect(podJobName({ ...run, hashLongNames: () => (asked = true) }, 'hello-abc-3', 2)).toBe('argo-hello-abc-3-2-5555aaaa');
  expect(asked).toBe(false);
});

test('a container template becomes a substituted pod input', () => {
  const tmpl = {
    name: 'main',
    activeDeadlineSeconds: '90',
    container: {
      image: 'alpine:{{inputs.parameters.tag}}',
      command: ['sh', '-c'],
      args: ['echo {{inputs.parameters.msg}}'],
      workingDir: '/w',
      env: [
        { name: 'PLAIN', value: '{{inputs.parameters.msg}}' },
        { name: 'SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
        { name: 'CM', valueFrom: { configMapKeyRef: { name: 'c', key: 'k', optional: true } } },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'OTHER', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      ],
    },
    outputs: {
      parameters: [{ name: 'out', valueFrom: { path: '/tmp/out', default: 'd' } }, { name: 'expr', valueFrom: { expression: '1' } }],
      artifacts: [{ name: 'a', path: '/tmp/a', optional: true }, { name: 'b', from: 'x' }],
    },
  };
  const scope = { 'inputs.parameters.tag': '3', 'inputs.parameters.msg': 'hi' };
  const artifacts = [{ name: 'in', path: '/in', from: '/art/x' }];
  const pod = podInput(tmpl, scope, 'hello-abc-2', artifacts, 1, run);
  expect(pod).toEqual({
    jobName: 'argo-hello-abc-2-1-5555aaaa',
    target: 'local',
    templateName: 'main',
    kind: 'container',
    image: 'alpine:3',
    command: ['sh', '-c'],
    args: ['echo hi'],
    source: undefined,
    env: { PLAIN: 'hi', POD: 'hello-abc-2', OTHER: '' },
    envFrom: [
      { name: 'SECRET', secret: 's', key: 'k', optional: false },
      { name: 'CM', configMap: 'c', key: 'k', optional: true },
    ],
    workingDir: '/w',
    timeoutMs: 90_000,
    inputArtifacts: artifacts,
    outputParameters: [{ name: 'out', path: '/tmp/out', default: 'd' }],
    outputArtifacts: [{ name: 'a', path: '/tmp/a', optional: true }],
    artifactPrefix: '/art/hello-abc/hello-abc-2',
    slurm: undefined,
    slurmFallback: undefined,
  });
  // The activity input is recorded in history: its key order is part of the command.
  expect(Object.keys(pod).slice(0, 4)).toEqual(['jobName', 'target', 'templateName', 'kind']);
});

test('scripts, Slurm plugins and target annotations', () => {
  const script = podInput({ name: 's', script: { image: 'python', source: 'print({{x}})' } }, { x: '1' }, 'r', [], 0, { name: 'r', runId: 'abc' });
  expect(script).toMatchObject({ kind: 'script', source: 'print(1)', command: [], args: [], jobName: 'argo-r-0-0-abc', artifactPrefix: 'r/r' });
  expect(script.annotations).toBeUndefined();
  const slurm = podInput({ name: 'p', plugin: { slurm: { partition: 'gpu' } }, metadata: { annotations: { 'tandem.io/slurm-fallback': 'local' } } }, {}, 'r-1', [], 0, run);
  expect(slurm).toMatchObject({ kind: 'plugin', target: 'slurm', slurm: { partition: 'gpu' }, slurmFallback: 'local', annotations: { 'tandem.io/slurm-fallback': 'local' } });
  const k8s = podInput({ name: 'k', container: { image: 'a' }, timeout: '1m', metadata: { annotations: { 'tandem.io/target': 'kubernetes', 'tandem.io/slurm-fallback': 'fail' } } }, {}, 'r-1', [], 0, run);
  expect(k8s).toMatchObject({ target: 'kubernetes', slurmFallback: 'fail', timeoutMs: 60_000 });
});

test('a resource template’s action and its jsonPath/jqFilter outputs', () => {
  const tmpl = {
    name: 'r',
    resource: { action: 'create', manifest: 'name: {{n}}', flags: ['--x={{n}}'], successCondition: 'status.ok == {{n}}' },
    outputs: { parameters: [{ name: 'uid', valueFrom: { jsonPath: '{.metadata.uid}' } }, { name: 'q', valueFrom: { jqFilter: '.a', default: 0 } }, { name: 'p', valueFrom: { path: '/x' } }] },
  };
  expect(resourceInput(tmpl, { n: 'v' })).toEqual({
    manifest: 'name: v',
    action: 'create',
    mergeStrategy: undefined,
    flags: ['--x=v'],
    successCondition: 'status.ok == v',
    failureCondition: undefined,
    outputParameters: [
      { name: 'uid', jsonPath: '{.metadata.uid}', jqFilter: undefined, default: undefined },
      { name: 'q', jsonPath: undefined, jqFilter: '.a', default: '0' },
    ],
  });
  expect(resourceInput({ resource: { action: 'delete' } }, {}).manifest).toBe('');
});

test('HTTP requests and their success condition', () => {
  const h = { url: 'http://x/{{a}}', headers: [{ name: 'A', value: 'b' }, { name: 'Skip' }], timeoutSeconds: 5, body: 'b' };
  expect(httpRequest(h)).toEqual({ url: 'http://x/{{a}}', method: 'GET', headers: { A: 'b' }, body: 'b', timeoutMs: 5000 });
  const res = (statusCode: number) => ({ statusCode, body: '{}', headers: {} });
  expect(httpOutcome({}, res(204))).toEqual({ ok: true, message: undefined });
  expect(httpOutcome({}, res(500))).toEqual({ ok: false, message: 'HTTP 500' });
  expect(httpOutcome({ successCondition: 'response.statusCode == 404' }, res(404)).ok).toBe(true);
  expect(httpOutcome({ successCondition: 'response.statusCode == 200' }, res(404))).toEqual({ ok: false, message: "HTTP 404: successCondition 'response.statusCode == 200' false" });
});
