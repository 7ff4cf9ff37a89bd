// Tandem as a published package: `npm run build`, `npm pack`, and the tarball installed into a fresh
// project from the registry (as a user would: no repo-level overrides, no tsx), on this machine's Node.
// From there: the `tandem` bin, the SDK imported from TypeScript (the consumer's own `tsc --strict`,
// nodenext resolution) and from plain JavaScript, and the demo pipeline run by a worker made from the
// installed package against the test's Temporal dev server, with the plugin's progress, /metrics, `runs replay`
// and `tandem bundle` + `tandem worker` from the bin. `npm run test:consumer`; about 1.5 minutes (a build, an install).
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { LocalServingBackend } from '../backends/local-serving.js';
import { address, tempDir, uniqueQueue, waitFor } from './helpers.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const sh = (cmd: string, args: string[], cwd: string, timeout = 240_000) => run(cmd, args, { cwd, timeout, maxBuffer: 64 << 20, env: { ...process.env, NODE_OPTIONS: '' } });

let consumer: string;
/** What the installed package's plugin worker gave, for the checkout's createTandemWorker to match. */
let pluginRun: { events: number; counts: Record<string, number> } | undefined;
// A series by its name and one label pair (whatever its other labels), summed.
const COUNTED = ['tandem_pipelines_completed_total{pipeline="demo"}', 'tandem_activity_duration_seconds_count{activity="awaitJob",outcome="completed"}', 'tandem_activity_duration_seconds_count{activity="submitJob",outcome="completed"}'];
const countsIn = (text: string) =>
  Object.fromEntries(
    COUNTED.map((k) => {
      const [name, label] = k.slice(0, -1).split('{') as [string, string];
      const lines = text.split('\n').filter((l) => l.startsWith(`${name}{`) && l.slice(0, l.lastIndexOf(' ')).includes(label));
      return [k, lines.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0)];
    }),
  );

beforeAll(async () => {
  await sh('npm', ['run', 'build'], ROOT, 540_000); // tsc: ~30 s quiet, minutes on a loaded machine
  const dir = tempDir('package');
  // The build just ran; --ignore-scripts skips prepack's second one.
  const { stdout } = await sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], ROOT);
  const [packed] = JSON.parse(stdout) as { filename: string; size: number; unpackedSize: number; entryCount: number; files: { path: string }[] }[];
  console.log(`npm pack: ${packed!.filename} ${packed!.size} B packed, ${packed!.unpackedSize} B unpacked, ${packed!.entryCount} files`);
  expect(packed!.files.filter((f) => /^(test|bench)\/|\.test\.|(^|\/)[^/]+\.ts$/.test(f.path) && !f.path.endsWith('.d.ts'))).toEqual([]);
  consumer = join(dir, 'consumer');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  // With the Temporal SDK and TypeScript beside it, as a user's project has them: npm then hoists another
  // protobufjs (gRPC's, OpenTelemetry's 7.x) and nests the SDK's own copies, the layout in which the
  // SDK's historyFromJSON fails with "type must be a Type" (Tandem's sdk/history-json.ts does not).
  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(dir, packed!.filename), '@temporalio/client', '@temporalio/worker', 'typescript'], consumer);
}, 600_000);

test('the bin runs the compiled CLI with node alone: --version prints the version, --help lists the commands', async () => {
  expect(existsSync(join(consumer, 'node_modules/tandem/dist/cli/main.js'))).toBe(true);
  expect(existsSync(join(consumer, 'node_modules/tsx'))).toBe(false); // nothing at run time needs it
  expect((await sh('npx', ['tandem', '--version'], consumer)).stdout.trim()).toBe(VERSION);
  const help = (await sh('npx', ['tandem', '--help'], consumer)).stdout;
  for (const c of ['run [options] <spec>', 'dev [options]', 'runs', 'argo', 'migration', 'checkpoints [options] <run>', 'quotas [options]']) expect(help).toContain(`  ${c} `);
  // A group loads its module when named, and the shipped data files resolve from the package.
  const spec = join(consumer, 'node_modules/tandem/dist/templates/examples/demo-pipeline.yaml');
  expect((await sh('npx', ['tandem', 'validate', spec], consumer)).stdout).toContain('valid pipeline "demo"');
  const argo = join(consumer, 'node_modules/tandem/dist/templates/argo/hybrid-training.yaml');
  expect((await sh('npx', ['tandem', 'argo', 'lint', argo], consumer)).stdout).toContain('no linting errors');
});

