// The executor plugin's pure half (argo/executor-plugin/protocol.ts): reading `plugin.tandem`, the
// workflow id of a node, the run → node-result mapping, and the shipped manifest and its ConfigMap.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { readTemplate, replyFor, workflowIdFor, type ExecuteTemplateArgs, type RunObservation } from '../../../argo/executor-plugin/protocol.js';
import { RUN_ID } from '../../../contract/run-id.js';
import type { PipelineStatus, StageState } from '../../../contract/status.js';

const args = (tandem: unknown, over: Partial<ExecuteTemplateArgs['template']> = {}, uid = 'u-1'): ExecuteTemplateArgs => ({
  workflow: { metadata: { name: 'wf-abc', namespace: 'argo', uid } },
  template: { name: 'train', inputs: {}, outputs: {}, metadata: {}, plugin: { tandem }, ...over },
});
const SPEC = { name: 'p', stages: { train: { runtime: 'local', steps: 20, checkpointEvery: 10 } } };

describe('readTemplate', () => {
  test('templates of other plugins, and non-plugin templates, are not ours', () => {
    expect(readTemplate({ ...args(SPEC), template: { name: 'n', plugin: { slack: { text: 'x' } } } }).kind).toBe('foreign');
    expect(readTemplate({ ...args(SPEC), template: { name: 'n' } }).kind).toBe('foreign');
  });

  test('an inline spec, as a mapping or as YAML text, becomes a validated spec', () => {
    const a = readTemplate(args({ pipeline: SPEC }));
    const b = readTemplate(args({ pipeline: 'name: p\nstages:\n  train: { runtime: local, steps: 20, checkpointEvery: 10 }\n', requeue: '2m' }));
    expect(a).toMatchObject({ kind: 'tandem', requeueMs: 30_000, spec: { name: 'p', stages: { train: { steps: 20 } } } });
    expect(b).toMatchObject({ kind: 'tandem', requeueMs: 120_000, spec: { name: 'p', stages: { train: { steps: 20 } } } });
  });

  test.each([
    [{ pipeline: { ...SPEC, stages: { train: { steps: -1 } } } }, 'plugin.tandem.pipeline.stages.train.steps'],
    [{ pipeline: 'name: p\nstages:\n  train: { steps: "20" }\n' }, 'plugin.tandem.pipeline.stages.train.steps'],
    [{ pipeline: { ...SPEC, stagez: {} } }, 'unknown field "stagez"'],
    [{ pipline: SPEC }, 'plugin.tandem: unknown field "pipline"'],
    [{}, 'plugin.tandem.pipeline'],
    [{ pipeline: SPEC, requeue: 'soon' }, 'plugin.tandem.requeue'],
    ['just a string', 'plugin.tandem'],
  ])('bad input %j is a Failed node naming %s', (tandem, field) => {
    const t = readTemplate(args(tandem));
    expect(t.kind).toBe('invalid');
    expect(t.kind === 'invalid' && t.message).toContain(field);
  });
});

describe('workflowIdFor', () => {
  test('the same node always maps to the same valid id; another workflow, input or key to another', () => {
    const id = workflowIdFor(args({ pipeline: SPEC }));
    expect(id).toMatch(RUN_ID);
    expect(id).toMatch(/^argo-wf-abc-train-[0-9a-f]{16}$/);
    // Key order in the template does not matter (the agent's JSON is Go's, ours may differ).
    expect(workflowIdFor(args({ pipeline: { stages: SPEC.stages, name: 'p' } }))).toBe(id);
    expect(workflowIdFor(args({ pipeline: SPEC }, {}, 'u-2'))).not.toBe(id);
    expect(workflowIdFor(args({ pipeline: SPEC }, { inputs: { parameters: [{ name: 'i', value: '1' }] } }))).not.toBe(id);
    expect(workflowIdFor(args({ pipeline: SPEC }), 'retry-1')).not.toBe(id);
    const odd = workflowIdFor({ workflow: { metadata: { name: 'Wf.With_odd/chars' } }, template: { name: 'x'.repeat(300) } });
    expect(odd).toMatch(RUN_ID);
  });
});

const stage = (over: Partial<StageState> = {}): StageState => ({ status: 'pending', attempts: 0, ...over });
const status = (over: Partial<PipelineStatus> = {}): PipelineStatus => ({
  workflowId: 'w',
  pipeline: 'p',
  tenant: 'default',
  phase: 'running',
  stages: { preprocess: stage(), train: stage(), checkpoint: stage(), deploy: stage() },
  ...over,
});
const obs = (over: Partial<RunObservation>): RunObservation => ({ workflowId: 'w', execution: 'RUNNING', ...over });
const RESULT = { pipeline: 'p', model: 'm', endpoint: 'http://127.0.0.1:9/', checkpoint: { path: '/ck/step-20', step: 20 }, completion: 'positive', trainingAttempts: 1 };

