// The TandemPlugin in a plain Temporal TypeScript worker and client (not Tandem's createTandemWorker):
// the team's own workflow and activity run beside the hybrid pipeline and an Argo workflow; the same
// plugin instance on Client and Worker carries the payload codec, so what the server stores is
// encrypted and both sides still read it. Real dev server, embedded local runtime.
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { TandemPlugin } from '../workers/plugin.js';
import { createTandemWorker } from '../workers/worker.js';
import { loadWorkerConfig } from '../config/worker.js';
import { ArgoClient, prepare } from '../argo/client.js';
import { TandemClient } from '../sdk/client.js';
import { Runs } from '../sdk/runs.js';
import { address, spec, stopLocalDeployments, tempDir, uniqueQueue, waitFor, workflowBundle } from './helpers.js';


const ARGO = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: plugin-steps-
spec:
  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: say
            template: echo
    - name: echo
      container:
        image: alpine:3.20
        command: [sh, -c]
        args: ["echo from-argo"]
`;

describe('TandemPlugin in a plain Temporal worker', () => {
  const taskQueue = uniqueQueue('plugin');
  const home = tempDir('plugin-home');
  const key = randomBytes(32).toString('base64');
  // The configuration a worker would read from its environment, here given explicitly.
  const config = loadWorkerConfig({ TANDEM_HOME: home, TANDEM_CODEC_KEY: key, TANDEM_CODEC_KEY_ID: 'k1' });
  // /metrics as TANDEM_METRICS_PORT would serve it, on a free port.
  const plugin = new TandemPlugin({ config, metrics: { host: '127.0.0.1', port: 0 } });
  let worker: Worker;
  let running: Promise<void>;
  let native: NativeConnection;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    native = await NativeConnection.connect({ address: address() });
    worker = await Worker.create({
      connection: native,
      taskQueue,
      workflowsPath: join(process.cwd(), 'test/fixtures/consumer/workflows.ts'),
      activities: { shout: async (s: string) => s.toUpperCase() },
      plugins: [plugin],
    });
    running = worker.run();
    connection = await Connection.connect({ address: address() });
    client = new Client({ connection, plugins: [plugin] });
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await connection?.close();
    await native?.close();
    await stopLocalDeployments(home);
  });

  test("the plugin worker has the assembly of Tandem's own worker: heartbeat throttle, sinks, activity interceptors", async () => {
    const own = await createTandemWorker({ address: address(), taskQueue: uniqueQueue('own'), home, activities: {}, workflowBundle: await workflowBundle() });
    try {
      const a = worker.options;
      const b = own.worker.options;
      expect(a.maxHeartbeatThrottleIntervalMs).toBe(b.maxHeartbeatThrottleIntervalMs);
      expect(a.maxHeartbeatThrottleIntervalMs).toBe(1000); // not the SDK's 60 s: training progress stays live
      // Not the SDK's 5 s: on busy cores an ordinary activation passed it and the worker crashed.
      expect(a.isolateExecutionTimeoutMs).toBe(b.isolateExecutionTimeoutMs);
      expect(a.isolateExecutionTimeoutMs).toBe(60_000);
      expect(Object.keys(a.sinks ?? {}).sort()).toEqual(Object.keys(b.sinks ?? {}).sort());
      expect(Object.keys(a.sinks ?? {})).toContain('tandemMetrics');
      // The SDK's own default interceptors come first on both; Tandem's are the same after them.
      expect(a.interceptors.activity.length).toBe(b.interceptors.activity.length);
      // The plugin's activities are tandemActivities' (and the team's own next to them).
      expect([...a.activities.keys()]).toEqual(expect.arrayContaining(['submitJob', 'awaitJob', 'placeJob', 'argoRunPod', 'shout']));
    } finally {
      // A created worker holds its connection until it has run and shut down.
      const ran = own.worker.run();
      own.worker.shutdown();
      await ran;
      await own.connection.close();
    }
  });

  test("the team's own workflow and activity still run beside Tandem's", async () => {
    const r = await client.workflow.execute('teamGreeting', { taskQueue, workflowId: uniqueQueue('greet'), args: ['world'] });
    expect(r).toBe('HELLO WORLD');
  });

  test('the hybrid pipeline runs, and its history holds only encrypted payloads', async () => {
    const tandem = await TandemClient.connect({ client, taskQueue });
    const h = await tandem.launch(spec({ stages: { train: { steps: 30, checkpointEvery: 10 } } }), { id: uniqueQueue('plugin-pipeline'), tuning: { pollMaxMs: 500 } });
    const result = await h.result();
    expect(result).toMatchObject({ pipeline: 'test', checkpoint: { step: 30 } });
    // The plugin serves Tandem's /metrics while the worker runs: the run and its activities counted.
    const scraped = await (await fetch(plugin.metricsUrl!)).text();
    expect(scraped).toMatch(/^tandem_pipelines_completed_total\{tenant="[^"]*",pipeline="test"\} [1-9]/m);
    expect(scraped).toMatch(/^tandem_activity_duration_seconds_count\{activity="awaitJob",outcome="completed"\} [1-9]/m);
    // ...and the "running now" gauges from its connection's visibility, as Tandem's own worker has them.
    await waitFor('the plugin worker counting pipelines by status', async () => (/^tandem_pipelines\{status="Completed"\} [1-9]/m.test(await (await fetch(plugin.metricsUrl!)).text()) ? true : undefined), 30_000);
    // What the server stores: the workflow's input is AES-GCM ciphertext with the key id beside it.
    const history = await h.workflow.fetchHistory();
    const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(Buffer.from(input.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(input.metadata!['encryption-key-id']!).toString()).toBe('k1');
    expect(Buffer.from(input.data!).toString('latin1')).not.toContain('"tenant"');
    // A client without the plugin cannot read it.
    const plain = new Client({ connection });
    await expect(plain.workflow.getHandle(h.id).result()).rejects.toThrow();
    // ...but can still list it: memos are never decoded by listings.
    const keyless = await TandemClient.connect({ client: plain, taskQueue });
    await waitFor('the run in a keyless listing', async () => ((await new Runs(keyless).list({ limit: 1000 })).find((r) => r.id === h.id) ?? undefined));
  }, 180_000);

  test('an Argo workflow runs through the same worker', async () => {
    const argo = await ArgoClient.connect({ address: address(), taskQueue, plugins: [plugin] });
    try {
      const p = prepare('plugin-steps.yaml', { text: ARGO });
      const { id } = await argo.submit(p);
      const status = await argo.wait(id);
      expect(status.phase).toBe('Succeeded');
      // A client without the key still lists it (memos stay unread): one encrypted run in a shared
      // namespace must not break `tandem argo list` or `tandem runs list` for everyone else.
      const keyless = await ArgoClient.connect({ address: address(), taskQueue });
      try {
        // Visibility is eventually consistent: wait until the run is listed at all.
        await waitFor('the Argo run in a keyless listing', async () => ((await keyless.list()).some((w) => w.name === id) ? true : undefined));
      } finally {
        await keyless.close();
      }
    } finally {
      await argo.close();
    }
  }, 120_000);
});
