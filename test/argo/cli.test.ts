// `tandem argo …` as users run it: a separate process (asynchronous, so the in-process worker keeps
// running), its exit codes, its errors, and the node tree `submit --watch` prints.
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { createArgoActivities } from '../../activities/argo/index.js';
import { address, sharedBundle, tempDir, uniqueQueue } from '../helpers.js';
import { tandemSinks } from '../../observe/sinks.js';

function tandem(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), ...env }, timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}

test('argo lint: exit 0 on valid files, 1 with the errors (file, line, path) otherwise', async () => {
  const ok = await tandem(['argo', 'lint', 'templates/argo/hybrid-training.yaml', 'templates/argo/molecular-dynamics.yaml']);
  expect(ok).toMatchObject({ code: 0, err: '' });
  expect(ok.out).toBe('templates/argo/hybrid-training.yaml: no linting errors found\ntemplates/argo/molecular-dynamics.yaml: no linting errors found\n');
  const bad = await tandem(['argo', 'lint', 'templates/argo/hybrid-training.yaml', 'test/argo/invalid/unknown-template.yaml']);
  expect(bad.code).toBe(1);
  expect(bad.out).toBe('templates/argo/hybrid-training.yaml: no linting errors found\n');
  expect(bad.err).toMatch(/^test\/argo\/invalid\/unknown-template\.yaml:\d+: templates\.\S+/m);
  expect(bad.err).toMatch(/not found/);
}, 60_000);

