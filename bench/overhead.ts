// `npm run bench:overhead`: what Tandem's pipeline machinery (saga, timeline, queries, retry loop)
// costs over a bare workflow calling the same number of no-op activities, on the same real server,
// interleaved in the same run; and what metrics cost (observe/: workflow sinks, the activity
// interceptor, /metrics scraped every second) against the same pipeline with metrics off, on a second
// worker in the same process. Usage: npm run bench:overhead -- [runs=30]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { startDevServer } from '../workers/dev-server.js';
import { validatePipelineSpec } from '../contract/parse.js';
import { fakeActivities } from '../test/fake-activities.js';
import { tandemSinks } from '../observe/sinks.js';
import { observeActivities } from '../observe/interceptor.js';
import { startMetricsServer } from '../observe/server.js';

const runs = Number(process.argv[2] ?? 30);
Runtime.install({ logger: new DefaultLogger('WARN') });
const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-'));
const server = await startDevServer({ dbFile: join(dir, 'temporal.db') });
const workflowBundle = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)), logger: new DefaultLogger('WARN') });
const fake = fakeActivities();
const connection = await NativeConnection.connect({ address: server.address });
const activities = { ...fake.acts, noop: async (i: number) => i };
// Metrics off: the workflows' sink calls go to sinks that do nothing (what a worker without metrics would do).
const worker = await Worker.create({ connection, taskQueue: 'bench', workflowBundle, activities, sinks: tandemSinks({ record: false }) });
const observed = await Worker.create({ connection, taskQueue: 'bench-metrics', workflowBundle, activities, sinks: tandemSinks(), interceptors: { activity: [observeActivities] } });
const metricsServer = await startMetricsServer({ host: '127.0.0.1', port: 0 });
let scrapes = 0;
const scraper = setInterval(() => void fetch(metricsServer.url).then((r) => r.text()).then(() => scrapes++), 1000);
const clientConn = await Connection.connect({ address: server.address });
const client = new Client({ connection: clientConn });
const spec = validatePipelineSpec({ name: 'bench' });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const pipelineMs: number[] = [];
const bareMs: number[] = [];
const metricsMs: number[] = [];
await Promise.all([observed.run(), worker.runUntil(async () => {
  // Count the activities one pipeline run schedules (from its history), so the baseline does the same amount of work.
  await client.workflow.execute('hybridPipeline', { taskQueue: 'bench', workflowId: 'warmup-pipeline', args: [{ spec }] });
  const history = await client.workflow.getHandle('warmup-pipeline').fetchHistory();
  const activities = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length;
  await client.workflow.execute('bareActivities', { taskQueue: 'bench', workflowId: 'warmup-bare', args: [activities] });
  await client.workflow.execute('hybridPipeline', { taskQueue: 'bench-metrics', workflowId: 'warmup-metrics', args: [{ spec }] });
  process.stdout.write(`runs: ${runs} each, interleaved; ${activities} activities per workflow\n`);
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    await client.workflow.execute('hybridPipeline', { taskQueue: 'bench', workflowId: `pipeline-${i}`, args: [{ spec }] });
    pipelineMs.push(performance.now() - t);
    t = performance.now();
    await client.workflow.execute('bareActivities', { taskQueue: 'bench', workflowId: `bare-${i}`, args: [activities] });
    bareMs.push(performance.now() - t);
    t = performance.now();
    await client.workflow.execute('hybridPipeline', { taskQueue: 'bench-metrics', workflowId: `metrics-${i}`, args: [{ spec }] });
    metricsMs.push(performance.now() - t);
    if ((i + 1) % 10 === 0) process.stderr.write(`  ${i + 1}/${runs}\n`);
  }
  observed.shutdown();
})]);
clearInterval(scraper);
await metricsServer.close();

const p = median(pipelineMs);
const b = median(bareMs);
const m = median(metricsMs);
const rows = [
  ['workflow', 'median ms', 'p90 ms', 'runs'],
  ['bare: N no-op activities', b.toFixed(1), [...bareMs].sort((x, y) => x - y)[Math.floor(runs * 0.9)]!.toFixed(1), String(runs)],
  ['hybridPipeline, no-op activities', p.toFixed(1), [...pipelineMs].sort((x, y) => x - y)[Math.floor(runs * 0.9)]!.toFixed(1), String(runs)],
  ['hybridPipeline, metrics on', m.toFixed(1), [...metricsMs].sort((x, y) => x - y)[Math.floor(runs * 0.9)]!.toFixed(1), String(runs)],
];
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
console.log(`\noverhead ratio (pipeline / bare, medians): ${(p / b).toFixed(2)}  (goal ≤ 1.5)`);
console.log(`metrics overhead (metrics on / off, medians): ${(m / p).toFixed(3)}  (goal ≤ 1.02; /metrics scraped ${scrapes} times)`);

await clientConn.close();
await connection.close();
await server.stop();
rmSync(dir, { recursive: true, force: true });