test("the SDK, the spec, the plugin and the workflows type-check in the consumer's tsc --strict (nodenext)", async () => {
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: false } }));
  writeFileSync(
    join(consumer, 'index.ts'),
    `import { TandemClient, loadPipelineSpec, Runs, type PipelineHandle } from 'tandem';
import { TandemClient as SdkClient } from 'tandem/sdk';
import { validatePipelineSpec, PipelineSpecSchema, type PipelineSpec, type PipelineStatus } from 'tandem/spec';
import { createTandemWorker, TandemPlugin, WORKFLOWS_PATH } from 'tandem/plugin';
import { registry } from 'tandem/observe';
import { TEMPLATES } from 'tandem';
import type { HybridPipelineInput } from 'tandem/workflows';
import { Worker } from '@temporalio/worker';

export const spec: PipelineSpec = validatePipelineSpec({ name: 'consumer' });
export const steps: number = spec.stages.train.steps;
// @ts-expect-error the declarations are real types, not any: a number is not a string
export const wrong: string = spec.priority;
export const same: typeof TandemClient = SdkClient;
export async function launch(address: string): Promise<string> {
  const c = await TandemClient.connect({ address });
  const h: PipelineHandle = await c.launch(await loadPipelineSpec('p.yaml'));
  const st: PipelineStatus = await h.status();
  await c.close();
  return \`\${h.id} \${st.phase} \${String(new Runs(c))}\`;
}
export const input: HybridPipelineInput | undefined = undefined;
export const parts = [PipelineSpecSchema, createTandemWorker, WORKFLOWS_PATH, registry.metrics(), TEMPLATES.grafanaDashboard];
export async function embed(): Promise<Worker> {
  const plugin = new TandemPlugin({ home: '/tmp/tandem' });
  return Worker.create({ taskQueue: 'tandem', workflowsPath: WORKFLOWS_PATH, plugins: [plugin] });
}
`,
  );
  // Library checks stay on, so Tandem's own declarations are checked too. Two dependencies ship
  // declarations that name untyped modules (@temporalio/common → ms, isomorphic-ws → ws): those
  // diagnostics are theirs, and tolerated; none may come from Tandem or from the consumer's file.
  const out = await sh(process.execPath, [TSC, '-p', '.'], consumer).then((r) => r.stdout, (e: { stdout: string }) => e.stdout);
  const diagnostics = out.split('\n').filter((l) => /^\S+\(\d+,\d+\): error TS\d+/.test(l));
  expect(out.split('\n').filter((l) => l.trim() && !/^\s/.test(l) && !/^node_modules\/(?!tandem\/)\S+\(\d+,\d+\): error TS\d+/.test(l))).toEqual([]);
  // isomorphic-ws is no longer among them: Tandem depends on @types/ws.
  expect(diagnostics.filter((l) => !/^node_modules\/@temporalio\//.test(l))).toEqual([]);
}, 240_000);