describe('replyFor', () => {
  test('not started yet, or status not answerable: Pending, asked again after requeue', () => {
    expect(replyFor(obs({ status: status() }), 30_000)).toEqual({ node: { phase: 'Pending', message: expect.stringContaining('w') }, requeue: '30s' });
    expect(replyFor(obs({ queryError: 'no poller' }), 90_000)).toMatchObject({ node: { phase: 'Pending', message: expect.stringContaining('no poller') }, requeue: '90s' });
  });

  test('training: Running with step/total from the live progress, or the stage status', () => {
    const s = status({ stage: 'train', stages: { ...status().stages, preprocess: stage({ status: 'completed', attempts: 1 }), train: stage({ status: 'running', attempts: 2, runtime: 'slurm', site: 'daint' }) } });
    expect(replyFor(obs({ status: s, live: { step: 7, total: 20 } }), 30_000)).toEqual({
      node: { phase: 'Running', message: 'Tandem run w: stage train running (attempt 2) on slurm (daint), step 7/20', progress: '7/20' },
      requeue: '30s',
    });
    expect(replyFor(obs({ status: { ...s, phase: 'compensating', error: 'boom' } }), 30_000).node).toMatchObject({ phase: 'Running', message: expect.stringContaining('compensating after: boom') });
  });

  test('completed: Succeeded with the outputs, and no requeue', () => {
    const r = replyFor(obs({ execution: 'COMPLETED', result: RESULT, status: status({ phase: 'completed', stages: { ...status().stages, train: stage({ status: 'completed', attempts: 1, progress: { step: 20, total: 20 } }) } }) }), 30_000);
    expect(r.requeue).toBeUndefined();
    expect(r.node).toMatchObject({ phase: 'Succeeded', progress: '20/20' });
    expect(r.node!.outputs!.parameters).toEqual(
      expect.arrayContaining([
        { name: 'endpoint', value: RESULT.endpoint },
        { name: 'checkpoint', value: '/ck/step-20' },
        { name: 'completion', value: 'positive' },
        { name: 'workflow-id', value: 'w' },
      ]),
    );
    expect(JSON.parse(r.node!.outputs!.result!)).toEqual(RESULT);
    for (const p of r.node!.outputs!.parameters!) expect(p.name).toMatch(/^[-a-zA-Z0-9_]+$/); // Argo's rule
  });

  test('failed, cancelled, terminated: Failed with why, and no requeue', () => {
    expect(replyFor(obs({ execution: 'FAILED', failure: 'train failed: exit code 3' }), 30_000)).toEqual({ node: { phase: 'Failed', message: 'Tandem run w failed: train failed: exit code 3' } });
    expect(replyFor(obs({ execution: 'TIMED_OUT' }), 30_000).node).toMatchObject({ phase: 'Failed', message: expect.stringContaining('timed out') });
  });
});

describe('the shipped ExecutorPlugin manifest and its ConfigMap', () => {
  const dir = join(process.cwd(), 'templates/argo/executor-plugin');
  const manifest = parse(readFileSync(join(dir, 'plugin.yaml'), 'utf8'));
  const cm = parse(readFileSync(join(dir, 'tandem-executor-plugin-configmap.yaml'), 'utf8'));
  const container = manifest.spec.sidecar.container;

  test('has what Argo requires of a sidecar (pkg/plugins/spec Sidecar.Validate) and a locked-down securityContext', () => {
    expect(manifest).toMatchObject({ apiVersion: 'argoproj.io/v1alpha1', kind: 'ExecutorPlugin', metadata: { name: 'tandem' } });
    expect(container.ports.length).toBeGreaterThan(0);
    expect(container.resources.requests).toBeDefined();
    expect(container.resources.limits).toBeDefined();
    expect(container.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    // The server listens where the agent calls it.
    const port = container.command[container.command.indexOf('--port') + 1];
    expect(Number(port)).toBe(container.ports[0].containerPort);
  });

  test('the ConfigMap is what `argo executor-plugin build` makes of it (workflow/util/plugins ToConfigMap)', () => {
    expect(cm).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'tandem-executor-plugin', labels: { 'workflows.argoproj.io/configmap-type': 'ExecutorPlugin' }, annotations: manifest.metadata.annotations },
      data: { 'sidecar.automountServiceAccountToken': 'true', 'sidecar.automountWorkflowServiceAccountToken': 'false' },
    });
    expect(parse(cm.data['sidecar.container'])).toEqual(container);
  });

  test('the example workflow names the plugin and its inline spec reads once Argo substitutes it', () => {
    const wf = parse(readFileSync(join(dir, 'example-workflow.yaml'), 'utf8'));
    const t = wf.spec.templates.find((x: { plugin?: unknown }) => x.plugin);
    const resolved = JSON.parse(JSON.stringify(t).replaceAll('{{inputs.parameters.steps}}', '20'));
    expect(readTemplate({ workflow: { metadata: { name: 'w', uid: 'u' } }, template: resolved })).toMatchObject({ kind: 'tandem', spec: { stages: { train: { steps: 20 } } } });
  });
});
