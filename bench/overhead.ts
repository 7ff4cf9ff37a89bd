// `npm run bench:overhead`: what Tandem's pipeline machinery (saga, timeline, queries, retry loop)
// costs over a bare workflow calling the same number of no-op activities, on the same real server,
// interleaved in the same run. Usage: npm run bench:overhead -- [runs=30]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { startDevServer } from '../workers/dev-server.js';
import { validatePipelineSpec } from '../contract/parse.js';
import { fakeActivities } from '../test/fake-activities.js';

const runs = Number(process.argv[2] ?? 30);
Runtime.install({ logger: new DefaultLogger('WARN') });
const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-'));
const server = await startDevServer({ dbFile: join(dir, 'temporal.db') });
const workflowBundle = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)), logger: new DefaultLogger('WARN') });
const fake = fakeActivities();
const connection = await NativeConnection.connect({ address: server.address });
const worker = await Worker.create({ connection, taskQueue: 'bench', workflowBundle, activities: { ...fake.acts, noop: async (i: number) => i } });
const clientConn = await Connection.connect({ address: server.address });
const client = new Client({ connection: clientConn });
const spec = validatePipelineSpec({ name: 'bench' });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const pipelineMs: number[] = [];
const bareMs: number[] = [];
await worker.runUntil(async () => {
  // Count the activities one pipeline run schedules (from its history), so the baseline does the same amount of work.
  await client.workflow.execute('hybridPipeline', { taskQueue: 'bench', workflowId: 'warmup-pipeline', args: [{ spec }] });
  const history = await client.workflow.getHandle('warmup-pipeline').fetchHistory();
  const activities = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length;
  await client.workflow.execute('bareActivities', { taskQueue: 'bench', workflowId: 'warmup-bare', args: [activities] });
  process.stdout.write(`runs: ${runs} each, interleaved; ${activities} activities per workflow\n`);
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    await client.workflow.execute('hybridPipeline', { taskQueue: 'bench', workflowId: `pipeline-${i}`, args: [{ spec }] });
    pipelineMs.push(performance.now() - t);
    t = performance.now();
    await client.workflow.execute('bareActivities', { taskQueue: 'bench', workflowId: `bare-${i}`, args: [activities] });
    bareMs.push(performance.now() - t);
    if ((i + 1) % 10 === 0) process.stderr.write(`  ${i + 1}/${runs}\n`);
  }
});

const p = median(pipelineMs);
const b = median(bareMs);
const rows = [
  ['workflow', 'median ms', 'p90 ms', 'runs'],
  ['bare: N no-op activities', b.toFixed(1), [...bareMs].sort((x, y) => x - y)[Math.floor(runs * 0.9)]!.toFixed(1), String(runs)],
  ['hybridPipeline, no-op activities', p.toFixed(1), [...pipelineMs].sort((x, y) => x - y)[Math.floor(runs * 0.9)]!.toFixed(1), String(runs)],
];
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
console.log(`\noverhead ratio (pipeline / bare, medians): ${(p / b).toFixed(2)}  (goal ≤ 1.5)`);

await clientConn.close();
await connection.close();
await server.stop();
rmSync(dir, { recursive: true, force: true });