test('`tandem bundle` from the bin writes the workflow bundle; `tandem worker` given it polls with the configuration of `npm run worker` and stops on SIGTERM; a worker it does not fit refuses it', async () => {
  const bin = join(consumer, 'node_modules/.bin/tandem');
  const bundle = join(tempDir('bin-bundle'), 'workflows.js');
  const built = await sh(bin, ['bundle', bundle], consumer);
  expect(built.stdout).toContain(`wrote ${bundle}`);
  expect(built.stdout).toContain(`Tandem ${VERSION}, for workers without payload keys, tracing off`);
  expect(readFileSync(bundle, 'utf8').split('\n', 1)[0]).toBe(`// tandem-workflow-bundle {"tandem":"${VERSION}","encrypted":false,"tracing":false}`);
  // A worker with payload keys: the bundle lacks the encrypting failure converter, so it is refused before connecting.
  const keyed = await run(bin, ['worker'], { cwd: consumer, timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), TANDEM_WORKFLOW_BUNDLE: bundle, TANDEM_CODEC_KEY: Buffer.alloc(32, 7).toString('base64'), TANDEM_CODEC_KEY_ID: 'k1' } }).then(() => undefined, (e: { code?: number; stderr?: string; stdout?: string }) => e);
  expect(keyed?.code).toBe(2);
  expect(keyed?.stderr).toMatch(/TANDEM_WORKFLOW_BUNDLE=.*built for a worker without payload keys, and this worker has keys/);
  expect(keyed?.stderr).not.toMatch(/\n\s+at /); // no stack trace
  const taskQueue = uniqueQueue('bin-worker');
  const child = spawn(bin, ['worker'], { cwd: consumer, env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), TANDEM_TASK_QUEUE: taskQueue, TANDEM_HOME: tempDir('bin-worker'), TANDEM_WORKFLOW_BUNDLE: bundle }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await waitFor('the worker polling', async () => (out.includes(`polling task queue "${taskQueue}"`) ? true : undefined), 120_000);
  } finally {
    child.kill('SIGTERM');
  }
  await exited;
  expect(out).not.toMatch(/npm run/);
}, 180_000);

