// OpenTelemetry tracing end to end (issue [observe] item 3): a real `tandem worker` process
// (workers/main.ts, the production entry point) whose only tracing configuration is the standard
// OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_HEADERS variables, a TandemClient in this process
// with tracing started from the same variables (as `tandem-cli`), and an in-process OTLP/HTTP collector
// on 127.0.0.1 (test/observe/collector.ts). One pipeline on the local runtime; then the client's
// StartWorkflow span, the workflow's RunWorkflow and StartActivity spans (out of the sandbox through
// the sink) and the worker's RunActivity spans must form one trace, parent by parent, and all be
// exported by the time the worker has shut down (spans are flushed on shutdown).
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflows } from '../workers/worker.js';
import { tandemSinks } from '../observe/sinks.js';
import { loadObserveConfig, loadWorkerConfig } from '../config/worker.js';
import { TandemPlugin } from '../workers/plugin.js';
import { startTracing, tracingSinks, type Tracing } from '../observe/tracing.js';
import { TandemClient } from '../sdk/client.js';
import { address, spec, stopLocalDeployments, tempDir, uniqueQueue, workflowBundle } from './helpers.js';
import { startCollector, type CollectedSpan, type Collector } from './observe/collector.js';
import { startWorkerProcess, type WorkerProcess } from './observe/worker-process.js';

/**
 * A run's trace shape: the distinct parent → child span-name edges under its StartWorkflow span, sorted
 * (attempt counts left out; other client calls the test made, such as a describe, are their own roots).
 */
function traceShape(spans: CollectedSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s] as const));
  const root = (s: CollectedSpan): CollectedSpan => (s.parentSpanId && byId.has(s.parentSpanId) ? root(byId.get(s.parentSpanId)!) : s);
  const inRun = spans.filter((s) => root(s).name === 'StartWorkflow:hybridPipeline');
  return [...new Set(inRun.map((s) => `${(s.parentSpanId && byId.get(s.parentSpanId)?.name) || '(root)'} → ${s.name}`))].sort();
}

/** What Tandem's own worker gave (the first test), for the plugin's to match. */
let ownShape: string[] | undefined;