test('argo submit --watch prints the node tree with phases; -p reaches the workflow; a bad -p starts nothing', async () => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* installed by another file in this process */
  }
  const taskQueue = uniqueQueue('argo-cli');
  const workerHome = tempDir('argo-cli-home');
  const connection = await NativeConnection.connect({ address: address() });
  const worker = await Worker.create({
    sinks: tandemSinks({ record: false }), // workflows/observe.ts calls them; this worker serves no metrics
    connection,
    taskQueue,
    workflowBundle: await sharedBundle('argo', () => bundleWorkflowCode({ workflowsPath: join(process.cwd(), 'workflows/argo/index.ts'), logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } })),
    activities: createArgoActivities({ home: workerHome, pollInitialMs: 20, pollMaxMs: 200 }),
  });
  const running = worker.run();
  const env = { TANDEM_TASK_QUEUE: taskQueue };
  try {
    const r = await tandem(['argo', 'submit', 'templates/argo/molecular-dynamics.yaml', '--name', `md-cli-${taskQueue.slice(-8)}`, '-p', 'prep-steps=2', '-p', 'slurm-nodes=16', '-p', 'post-steps=1', '-p', 'md-steps=10', '--watch'], env);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe(`Name: md-cli-${taskQueue.slice(-8)}`);
    expect(r.out).toMatch(/^Status: {14}Succeeded$/m);
    const row = (label: string) => lines.find((l) => l.includes(` ${label} `) || l.endsWith(` ${label}`));
    expect(row('prepare(0:0)')).toMatch(/[├└]─ ✔ prepare\(0:0\)\s+prepare\s+md-cli-\S+\s+\d+s/);
    expect(row('prepare(1:1)')).toMatch(/✔ prepare\(1:1\)/);
    expect(row('simulate')).toMatch(/✔ simulate\s+simulate\s+md-cli-\S+\s+\d+s\s+slurm: no Slurm target on this worker; ran locally \(16 nodes requested\)$/);
    expect(row('report')).toMatch(/✔ report\s+report/);
    // -o json: the Workflow with Argo's status shape (nodes by id, graph edges as children).
    const got = await tandem(['argo', 'get', `md-cli-${taskQueue.slice(-8)}`, '-o', 'json'], env);
    expect(got.code).toBe(0);
    const shaped = JSON.parse(got.out) as { kind: string; status: { phase: string; nodes: Record<string, { id: string; type: string; displayName: string; templateName?: string; boundaryID?: string; children?: string[] }> } };
    const nodes = Object.values(shaped.status.nodes);
    const root = shaped.status.nodes[`md-cli-${taskQueue.slice(-8)}`]!;
    const first = nodes.find((n) => n.displayName === '[0]')!;
    expect({ kind: shaped.kind, phase: shaped.status.phase, type: root.type, children: root.children }).toEqual({ kind: 'Workflow', phase: 'Succeeded', type: 'Steps', children: [first.id] });
    const item = nodes.find((n) => n.displayName === 'prepare(1:1)')!;
    expect(item).toMatchObject({ type: 'Pod', templateName: 'prepare', boundaryID: root.id });
    expect(first.children).toContain(item.id);
    expect(item.children).toEqual([nodes.find((n) => n.displayName === '[1]')!.id]);
    for (const [id, n] of Object.entries(shaped.status.nodes)) expect(n.id).toBe(id);
    // logs: from the worker's home (--home), each line under its pod; under another home it says so and exits 1.
    const logs = await tandem(['argo', 'logs', `md-cli-${taskQueue.slice(-8)}`, '--home', workerHome], env);
    expect(logs.code).toBe(0);
    expect(logs.out).toMatch(new RegExp(`^md-cli-${taskQueue.slice(-8)}-\\S+: \\S`, 'm'));
    const elsewhere = await tandem(['argo', 'logs', `md-cli-${taskQueue.slice(-8)}`, '--home', tempDir('argo-cli-other-home')], env);
    expect(elsewhere).toMatchObject({ code: 1, out: '' });
    expect(elsewhere.err).toMatch(/^tandem: no output of md-cli-\S+'s \d+ pod\(s\) under .*argo-cli-other-home.*: its pods ran on a worker with another TANDEM_HOME/);
    // Fields Argo acts on and the interpreter does not are named before the run starts, not ignored silently.
    const dir = tempDir('argo-cli-notes');
    writeFileSync(
      join(dir, 'gc.yaml'),
      'apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: gc-}\nspec:\n  entrypoint: main\n  ttlStrategy: {secondsAfterCompletion: 10}\n  podGC: {strategy: OnPodCompletion}\n  archiveLogs: true\n  hooks:\n    running: {template: main, expression: \'workflow.status == "Running"\'}\n  templates:\n  - name: main\n    container: {image: alpine, command: [echo, hi]}\n',
    );
    const noted = await tandem(['argo', 'submit', join(dir, 'gc.yaml'), '--watch'], env);
    expect(noted.code).toBe(0);
    expect(noted.err.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^note: spec\.ttlStrategy is not applied/),
      expect.stringMatching(/^note: spec\.podGC is not applied/),
      expect.stringMatching(/^note: spec\.archiveLogs is not applied/),
    ]);
    expect(noted.out).toMatch(/^Status: {14}Succeeded$/m);
    // A file of several Workflows: each is submitted (as `argo submit` does), each watched to its end.
    const wf = (n: string, code: number) => `apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: ${n}-}\nspec:\n  entrypoint: main\n  templates:\n  - name: main\n    container: {image: alpine, command: [sh, -c, "exit ${code}"]}\n`;
    writeFileSync(join(dir, 'two.yaml'), `${wf('first', 0)}---\n${wf('second', 3)}`);
    const two = await tandem(['argo', 'submit', join(dir, 'two.yaml'), '--watch'], env);
    expect(two.out.match(/^Name: \S+$/gm)).toEqual([expect.stringMatching(/^Name: first-/), expect.stringMatching(/^Name: second-/)]); // as each started
    expect(two.out.match(/^Status: +(Succeeded|Failed)$/gm)).toEqual([expect.stringMatching(/Succeeded$/), expect.stringMatching(/Failed$/)]);
    expect(two.code).toBe(1); // one of them failed
    const named = await tandem(['argo', 'submit', join(dir, 'two.yaml'), '--name', 'x'], env);
    expect(named.code).toBe(1);
    expect(named.err).toMatch(/--name names one workflow, but .*two\.yaml has 2 to submit/);
    // -p with an undeclared name: lint fails, exit non-zero, and nothing runs.
    const bad = await tandem(['argo', 'submit', 'templates/argo/molecular-dynamics.yaml', '-p', 'slurm-node=2'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/unknown workflow parameter "slurm-node"/);
    expect(bad.out).toBe('');
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    rmSync(`/tmp/md-cli-${taskQueue.slice(-8)}`, { recursive: true, force: true });
  }
}, 90_000);

test('argo lint of a file with no Argo manifest exits non-zero with a reason', async () => {
  const dir = tempDir('argo-cli');
  writeFileSync(join(dir, 'empty.yaml'), '');
  const r = await tandem(['argo', 'lint', join(dir, 'empty.yaml')]);
  expect(r.code).not.toBe(0);
  expect(r.err).not.toBe('');
}, 30_000);