test('plain JavaScript imports the SDK and the spec, and a plain Temporal worker with the TandemPlugin from the installed package runs the demo pipeline', async () => {
  writeFileSync(
    join(consumer, 'pipeline.mjs'),
    `import { NativeConnection, Worker } from '@temporalio/worker';
import { TandemPlugin } from 'tandem/plugin';
import { TandemClient, loadPipelineSpec, TEMPLATES } from 'tandem';
import { validatePipelineSpec } from 'tandem/spec';
const [address, taskQueue, home, id] = process.argv.slice(2);
console.log('SPEC ' + validatePipelineSpec({ name: 'js' }).stages.train.steps);
const connection = await NativeConnection.connect({ address });
const plugin = new TandemPlugin({ home, registerWorkflows: true, metrics: { host: '127.0.0.1', port: 0 } });
const worker = await Worker.create({ connection, taskQueue, plugins: [plugin] });
const running = worker.run();
const tandem = await TandemClient.connect({ address, taskQueue });
const spec = await loadPipelineSpec(TEMPLATES.demoSpec);
spec.stages.train.stepDelayMs = 3; // about 6 s of training
try {
  const handle = await tandem.launch(spec, { id, tuning: { pollMaxMs: 500, heartbeatTimeoutMs: 5000 } });
  let progress = 0;
  let first, last;
  for await (const e of handle.progress(250)) {
    if (e.type !== 'progress') continue;
    progress++;
    first ??= Date.now();
    last = Date.now();
  }
  const timeline = await handle.timeline();
  const at = (kind) => Date.parse(timeline.find((t) => t.stage === 'train' && t.kind === kind).at);
  console.log('PROGRESS ' + JSON.stringify({ events: progress, reportingSeconds: (last - first) / 1000, trainSeconds: (at('stage-completed') - at('stage-started')) / 1000 }));
  console.log('RESULT ' + JSON.stringify(await handle.result()));
  console.log('METRICS ' + JSON.stringify(await (await fetch(plugin.metricsUrl)).text()));
} finally {
  await tandem.close();
  worker.shutdown();
  await running;
  await connection.close();
}
`,
  );
  const home = tempDir('package-home');
  const id = `package-${uniqueQueue('demo')}`;
  try {
    const { stdout } = await sh(process.execPath, ['pipeline.mjs', address(), uniqueQueue('package'), home, id], consumer, 180_000);
    expect(stdout).toMatch(/^SPEC \d+$/m);
    const result = JSON.parse(/^RESULT (.*)$/m.exec(stdout)![1]!) as { pipeline: string; checkpoint: { step: number }; completion: string };
    expect(result).toMatchObject({ pipeline: 'demo', checkpoint: { step: 2000 } });
    expect(result.completion.trim().length).toBeGreaterThan(0); // text the trained model generated
    // The plugin worker keeps training progress live (the heartbeat throttle of Tandem's own worker):
    // at least one progress event a second of training.
    // (The train stage's time includes placement, submission and the job's start; the job reports
    // steps from its first to its last progress event.) The SDK's default throttle would give 0-1.
    const progress = JSON.parse(/^PROGRESS (.*)$/m.exec(stdout)![1]!) as { events: number; reportingSeconds: number; trainSeconds: number };
    console.log(`plugin worker: ${progress.events} progress events, ${progress.reportingSeconds} s from first to last, train stage ${progress.trainSeconds} s`);
    expect(progress.reportingSeconds).toBeGreaterThan(3);
    expect(progress.events).toBeGreaterThanOrEqual(Math.floor(progress.reportingSeconds));
    // ...and serves Tandem's /metrics while it runs, with the run's counters moved.
    const scraped = JSON.parse(/^METRICS (.*)$/m.exec(stdout)![1]!) as string;
    expect(scraped).toMatch(/^tandem_pipelines_completed_total\{[^}]*pipeline="demo"\} 1$/m);
    pluginRun = { events: progress.events, counts: countsIn(scraped) };
    for (const k of COUNTED) expect([k, pluginRun.counts[k]! > 0]).toEqual([k, true]);
    expect(scraped).toMatch(/^tandem_activity_duration_seconds_count\{activity="awaitJob",outcome="completed"\} [1-9]/m);
    // `tandem runs replay <id>` from the bin: the fetched history, no JSON round trip, deterministic.
    const replay = await sh('npx', ['tandem', '--address', address(), 'runs', 'replay', id], consumer);
    expect(replay.stdout).toMatch(/deterministic — \d+ events of hybridPipeline replay on the current code/);
    // ...and its export, read back as a file, replays too (sdk/history-json.ts in this node_modules layout).
    const exported = join(home, 'history.json');
    await sh('npx', ['tandem', '--address', address(), 'runs', 'export', id, '--out', exported], consumer);
    expect((await sh('npx', ['tandem', 'runs', 'replay', '--file', exported, '--workflow-id', id], consumer)).stdout).toMatch(/deterministic/);
    // The job programs ran compiled, from the package, with plain node.
    const jobs = join(home, 'jobs');
    const train = readdirSync(jobs).find((n) => n.includes('-train-'))!;
    const job = JSON.parse(readFileSync(join(jobs, train, 'job.json'), 'utf8')) as { command: string[] };
    expect(job.command).toEqual([process.execPath, join(consumer, 'node_modules/tandem/dist/programs/train.js')]);
  } finally {
    const serving = new LocalServingBackend(home);
    for (const d of serving.list()) await serving.undeploy(d.name);
  }
}, 240_000);