describe('OpenTelemetry tracing', () => {
  const canary = `otlp-canary-${randomBytes(6).toString('hex')}`;
  let collector: Collector;
  let worker: WorkerProcess | undefined;
  let tracing: Tracing | undefined;
  let traced: { workflowId: string; history: temporal.api.history.v1.IHistory } | undefined;

  beforeAll(async () => {
    collector = await startCollector();
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      /* installed by another file in this process */
    }
  });
  afterAll(async () => {
    await worker?.stop();
    await tracing?.shutdown();
    await collector?.close();
  });

  test('a pipeline is one trace from the client through the workflow to every activity', async () => {
    const taskQueue = uniqueQueue('tracing');
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${canary}` };
    worker = await startWorkerProcess({ ...otel, TANDEM_TASK_QUEUE: taskQueue, TANDEM_HOME: tempDir('tracing'), TANDEM_LOG_FORMAT: 'json' });
    expect(worker.output()).toContain(`traces to ${collector.url}/v1/traces as service tandem-worker`);
    tracing = startTracing(loadObserveConfig({ ...otel, OTEL_SERVICE_NAME: 'tandem-cli' }).tracing!, 'tandem-cli');
    const tandem = await TandemClient.connect({ address: address(), taskQueue });
    let workflowId: string;
    let runId: string;
    try {
      const h = await tandem.launch(spec({ name: 'traced', tenant: 'trace-tenant' }));
      await h.result();
      workflowId = h.id;
      runId = (await h.workflow.describe()).runId;
      traced = { workflowId, history: await h.workflow.fetchHistory() };
    } finally {
      await tandem.close();
    }
    // Bounded: the client's spans on flush, the worker's when it shuts down (SIGTERM, a clean exit).
    await tracing.flush();
    const stopped = worker;
    expect(await stopped.stop()).toBe(0);
    worker = undefined;
    const spans = collector.spans.filter((s) => s.attributes.temporalWorkflowId === workflowId || s.attributes.workflowId === workflowId);

    const one = (name: string, service: string) => {
      const found = spans.filter((s) => s.name === name && s.service === service);
      expect(found.map((s) => s.name)).toEqual([name]);
      return found[0]!;
    };
    const start = one('StartWorkflow:hybridPipeline', 'tandem-cli');
    const run = one('RunWorkflow:hybridPipeline', 'tandem-worker');
    expect(run.traceId).toBe(start.traceId);
    expect(run.parentSpanId).toBe(start.spanId);
    expect(run.attributes).toMatchObject({ workflowId, runId, workflowType: 'hybridPipeline', taskQueue });
    // Nothing but scalars from the WorkflowInfo: the memo (encrypted at rest with the codec) stays out.
    for (const k of ['memo', 'searchAttributes', 'typedSearchAttributes']) expect(run.attributes).not.toHaveProperty(k);

    ownShape = traceShape(spans);
    const byId = new Map(spans.map((s) => [s.spanId, s] as const));
    const ancestors = (s: CollectedSpan): string[] => (s.parentSpanId && byId.has(s.parentSpanId) ? [byId.get(s.parentSpanId)!.name, ...ancestors(byId.get(s.parentSpanId)!)] : []);
    const activities = spans.filter((s) => s.name.startsWith('RunActivity:'));
    const names = new Set(activities.map((s) => s.name.slice('RunActivity:'.length)));
    for (const a of ['placeJob', 'submitJob', 'awaitJob']) expect(names).toContain(a);
    for (const a of activities) {
      expect(a.service).toBe('tandem-worker');
      expect(a.traceId).toBe(start.traceId);
      expect(a.attributes).toMatchObject({ temporalWorkflowId: workflowId, run_id: runId });
      // RunActivity:x ← StartActivity:x (the workflow's) ← … ← RunWorkflow ← StartWorkflow.
      const chain = ancestors(a);
      expect(chain[0]).toBe(`StartActivity:${a.name.slice('RunActivity:'.length)}`);
      expect(chain.slice(-2)).toEqual(['RunWorkflow:hybridPipeline', 'StartWorkflow:hybridPipeline']);
    }
    // Tandem's own attributes from the activity's input: the stage each job was for, the tenant placed for.
    const stagesOf = (activity: string) => activities.filter((s) => s.name === `RunActivity:${activity}`).map((s) => s.attributes['tandem.stage']).sort();
    expect(stagesOf('submitJob')).toEqual(['preprocess', 'train']);
    expect(stagesOf('awaitJob')).toEqual(['preprocess', 'train']);
    expect(activities.filter((s) => s.name === 'RunActivity:submitJob').map((s) => s.attributes['tandem.job_attempt'])).toEqual([1, 1]);
    expect(activities.filter((s) => s.name === 'RunActivity:placeJob').map((s) => s.attributes['tandem.tenant'])).toEqual(['trace-tenant', 'trace-tenant']);

    // The collector's credential went as a header, and nowhere into the worker's log.
    expect(collector.requests.some((h) => h.authorization === `Bearer ${canary}`)).toBe(true);
    expect(collector.requests.every((h) => h.authorization === `Bearer ${canary}`)).toBe(true);
    expect(stopped.output()).toContain('"msg":"tandem worker: polling task queue');
    expect(stopped.output()).not.toContain(canary);
  }, 180_000);

  test('replay: the traced run with and without tracing, every recorded history with it, and nothing exported again', async () => {
    expect(traced).toBeDefined();
    const t = tracing!;
    const exported = collector.spans.length;
    const withTracing = await bundleWorkflows({ tracing: true });
    const sinks = { ...tandemSinks({ record: false }), ...tracingSinks(t) };
    await expect(Worker.runReplayHistory({ workflowBundle: withTracing, sinks }, traced!.history, traced!.workflowId)).resolves.toBeUndefined();
    // The headers the tracing interceptors add are not commands: the plain bundle replays a traced run.
    await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks: tandemSinks({ record: false }) }, traced!.history, traced!.workflowId)).resolves.toBeUndefined();
    // Every history recorded without tracing (test/histories, as test/replay.test.ts replays them) replays with it.
    const dir = fileURLToPath(new URL('./histories/', import.meta.url));
    const ids = JSON.parse(readFileSync(join(dir, 'workflow-ids.json'), 'utf8')) as Record<string, string>;
    const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'workflow-ids.json');
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const history = historyFromJSON(JSON.parse(readFileSync(join(dir, f), 'utf8')));
      await expect(Worker.runReplayHistory({ workflowBundle: withTracing, sinks }, history, ids[f] ?? f)).resolves.toBeUndefined();
    }
    // The span sink is not called on replay: a replayed run does not export its past again.
    await t.flush();
    expect(collector.spans.length).toBe(exported);
    await t.shutdown();
    tracing = undefined;
  }, 300_000);

  test("the TandemPlugin traces a team's own Client and Worker the same way", async () => {
    const taskQueue = uniqueQueue('tracing-plugin');
    const pluginHome = tempDir('tracing-plugin');
    const config = loadWorkerConfig({ TANDEM_HOME: pluginHome, OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`, OTEL_SERVICE_NAME: 'team-app' });
    const plugin = new TandemPlugin({ config });
    expect(plugin.tracing?.serviceName).toBe('team-app');
    const native = await NativeConnection.connect({ address: address() });
    const connection = await Connection.connect({ address: address() });
    let workflowId: string;
    try {
      const worker = await Worker.create({ connection: native, taskQueue, workflowsPath: join(process.cwd(), 'test/fixtures/consumer/workflows.ts'), activities: { shout: async (x: string) => x.toUpperCase() }, plugins: [plugin] });
      const client = new Client({ connection, plugins: [plugin] });
      await worker.runUntil(async () => {
        const tandem = await TandemClient.connect({ client, taskQueue });
        const h = await tandem.launch(spec({ name: 'plugin-traced' }));
        await h.result();
        workflowId = h.id;
      });
    } finally {
      await connection.close();
      await native.close();
      await plugin.tracing?.shutdown();
      await stopLocalDeployments(pluginHome);
    }
    const spans = collector.spans.filter((s) => s.service === 'team-app');
    const start = spans.filter((s) => s.name === 'StartWorkflow:hybridPipeline' && s.attributes.temporalWorkflowId === workflowId!);
    expect(start).toHaveLength(1);
    const run = spans.find((s) => s.name === 'RunWorkflow:hybridPipeline' && s.attributes.workflowId === workflowId!);
    expect(run).toMatchObject({ traceId: start[0]!.traceId, parentSpanId: start[0]!.spanId });
    const submits = spans.filter((s) => s.name === 'RunActivity:submitJob' && s.attributes.temporalWorkflowId === workflowId!);
    expect(submits.map((s) => s.attributes['tandem.stage']).sort()).toEqual(['preprocess', 'train']);
    const byId = new Map(spans.map((s) => [s.spanId, s] as const));
    for (const s of submits) expect(byId.get(byId.get(s.parentSpanId!)!.parentSpanId!)).toBe(run);
    // The same trace shape as Tandem's own worker gave the same pipeline in the first test: every
    // parent → child span edge of one, and no other (services differ by name only).
    expect(ownShape).toBeDefined();
    const trace = spans.filter((s) => s.traceId === run!.traceId);
    expect(traceShape(trace)).toEqual(ownShape);
  }, 180_000);

  test('`tandem run` traces from the CLI process: its StartWorkflow span parents the run on the worker', async () => {
    const taskQueue = uniqueQueue('tracing-cli');
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
    const cliWorker = await startWorkerProcess({ ...otel, TANDEM_TASK_QUEUE: taskQueue, TANDEM_HOME: tempDir('tracing-cli') });
    const id = `cli-traced-${randomBytes(3).toString('hex')}`;
    const specFile = join(tempDir('tracing-cli-spec'), 'spec.json');
    writeFileSync(specFile, JSON.stringify(spec({ name: 'cli-traced' })));
    try {
      const out = await new Promise<string>((resolve, reject) =>
        execFile(process.execPath, ['--import', 'tsx', 'cli/main.ts', '--task-queue', taskQueue, 'run', specFile, '--id', id], { encoding: 'utf8', env: { ...process.env, ...otel, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address() }, timeout: 120_000 }, (error, stdout, stderr) =>
          error ? reject(new Error(`tandem run failed: ${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
        ),
      );
      expect(out).toMatch(/completed/);
    } finally {
      expect(await cliWorker.stop()).toBe(0);
    }
    // The CLI flushed its spans before it exited; the worker's came on its shutdown.
    const start = collector.spans.filter((s) => s.name === 'StartWorkflow:hybridPipeline' && s.service === 'tandem-cli' && s.attributes.temporalWorkflowId === id);
    expect(start).toHaveLength(1);
    const run = collector.spans.find((s) => s.name === 'RunWorkflow:hybridPipeline' && s.service === 'tandem-worker' && s.attributes.workflowId === id);
    expect(run).toMatchObject({ traceId: start[0]!.traceId, parentSpanId: start[0]!.spanId });
  }, 180_000);
});