test('argo lint of a YAML alias bomb exits 1 like any lint error, naming the file and line', async () => {
  const dir = tempDir('argo-cli-bomb');
  const file = join(dir, 'bomb.yaml');
  const rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...['b', 'c', 'd', 'e'].map((k, i) => `${k}: ${k === 'e' ? '' : `&${k} `}[${Array(9).fill(`*${'abcd'[i]}`).join(',')}]`)];
  writeFileSync(file, `apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: bomb-}\nspec:\n  entrypoint: main\n${rows.map((r) => `  ${r}\n`).join('')}  templates:\n  - name: main\n    container: {image: alpine, command: [echo, hi]}\n`);
  const r = await tandem(['argo', 'lint', file]);
  expect(r.code).toBe(1);
  expect(r.err).toBe(`${file}:8: YAML aliases expand beyond 1000 nodes (refused as a resource exhaustion attack)\n`);
}, 30_000);

test('argo lint of a directory: its YAML files, templateRefs resolved from any of them whatever the order, other kinds passed over; nothing at all to lint is an error', async () => {
  const dir = tempDir('argo-cli-dir');
  // a-caller.yaml comes first in name order and names a template only z-library.yaml holds (`argo lint --offline`).
  writeFileSync(join(dir, 'a-caller.yaml'), 'apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: caller-}\nspec:\n  entrypoint: main\n  templates:\n  - name: main\n    steps:\n    - - {name: s, templateRef: {name: lib, template: echo}}\n');
  writeFileSync(join(dir, 'z-library.yaml'), 'apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: lib}\nspec:\n  templates:\n  - name: echo\n    container: {image: alpine, command: [echo, hi]}\n');
  writeFileSync(join(dir, 'm-config.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n');
  const r = await tandem(['argo', 'lint', dir]);
  expect(r).toMatchObject({ code: 0, out: `${join(dir, 'a-caller.yaml')}: no linting errors found\n${join(dir, 'z-library.yaml')}: no linting errors found\n` });
  expect(r.err).toBe(`${join(dir, 'm-config.yaml')}: note: no Argo Workflows manifests found (only ConfigMap): nothing to lint\n`);
  const none = tempDir('argo-cli-none');
  writeFileSync(join(none, 'c.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n');
  writeFileSync(join(none, 'd.yml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n');
  const nothing = await tandem(['argo', 'lint', none]);
  expect(nothing.code).toBe(1);
  expect(nothing.err).toMatch(new RegExp(`found nothing to lint in ${none}: no file holds an Argo Workflows manifest\\n$`));
}, 30_000);

test('argo lint --kinds lints only the kinds named (as argo lint --kinds does); an unknown kind is refused before any file is read', async () => {
  const dir = tempDir('argo-cli-kinds');
  // Argo v3.7.9's e2e: cron/cron-and-malformed-template.yaml holds a good CronWorkflow and a broken WorkflowTemplate.
  const file = join(dir, 'cron-and-template.yaml');
  writeFileSync(file, 'apiVersion: argoproj.io/v1alpha1\nkind: CronWorkflow\nmetadata: {name: c}\nspec:\n  schedules: ["* * * * *"]\n  workflowSpec:\n    entrypoint: main\n    templates:\n    - {name: main, container: {image: alpine}}\n---\napiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: t}\nspec:\n  entrypoints: main\n');
  expect(await tandem(['argo', 'lint', '--kinds', 'cronwf', file])).toMatchObject({ code: 0, out: `${file}: no linting errors found\n` });
  const all = await tandem(['argo', 'lint', file]);
  expect(all).toMatchObject({ code: 1, err: `${file}:15: spec.entrypoints: unknown field "entrypoints"\n` });
  const none = await tandem(['argo', 'lint', '--kinds=workflows,cwftmpl', file]);
  expect(none).toMatchObject({ code: 1, err: `${file}: no Workflow or ClusterWorkflowTemplate found (only CronWorkflow, WorkflowTemplate)\n` });
  const bad = await tandem(['argo', 'lint', '--kinds', 'workflow', join(dir, 'missing.yaml')]);
  expect(bad.code).toBe(1);
  expect(bad.err).toContain('unknown kind "workflow" in --kinds: use workflows, wf, workflowtemplates, wftmpl, cronworkflows, cronwf, clusterworkflowtemplates, cwftmpl or all');
  expect(bad.err).not.toContain('missing.yaml');
}, 30_000);