// The same bar as the plugin worker's, not the same count: the count follows how long training took, which
// varies from run to run with the machine's load (a 37 s and a 24 s training gave 38 and 23 events).
test("the same scenario on the checkout's createTandemWorker meets the same progress bar (an event a second of training) with the same metric deltas", async () => {
  expect(pluginRun).toBeDefined();
  const { startWorker } = await import('./helpers.js');
  const { registry } = await import('../observe/metrics.js');
  const { loadPipelineSpec } = await import('../sdk/index.js');
  const home = tempDir('package-checkout');
  const w = await startWorker({ taskQueue: uniqueQueue('checkout'), home });
  try {
    const before = countsIn(await registry.metrics());
    const spec = await loadPipelineSpec(join(ROOT, 'templates/examples/demo-pipeline.yaml'));
    spec.stages.train.stepDelayMs = 3;
    const handle = await w.tandem.launch(spec, { id: `checkout-${uniqueQueue('demo')}`, tuning: { pollMaxMs: 500, heartbeatTimeoutMs: 5000 } });
    let events = 0;
    let first: number | undefined;
    let last = 0;
    for await (const e of handle.progress(250)) {
      if (e.type !== 'progress') continue;
      events++;
      first ??= Date.now();
      last = Date.now();
    }
    await handle.result();
    const after = countsIn(await registry.metrics());
    const reportingSeconds = (last - (first ?? last)) / 1000;
    console.log(`createTandemWorker: ${events} progress events in ${reportingSeconds} s (plugin worker: ${pluginRun!.events})`);
    expect(reportingSeconds).toBeGreaterThan(3);
    expect(events).toBeGreaterThanOrEqual(Math.floor(reportingSeconds));
    expect(Object.fromEntries(COUNTED.map((k) => [k, after[k]! - before[k]!]))).toEqual(pluginRun!.counts);
  } finally {
    await w.stop();
    const serving = new LocalServingBackend(home);
    for (const d of serving.list()) await serving.undeploy(d.name);
  }
}, 240_000);

const ARGO_HELLO = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: consumer-hello-
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: say
        template: say
    - - name: echo
        template: echo
        arguments:
          parameters:
          - name: msg
            value: "{{steps.say.outputs.parameters.msg}}"
  - name: say
    container:
      image: alpine:3.20
      command: [sh, -c]
      args: ["printf hello > /tmp/msg"]
    outputs:
      parameters:
      - name: msg
        valueFrom:
          path: /tmp/msg
  - name: echo
    inputs:
      parameters:
      - name: msg
    container:
      image: alpine:3.20
      command: [sh, -c]
      args: ["echo got {{inputs.parameters.msg}}"]
`;

/** The fenced block of `lang` in `file` (under the repository) that contains `marker`: the docs as written. */
function snippet(file: string, lang: string, marker: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const blocks = [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
  const found = blocks.find((b) => b.includes(marker));
  if (!found) throw new Error(`${file}: no \`\`\`${lang} block containing ${JSON.stringify(marker)} (the docs changed: update this test with them)`);
  return found;
}
/** `text` with each `[from, to]` replaced, every `from` required to be there (so the docs cannot drift away from the test). */
function substitute(text: string, pairs: [string, string][]): string {
  for (const [from, to] of pairs) {
    if (!text.includes(from)) throw new Error(`the snippet no longer contains ${JSON.stringify(from)}:\n${text}`);
    text = text.split(from).join(to);
  }
  return text;
}

