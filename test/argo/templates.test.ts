// The shipped Argo templates (templates/argo/) on the real dev server and the local runtime: they lint
// against Argo's schema, run end to end with submitted parameters, and their Slurm steps fall back to
// this host (saying so) when the worker has no Slurm target — or fail when it is told not to.
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { createArgoActivities, slurmJobSpec } from '../../activities/argo/index.js';
import { shebangCommand } from '../../argo/local-command.js';
import { ArgoClient, prepare } from '../../argo/client.js';
import { lintFile } from '../../argo/lint/validate.js';
import { resolveWorkflow } from '../../argo/resolve.js';
import { whyNotRunnable } from '../../argo/lint/runnable.js';
import type { ArgoNode, ArgoStatus } from '../../argo/lang/types.js';
import { address, tempDir, uniqueQueue } from '../helpers.js';
import { tandemSinks } from '../../observe/sinks.js';

const TEMPLATES = join(process.cwd(), 'templates/argo');
const WORKFLOWS = join(process.cwd(), 'workflows/argo/index.ts');
let bundle: Awaited<ReturnType<typeof bundleWorkflowCode>>;
let connection: NativeConnection;
const stops: (() => Promise<void>)[] = [];
const runs: string[] = [];

async function startWorker(opts: { slurmFallback?: 'local' | 'fail' } = {}): Promise<ArgoClient> {
  const taskQueue = uniqueQueue('argo-tmpl');
  const worker = await Worker.create({
    sinks: tandemSinks({ record: false }), // workflows/observe.ts calls them; this worker serves no metrics
    connection,
    taskQueue,
    workflowBundle: bundle,
    activities: createArgoActivities({ home: tempDir('argo-tmpl-home'), pollInitialMs: 20, pollMaxMs: 200, ...opts }),
  });
  const running = worker.run();
  const client = await ArgoClient.connect({ address: address(), taskQueue });
  stops.push(async () => {
    await client.close();
    worker.shutdown();
    await running;
  });
  return client;
}

beforeAll(async () => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* installed by another file in this process */
  }
  connection = await NativeConnection.connect({ address: address() });
  bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS, logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } });
});

afterAll(async () => {
  for (const s of stops) await s();
  await connection?.close();
  for (const r of runs) rmSync(join('/tmp', r), { recursive: true, force: true });
});

async function submit(client: ArgoClient, file: string, parameters: Record<string, string>): Promise<ArgoStatus> {
  const p = prepare(join(TEMPLATES, file), { parameters });
  const { id } = await client.submit(p, { parameters });
  runs.push(id);
  return client.wait(id);
}

const byDisplay = (st: ArgoStatus) => {
  const m = new Map<string, ArgoNode>();
  for (const n of Object.values(st.nodes)) m.set(n.displayName, n);
  return (name: string) => {
    const n = m.get(name);
    if (!n) throw new Error(`no node ${name} in ${[...m.keys()].join(', ')}`);
    return n;
  };
};

test('the shipped templates lint clean against Argo schema and are runnable on this host', () => {
  const files = readdirSync(TEMPLATES).filter((f) => f.endsWith('.yaml')).sort();
  expect(files).toEqual(['hybrid-training.yaml', 'molecular-dynamics.yaml']);
  for (const f of files) {
    const r = lintFile(join(TEMPLATES, f));
    expect(r.issues).toEqual([]);
    expect(whyNotRunnable(resolveWorkflow(r.documents[0]!.value, { get: () => undefined }))).toBeUndefined();
  }
  // -p with a name the workflow does not declare is a lint error: nothing starts.
  expect(() => prepare(join(TEMPLATES, 'molecular-dynamics.yaml'), { parameters: { 'slurm-node': '2' } })).toThrow(/unknown workflow parameter "slurm-node"/);
});

test('plugin.slurm resources: fields win over #SBATCH lines; shebangs pick the interpreter', () => {
  const job = slurmJobSpec({ nodes: '16', memoryMB: 512, script: '#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH -c 4\n#SBATCH --time=00:10:00\n#SBATCH --mem=2G\n#SBATCH -p debug\nsrun hostname\n' });
  expect(job).toMatchObject({ nodes: 16, cpusPerTask: 4, walltime: '00:10:00', memoryMB: 512, partition: 'debug', tasksPerNode: 1, gpusPerNode: 0 });
  expect(slurmJobSpec({ script: '#SBATCH --mem=2G\n' }).memoryMB).toBe(2048);
  expect(() => slurmJobSpec({ nodes: 'many', script: '' })).toThrow(/plugin\.slurm\.nodes/);
  expect(shebangCommand('#!/usr/bin/env python3\nprint(1)')).toEqual(['python3']);
  expect(shebangCommand('#!/bin/bash -l\n')).toEqual(['/bin/bash', '-l']);
  expect(shebangCommand('echo hi')).toEqual(['sh']);
});

