// `npm run bench:scale`: 200 pipelines at once on a full Temporal server (PostgreSQL persistence, mTLS
// required: test/scale/temporal-server.ts), with no-op backends (test/fake-activities.ts), against 200
// bare workflows that call the same number of no-op activities, on the same server and worker, in
// alternating rounds of the same run. Prints throughput (workflows over the span from the batch's
// first start to its last close) and p50/p95 start-to-close latency, all in server times, with the
// pipeline/bare ratio; the goal is ≤ 1.1× bare. The verdict takes each ratio's median over the rounds
// (each round compares two batches run back to back), so that a burst of load from elsewhere on the
// machine during one batch does not decide it; the pooled figures are printed too.
// Usage: npm run bench:scale -- [concurrent=200] [rounds=3]
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validatePipelineSpec } from '../contract/parse.js';
import { fakeActivities } from '../test/fake-activities.js';
import { serverBuilt, startFullServer } from '../test/scale/temporal-server.js';
import { createTandemWorker } from '../workers/worker.js';

const concurrent = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 3);
const GOAL = 1.1;
if (!serverBuilt()) {
  console.error('the Temporal server is not built: run npm run temporal-server:install');
  process.exit(1);
}
Runtime.install({ logger: new DefaultLogger('WARN') });
const server = await startFullServer();
console.log(`Temporal ${server.address}: PostgreSQL persistence and visibility, mTLS required; ready in ${(server.startupMs / 1000).toFixed(1)} s`);
try {
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)), logger: new DefaultLogger('WARN') });
  const fake = fakeActivities();
  // Tandem's own worker (its sinks and activity interceptor included), serving both kinds of workflow.
  const home = mkdtempSync(join(tmpdir(), 'tandem-bench-scale-'));
  const { address, ...tls } = server.connection;
  const { worker, connection } = await createTandemWorker({ address, connection: tls, namespace: server.namespace, taskQueue: 'bench-scale', home, workflowBundle, activities: { ...fake.acts, noop: async (i: number) => i } });
  const clientConn = await Connection.connect(server.connection);
  const client = new Client({ connection: clientConn, namespace: server.namespace });
  const spec = validatePipelineSpec({ name: 'bench' });

  /** CPU seconds used so far by this process (worker and client), the Temporal server, and PostgreSQL. */
  const ticks = Number(process.env.CLK_TCK ?? 100);
  const procCpu = (pid: number): number => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(f[11]) + Number(f[12])) / ticks; // utime, stime
    } catch {
      return 0;
    }
  };
  const postgresCpu = (): number => {
    let total = procCpu(server.pgPid);
    for (const d of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      try {
        if (Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === server.pgPid) total += procCpu(Number(d));
      } catch {
        /* gone */
      }
    }
    return total;
  };
  const cpuNow = () => {
    const u = process.cpuUsage();
    return { worker: (u.user + u.system) / 1e6, server: procCpu(server.pid), postgres: postgresCpu() };
  };

  interface Batch {
    /** CPU seconds during the batch. */
    cpu: { worker: number; server: number; postgres: number };
    latencies: number[];
    /** First start to last close, in server time. */
    spanMs: number;
    startPhaseMs: number;
    /** Workflow tasks that timed out (e.g. a sticky task nobody took in time), in a sample of the batch's histories. */
    taskTimeouts: number;
  }
  /** Starts `concurrent` workflows at once and waits for all; latency is the server's start-to-close time. */
  async function batch(kind: 'pipeline' | 'bare', round: number, activities: number): Promise<Batch> {
    const ids = Array.from({ length: concurrent }, (_, i) => `${kind}-${round}-${i}`);
    const c0 = cpuNow();
    const t0 = performance.now();
    const handles = await Promise.all(
      ids.map((workflowId) =>
        kind === 'pipeline'
          ? client.workflow.start('hybridPipeline', { taskQueue: 'bench-scale', workflowId, args: [{ spec }] })
          : client.workflow.start('bareActivities', { taskQueue: 'bench-scale', workflowId, args: [activities] }),
      ),
    );
    const startPhaseMs = performance.now() - t0;
    await Promise.all(handles.map((h) => h.result()));
    const c1 = cpuNow();
    const cpu = { worker: c1.worker - c0.worker, server: c1.server - c0.server, postgres: c1.postgres - c0.postgres };
    const times = await Promise.all(handles.map(async (h) => {
      const d = await h.describe();
      return { start: d.startTime.getTime(), close: d.closeTime!.getTime() };
    }));
    let taskTimeouts = 0;
    for (const h of handles.slice(0, 20)) taskTimeouts += ((await h.fetchHistory()).events ?? []).filter((e) => e.workflowTaskTimedOutEventAttributes).length;
    return {
      latencies: times.map((t) => t.close - t.start),
      spanMs: Math.max(...times.map((t) => t.close)) - Math.min(...times.map((t) => t.start)),
      startPhaseMs,
      taskTimeouts,
      cpu,
    };
  }

  const results: Record<'pipeline' | 'bare', Batch[]> = { pipeline: [], bare: [] };
  let activities = 0;
  const events = { pipeline: 0, bare: 0 };
  await worker.runUntil(async () => {
    // The number of activities one pipeline run schedules (from its history): the baseline does as many.
    await client.workflow.execute('hybridPipeline', { taskQueue: 'bench-scale', workflowId: 'warmup-pipeline', args: [{ spec }] });
    const history = await client.workflow.getHandle('warmup-pipeline').fetchHistory();
    activities = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length;
    events.pipeline = history.events?.length ?? 0;
    await client.workflow.execute('bareActivities', { taskQueue: 'bench-scale', workflowId: 'warmup-bare', args: [activities] });
    events.bare = (await client.workflow.getHandle('warmup-bare').fetchHistory()).events?.length ?? 0;
    console.log(`${concurrent} concurrent workflows per batch, ${rounds} round(s), alternating; ${activities} activities per workflow`);
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first, so neither always runs on a warmer (or more loaded) server.
      const order: ('pipeline' | 'bare')[] = r % 2 ? ['pipeline', 'bare'] : ['bare', 'pipeline'];
      for (const kind of order) {
        const b = await batch(kind, r, activities);
        results[kind].push(b);
        process.stderr.write(`  round ${r + 1} ${kind}: ${(b.spanMs / 1000).toFixed(1)} s first start to last close (starts took ${(b.startPhaseMs / 1000).toFixed(1)} s; ${b.taskTimeouts} workflow task timeouts in 20 histories; CPU s: worker+client ${b.cpu.worker.toFixed(1)}, server ${b.cpu.server.toFixed(1)}, PostgreSQL ${b.cpu.postgres.toFixed(1)})\n`);
      }
    }
  });
  await clientConn.close();
  await connection.close();
  rmSync(home, { recursive: true, force: true });

  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  };
  const summary = (bs: Batch[]) => {
    const all = bs.flatMap((b) => b.latencies);
    const wall = bs.reduce((t, b) => t + b.spanMs, 0);
    const cpu = (k: keyof Batch['cpu']) => (1000 * bs.reduce((t, b) => t + b.cpu[k], 0)) / all.length;
    return { n: all.length, throughput: all.length / (wall / 1000), p50: pct(all, 50), p95: pct(all, 95), cpuWorker: cpu('worker'), cpuServer: cpu('server'), cpuPostgres: cpu('postgres') };
  };
  const bare = summary(results.bare);
  const pipe = summary(results.pipeline);
  const ratioOf = (p: ReturnType<typeof summary>, b: ReturnType<typeof summary>) => ({ throughput: b.throughput / p.throughput, p50: p.p50 / b.p50, p95: p.p95 / b.p95 });
  const pooled = ratioOf(pipe, bare);
  const perRound = results.pipeline.map((p, r) => ratioOf(summary([p]), summary([results.bare[r]!])));
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const median = { throughput: med(perRound.map((r) => r.throughput)), p50: med(perRound.map((r) => r.p50)), p95: med(perRound.map((r) => r.p95)) };
  const x = (v: number) => `${v.toFixed(2)}×`;
  // CPU is what the machine spent per workflow, whatever else ran on it meanwhile: the steadier measure on shared cores.
  const cpuTotal = (m: ReturnType<typeof summary>) => m.cpuWorker + m.cpuServer + m.cpuPostgres;
  const rows = [
    ['workflow', 'runs', 'history events', 'throughput wf/s', 'p50 ms', 'p95 ms', 'CPU ms/wf: worker', 'server', 'PostgreSQL', 'total'],
    [`bare: ${activities} no-op activities`, String(bare.n), String(events.bare), bare.throughput.toFixed(1), bare.p50.toFixed(0), bare.p95.toFixed(0), bare.cpuWorker.toFixed(0), bare.cpuServer.toFixed(0), bare.cpuPostgres.toFixed(0), cpuTotal(bare).toFixed(0)],
    ['hybridPipeline, no-op backends', String(pipe.n), String(events.pipeline), pipe.throughput.toFixed(1), pipe.p50.toFixed(0), pipe.p95.toFixed(0), pipe.cpuWorker.toFixed(0), pipe.cpuServer.toFixed(0), pipe.cpuPostgres.toFixed(0), cpuTotal(pipe).toFixed(0)],
    ['ratio, pooled (pipeline cost / bare)', '', x(events.pipeline / events.bare), x(pooled.throughput), x(pooled.p50), x(pooled.p95), x(pipe.cpuWorker / bare.cpuWorker), x(pipe.cpuServer / bare.cpuServer), x(pipe.cpuPostgres / bare.cpuPostgres), x(cpuTotal(pipe) / cpuTotal(bare))],
    ...perRound.map((r, i) => [`ratio, round ${i + 1}`, '', '', x(r.throughput), x(r.p50), x(r.p95), '', '', '', '']),
    ['ratio, median of rounds', '', '', x(median.throughput), x(median.p50), x(median.p95), '', '', '', '']
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  console.log('');
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
  const worst = Math.max(median.throughput, median.p50, median.p95);
  console.log(`\ngoal ≤ ${GOAL}× bare (throughput and p50/p95 latency, median of ${rounds} rounds): ${worst <= GOAL ? 'met' : 'NOT met'} (worst ${x(worst)}; pooled worst ${x(Math.max(pooled.throughput, pooled.p50, pooled.p95))}); CPU per workflow ${x(cpuTotal(pipe) / cpuTotal(bare))} bare`);
} finally {
  await server.stop();
}