test("the docs' snippets, extracted from README.md, docs/temporal.md and docs/using.md, run as written in the consumer project", async () => {
  const dir = join(consumer, 'snippets');
  mkdirSync(join(dir, 'src'), { recursive: true });
  // README: the pipeline you can paste, pasted into a shell, then validated by the installed bin.
  await sh('bash', ['-c', snippet('README.md', 'sh', 'my-pipeline.yaml <<')], dir);
  expect((await sh('npx', ['tandem', 'validate', 'my-pipeline.yaml'], dir)).stdout).toContain('valid pipeline "my-model"');
  // docs/temporal.md: the user's workflows module and worker with TandemPlugin. The test supplies what the
  // snippet leaves to the reader (its own activities, a spec), the test server and a queue of its own,
  // and prints the result when the snippet is done.
  const queue = uniqueQueue('snippet');
  const plugin = snippet('docs/temporal.md', 'ts', '// worker.ts');
  const [workflows, worker] = plugin.split('// worker.ts') as [string, string];
  writeFileSync(join(dir, 'src/workflows.ts'), workflows);
  const serverAt = (t: string) => substitute(t, [["'temporal.internal:7233'", JSON.stringify(address())], ["taskQueue: 'tandem'", `taskQueue: ${JSON.stringify(queue)}`]]);
  writeFileSync(
    join(dir, 'src/worker.ts'),
    "const myActivities = { async hello() { return 'hi'; } };\nconst spec = { name: 'snippet', stages: { train: { steps: 60, checkpointEvery: 30 } } };\n" +
      serverAt(worker) +
      "console.log('RESULT ' + JSON.stringify(await run.result()));\nprocess.exit(0);\n",
  );
  // docs/using.md: the SDK, against a `tandem worker` from the bin on the same queue.
  const sdk = substitute(snippet('docs/using.md', 'ts', 'TandemClient.connect'), [["{ address: '127.0.0.1:7233' }", `{ address: ${JSON.stringify(address())}, taskQueue: ${JSON.stringify(queue)} }`]]);
  writeFileSync(join(dir, 'src/sdk.ts'), sdk + "process.exit(0);\n");
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: true, outDir: 'out', rootDir: 'src' } }));
  await sh(process.execPath, [TSC, '-p', '.'], dir).catch((e: { stdout: string }) => {
    throw new Error(`the docs' snippets do not compile as written:\n${e.stdout}`);
  });
  const homes = [join(dir, '.tandem'), tempDir('snippet-worker')];
  try {
    const ran = await sh(process.execPath, ['out/worker.js'], dir, 240_000);
    const result = JSON.parse(/^RESULT (.*)$/m.exec(ran.stdout)![1]!) as { pipeline: string; checkpoint: { step: number } };
    expect(result).toMatchObject({ pipeline: 'snippet', checkpoint: { step: 60 } });
    const bin = spawn(join(consumer, 'node_modules/.bin/tandem'), ['worker'], { cwd: dir, env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), TANDEM_TASK_QUEUE: queue, TANDEM_HOME: homes[1] }, stdio: 'ignore' });
    const binExited = new Promise((r) => bin.on('exit', r));
    try {
      const out = (await sh(process.execPath, ['out/sdk.js'], dir, 240_000)).stdout;
      expect(out).toMatch(/"type":"progress"|type: 'progress'/); // progress events printed as they came
      expect(out.trim().split('\n').at(-1)!.trim().length).toBeGreaterThan(0); // the model's completion
      // An Argo workflow, unchanged YAML, from the installed bin on the same worker: an output parameter
      // flows from one step to the next.
      writeFileSync(join(dir, 'hello.yaml'), ARGO_HELLO);
      const cli = ['tandem', '--address', address(), '--task-queue', queue, 'argo'];
      const watched = await sh('npx', [...cli, 'submit', 'hello.yaml', '--name', 'consumer-hello', '--watch'], dir, 180_000);
      expect(watched.stdout).toMatch(/Succeeded/);
      const got = JSON.parse((await sh('npx', [...cli, 'get', 'consumer-hello', '-o', 'json'], dir)).stdout) as { status?: { phase?: string }; phase?: string };
      expect(got.status?.phase ?? got.phase).toBe('Succeeded');
      // The pods' output is in the worker's home: the CLI reads it there (TANDEM_HOME, as the worker's).
      expect((await sh('env', [`TANDEM_HOME=${homes[1]}`, 'npx', ...cli, 'logs', 'consumer-hello'], dir)).stdout).toContain('got hello');
    } finally {
      bin.kill('SIGTERM');
      await binExited;
    }
  } finally {
    for (const h of homes) {
      const serving = new LocalServingBackend(h);
      for (const d of serving.list()) await serving.undeploy(d.name);
    }
  }
}, 600_000);