test('hybrid training: preprocess steps → Slurm training (run locally) → checkpoint → deploy, with outputs', async () => {
  const client = await startWorker();
  const st = await submit(client, 'hybrid-training.yaml', { 'train-steps': '60', 'checkpoint-every': '20', 'slurm-nodes': '2', samples: '200' });
  expect(st.message).toBeUndefined();
  expect(st.phase).toBe('Succeeded');
  const node = byDisplay(st);
  const root = st.nodes[st.name]!;
  // The tree: hybrid → [preprocess] → (generate, normalize); [train]; [checkpoint]; [deploy].
  expect(root.children.map((c) => st.nodes[c]!.children.map((k) => st.nodes[k]!.displayName))).toEqual([['preprocess'], ['train'], ['checkpoint'], ['deploy']]);
  expect(node('preprocess').type).toBe('Steps');
  for (const n of ['generate', 'normalize', 'train', 'checkpoint', 'deploy']) expect([n, node(n).phase, node(n).type]).toEqual([n, 'Succeeded', 'Pod']);
  expect(node('train').message).toBe('slurm: no Slurm target on this worker; ran locally (2 nodes requested)');
  expect(node('train').target).toBe('local');
  expect(node('train').outputs?.parameters.nodes).toBe('2');
  expect(node('train').outputs?.result).toMatch(/allocation: 2 node\(s\), 2 task\(s\), partition normal\n[\s\S]*step 60 loss/);
  expect(readdirSync(node('train').outputs!.artifacts.checkpoints!).sort()).toEqual(['step-000020', 'step-000040', 'step-000060']);
  expect(node('checkpoint').outputs?.result).toMatch(/step-000060: verified\ncatalogued step-000060 \(step 60\)/);
  const out = root.outputs!.parameters;
  expect(out.rows).toBe('200');
  expect(out['checkpoint-step']).toBe('60');
  expect(Number(out['final-loss'])).toBeGreaterThan(0);
  expect(Number(out['final-loss'])).toBeLessThan(0.6); // below chance (ln 2 ≈ 0.69): it learned
  // The completion is the served checkpoint's own prediction for the smoke prompt.
  const w = JSON.parse(readFileSync(join(node('checkpoint').outputs!.artifacts.model!, 'weights.json'), 'utf8')) as { weights: number[]; bias: number };
  const p = 1 / (1 + Math.exp(-([1.0, 0.5, -0.5, 2.0].reduce((s, x, j) => s + x * w.weights[j]!, 0) + w.bias)));
  expect(out.completion).toBe(`${p >= 0.5 ? 'positive' : 'negative'} (p=${(p >= 0.5 ? p : 1 - p).toFixed(2)})`);
  expect(st.outputs?.parameters.completion).toBe(out.completion);
  expect(node('deploy').outputs?.parameters.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
}, 60_000);

test('molecular dynamics with -p prep-steps=3 -p slurm-nodes=16 -p post-steps=2', async () => {
  const client = await startWorker();
  const st = await submit(client, 'molecular-dynamics.yaml', { 'prep-steps': '3', 'slurm-nodes': '16', 'post-steps': '2', 'md-steps': '40' });
  expect(st.message).toBeUndefined();
  expect(st.phase).toBe('Succeeded');
  const node = byDisplay(st);
  const kids = (n: ArgoNode) => n.children.map((c) => st.nodes[c]!);
  // A steps loop's items hang from their step group, as in Argo (no node for the loop itself).
  expect(kids(st.nodes[node('prepare(0:0)').parentId!]!).map((n) => [n.displayName, n.phase])).toEqual([['prepare(0:0)', 'Succeeded'], ['prepare(1:1)', 'Succeeded'], ['prepare(2:2)', 'Succeeded']]);
  expect(JSON.parse(node('prepare(2:2)').outputs!.result!)).toMatchObject({ replica: 2, atoms: 27, seed: 1002 });
  expect(node('simulate').message).toBe('slurm: no Slurm target on this worker; ran locally (16 nodes requested)');
  expect(node('simulate').outputs?.parameters).toMatchObject({ nodes: '16', replicas: '3', frames: '120' });
  expect(kids(st.nodes[node('analyze(0:0)').parentId!]!).map((n) => [n.displayName, n.phase])).toEqual([['analyze(0:0)', 'Succeeded'], ['analyze(1:1)', 'Succeeded']]);
  expect(JSON.parse(node('analyze(1:1)').outputs!.parameters.summary!)).toMatchObject({ block: 1, steps: [21, 40], frames: 60 });
  const report = JSON.parse(node('report').outputs!.result!) as { nodes: number; blocks: number; frames: number; maxAbsDrift: number };
  expect(report).toMatchObject({ nodes: 16, blocks: 2, frames: 120 });
  expect(report.maxAbsDrift).toBeLessThan(0.5); // velocity Verlet conserves energy
  expect(st.outputs?.parameters['md-report']).toBe(node('report').outputs!.result);
  expect(st.nodes[st.name]!.outputs?.parameters).toMatchObject({ replicas: '3', frames: '120' });
}, 60_000);

test('a worker configured slurmFallback: fail errors the Slurm step instead of running it here', async () => {
  const client = await startWorker({ slurmFallback: 'fail' });
  const st = await submit(client, 'molecular-dynamics.yaml', { 'prep-steps': '1', 'post-steps': '1', 'md-steps': '5' });
  // The step errs; its step group and the steps template are Failed, as Argo marks them (executeSteps).
  expect(st.phase).toBe('Failed');
  const sim = Object.values(st.nodes).find((n) => n.displayName === 'simulate')!;
  expect(sim.phase).toBe('Error');
  expect(sim.message).toMatch(/no slurm execution target is configured on this worker \(template simulate\)/);
  expect(Object.values(st.nodes).some((n) => n.displayName === 'report')).toBe(false);
}, 60_000);
