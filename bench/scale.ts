// `npm run bench:scale`: 200 pipelines at once on a full Temporal server (PostgreSQL persistence, mTLS
// required: test/scale/temporal-server.ts), served by two worker processes (bench/scale-worker.ts, as
// test:scale runs one per host) with no-op backends (test/fake-activities.ts), against 200 bare workflows
// that call the same number of no-op activities (the pipeline's activities and local activities, all
// as ordinary activities), on the same server and workers, in alternating rounds of the same run.
// Prints throughput (workflows over the span from the batch's first start to its last close) and
// p50/p95 start-to-close latency, all in server times, with the pipeline/bare ratio; the goal is ≤ 1.1×
// bare. The verdict takes each ratio's median over the rounds (each round compares two batches run back
// to back), so that a burst of load from elsewhere on the machine during one batch does not decide it;
// the pooled figures are printed too. CPU per workflow is split into the two worker processes, the
// Temporal server and PostgreSQL; every history is read for activities that waited out a timeout
// (stalled) and workflow tasks that timed out. Nothing failed, so both must be 0.
// Usage: npm run bench:scale -- [concurrent=200] [rounds=3]
//        npm run bench:scale -- memory [running=1000]   worker RSS with that many pipelines running at once
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validatePipelineSpec } from '../contract/parse.js';
import { isTransientGrpc } from '../contract/error-chain.js';
import { serverBuilt, startFullServer } from '../test/scale/temporal-server.js';

const memoryRun = process.argv[2] === 'memory';

interface Batch {
  /** CPU seconds during the batch: the two worker processes, the server, PostgreSQL, this process (the client). */
  cpu: { worker: number; server: number; postgres: number; client: number };
  latencies: number[];
  /** First start to last close, in server time. */
  spanMs: number;
  startPhaseMs: number;
  /** Activity attempts that ended in a timeout, by activity type. */
  stalled: Record<string, number>;
  /** Workflow tasks that timed out (e.g. a sticky task nobody took in time). */
  taskTimeouts: number;
  /** The larger worker process's peak resident set during the batch. */
  peakRssMb: number;
}
type Spec = ReturnType<typeof validatePipelineSpec>;

/** Retries a client call that the loaded server answered with a transient status (DEADLINE_EXCEEDED, UNAVAILABLE, ...; a long poll for a result included). */
async function patiently<T>(call: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await call();
    } catch (e) {
      if (!isTransientGrpc(e) || i >= 20) throw e;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
const TIMEOUT_TYPES = ['unspecified', 'start-to-close', 'schedule-to-start', 'schedule-to-close', 'heartbeat'];
const concurrent = memoryRun ? Number(process.argv[3] ?? 1000) : Number(process.argv[2] ?? 200);
const rounds = memoryRun ? 0 : Number(process.argv[3] ?? 3);
const GOAL = 1.1;
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const QUEUE = 'bench-scale';
if (!serverBuilt()) {
  console.error('the Temporal server is not built: run npm run temporal-server:install');
  process.exit(1);
}
Runtime.install({ logger: new DefaultLogger('WARN') });
const server = await startFullServer();
console.log(`Temporal ${server.address}: PostgreSQL persistence and visibility, mTLS required; ready in ${(server.startupMs / 1000).toFixed(1)} s`);
const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-scale-'));
const workers: { proc: ChildProcess; out: string[] }[] = [];
try {
  const bundle = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)), logger: new DefaultLogger('WARN') });
  const bundlePath = join(dir, 'workflows.js');
  writeFileSync(bundlePath, bundle.code);
  // Two worker processes, each Tandem's own worker configured from the environment (TANDEM_WORKER_* too).
  for (let i = 0; i < 2; i++) {
    const out: string[] = [];
    const proc = spawn(process.execPath, ['--import', TSX, fileURLToPath(new URL('./scale-worker.ts', import.meta.url))], {
      env: { ...process.env, NODE_OPTIONS: '', ...server.env, TANDEM_TASK_QUEUE: QUEUE, SCALE_BUNDLE: bundlePath, ...(memoryRun ? { SCALE_BLOCK: 'train' } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const st of [proc.stdout!, proc.stderr!]) st.on('data', (d: Buffer) => out.push(d.toString()));
    workers.push({ proc, out });
  }
  for (const w of workers) {
    for (let t = 0; !w.out.join('').includes('worker ready'); t++) {
      if (w.proc.exitCode !== null || t > 1200) throw new Error(`a worker process did not start: ${w.out.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const clientConn = await Connection.connect(server.connection);
  const client = new Client({ connection: clientConn, namespace: server.namespace });
  const spec = validatePipelineSpec({ name: 'bench' });

  /** CPU seconds used so far by the two worker processes, the Temporal server, PostgreSQL, and this process (the client). */
  const ticks = Number(process.env.CLK_TCK ?? 100);
  const procCpu = (pid: number): number => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(f[11]) + Number(f[12])) / ticks; // utime, stime
    } catch {
      return 0;
    }
  };
  /** The postmaster's own CPU and that of its reaped backends (cutime, cstime): a backend that exits between two samples still counts. */
  const reapedCpu = (pid: number): number => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / ticks; // utime, stime, cutime, cstime
    } catch {
      return 0;
    }
  };
  const postgresCpu = (): number => {
    let total = reapedCpu(server.pgPid);
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
    return { worker: workers.reduce((t, w) => t + procCpu(w.proc.pid!), 0), server: procCpu(server.pid), postgres: postgresCpu(), client: (u.user + u.system) / 1e6 };
  };
  /** Resident set of one process, MB. */
  const rssMb = (pid: number): number => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  };
  /** The largest RSS either worker reached while `work` ran (sampled every 250 ms). */
  async function peakRss<T>(work: () => Promise<T>): Promise<{ value: T; peakMb: number }> {
    let peakMb = 0;
    const sample = () => (peakMb = Math.max(peakMb, ...workers.map((w) => rssMb(w.proc.pid!))));
    const timer = setInterval(sample, 250);
    try {
      const value = await work();
      sample();
      return { value, peakMb };
    } finally {
      clearInterval(timer);
    }
  }

  /** What the batch's histories say went wrong although nothing failed: activity attempts that timed out, workflow task timeouts. */
  async function timeoutsOf(handles: WorkflowHandle[]): Promise<Pick<Batch, 'stalled' | 'taskTimeouts'>> {
    const stalled: Record<string, number> = {};
    const taskTimeoutsBy: Record<string, number> = {};
    let taskTimeouts = 0;
    for (let i = 0; i < handles.length; i += 20) {
      await Promise.all(handles.slice(i, i + 20).map(async (h) => {
        const events = (await patiently(() => h.fetchHistory())).events ?? [];
        const typeOf = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!.activityType!.name!]));
        for (const e of events) {
          if (e.workflowTaskTimedOutEventAttributes) {
            taskTimeouts++;
            const k = `workflow task (${TIMEOUT_TYPES[e.workflowTaskTimedOutEventAttributes.timeoutType ?? 0]})`;
            taskTimeoutsBy[k] = (taskTimeoutsBy[k] ?? 0) + 1;
          }
          const st = e.activityTaskStartedEventAttributes;
          // A started event records the last attempt: attempt n > 1 after a timeout means n - 1 timed-out attempts at most; count the retries.
          if (st && (st.attempt ?? 1) > 1 && st.lastFailure?.timeoutFailureInfo) {
            const name = `${typeOf.get(String(st.scheduledEventId)) ?? '?'} (${TIMEOUT_TYPES[st.lastFailure.timeoutFailureInfo.timeoutType ?? 0]})`;
            stalled[name] = (stalled[name] ?? 0) + (st.attempt! - 1);
          }
          if (e.activityTaskTimedOutEventAttributes) {
            const name = typeOf.get(String(e.activityTaskTimedOutEventAttributes.scheduledEventId)) ?? '?';
            stalled[name] = (stalled[name] ?? 0) + 1;
          }
        }
      }));
    }
    if (taskTimeouts) process.stderr.write(`  ${Object.entries(taskTimeoutsBy).map(([k, n]) => `${k}: ${n}`).join(', ')}\n`);
    return { stalled, taskTimeouts };
  }
  /** Starts `concurrent` workflows at once and waits for all; latency is the server's start-to-close time. */
  async function batch(kind: 'pipeline' | 'bare', round: number, activities: number): Promise<Batch> {
    const ids = Array.from({ length: concurrent }, (_, i) => `${kind}-${round}-${i}`);
    const c0 = cpuNow();
    const t0 = performance.now();
    let startPhaseMs = 0;
    const { value: handles, peakMb } = await peakRss(async () => {
      const hs = await Promise.all(
        ids.map((workflowId) =>
          kind === 'pipeline'
            ? client.workflow.start('hybridPipeline', { taskQueue: QUEUE, workflowId, args: [{ spec }] })
            : client.workflow.start('bareActivities', { taskQueue: QUEUE, workflowId, args: [activities] }),
        ),
      );
      startPhaseMs = performance.now() - t0;
      await Promise.all(hs.map((h) => patiently(() => h.result())));
      return hs;
    });
    const c1 = cpuNow();
    const cpu = { worker: c1.worker - c0.worker, server: c1.server - c0.server, postgres: c1.postgres - c0.postgres, client: c1.client - c0.client };
    const times = await Promise.all(handles.map(async (h) => {
      const d = await patiently(() => h.describe());
      return { start: d.startTime.getTime(), close: d.closeTime!.getTime() };
    }));
    return {
      latencies: times.map((t) => t.close - t.start),
      spanMs: Math.max(...times.map((t) => t.close)) - Math.min(...times.map((t) => t.start)),
      startPhaseMs,
      ...(await timeoutsOf(handles)),
      cpu,
      peakRssMb: peakMb,
    };
  }

  if (memoryRun) await memory(client, spec, workers.map((w) => w.proc.pid!), rssMb);
  else await compare(client, spec, batch);
  await clientConn.close();
  if (process.env.SCALE_WORKER_LOG) for (const w of workers) process.stderr.write(`--- worker ${w.proc.pid} ---\n${w.out.join('').slice(-4000)}\n`);
} finally {
  for (const w of workers) if (w.proc.exitCode === null) w.proc.kill('SIGTERM');
  for (const w of workers) await new Promise<void>((r) => (w.proc.exitCode !== null || w.proc.signalCode !== null ? r() : w.proc.once('exit', () => r())));
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** The comparison: warm-up runs, then alternating batches of pipelines and bare workflows, and the table. */
async function compare(client: Client, spec: Spec, batch: (kind: 'pipeline' | 'bare', round: number, activities: number) => Promise<Batch>): Promise<void> {
  // The number of activities one pipeline run calls (from its history: activities and local activities): the baseline calls as many.
  await client.workflow.execute('hybridPipeline', { taskQueue: QUEUE, workflowId: 'warmup-pipeline', args: [{ spec }] });
  const history = await client.workflow.getHandle('warmup-pipeline').fetchHistory();
  const evs = history.events ?? [];
  const remote = evs.filter((e) => e.activityTaskScheduledEventAttributes).length;
  const local = evs.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
  const activities = remote + local;
  const events = { pipeline: evs.length, bare: 0 };
  await client.workflow.execute('bareActivities', { taskQueue: QUEUE, workflowId: 'warmup-bare', args: [activities] });
  events.bare = (await client.workflow.getHandle('warmup-bare').fetchHistory()).events?.length ?? 0;
  console.log(`${concurrent} concurrent workflows per batch, ${rounds} round(s), alternating; two worker processes; ${activities} activities per workflow (the pipeline: ${remote} activities, ${local} local)`);
  const results: Record<'pipeline' | 'bare', Batch[]> = { pipeline: [], bare: [] };
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so neither always runs on a warmer (or more loaded) server.
    const order: ('pipeline' | 'bare')[] = r % 2 ? ['pipeline', 'bare'] : ['bare', 'pipeline'];
    for (const kind of order) {
      const b = await batch(kind, r, activities);
      results[kind].push(b);
      const stalled = Object.entries(b.stalled).map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
      process.stderr.write(`  round ${r + 1} ${kind}: ${(b.spanMs / 1000).toFixed(1)} s first start to last close (starts took ${(b.startPhaseMs / 1000).toFixed(1)} s; timed-out activity attempts: ${stalled}; ${b.taskTimeouts} workflow task timeouts; CPU s: workers ${b.cpu.worker.toFixed(1)}, server ${b.cpu.server.toFixed(1)}, PostgreSQL ${b.cpu.postgres.toFixed(1)}, client ${b.cpu.client.toFixed(1)}; worker RSS ≤ ${b.peakRssMb.toFixed(0)} MB)\n`);
    }
  }

  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  };
  const summary = (bs: Batch[]) => {
    const all = bs.flatMap((b) => b.latencies);
    const wall = bs.reduce((t, b) => t + b.spanMs, 0);
    const cpu = (k: keyof Batch['cpu']) => (1000 * bs.reduce((t, b) => t + b.cpu[k], 0)) / all.length;
    const stalled = bs.reduce((t, b) => t + Object.values(b.stalled).reduce((a, n) => a + n, 0), 0);
    return { n: all.length, throughput: all.length / (wall / 1000), p50: pct(all, 50), p95: pct(all, 95), cpuWorker: cpu('worker'), cpuServer: cpu('server'), cpuPostgres: cpu('postgres'), stalled, taskTimeouts: bs.reduce((t, b) => t + b.taskTimeouts, 0), rss: Math.max(...bs.map((b) => b.peakRssMb)) };
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
  const row = (name: string, m: ReturnType<typeof summary>, ev: number) => [name, String(m.n), String(ev), m.throughput.toFixed(1), m.p50.toFixed(0), m.p95.toFixed(0), m.cpuWorker.toFixed(0), m.cpuServer.toFixed(0), m.cpuPostgres.toFixed(0), cpuTotal(m).toFixed(0), String(m.stalled), String(m.taskTimeouts), m.rss.toFixed(0)];
  const rows = [
    ['workflow', 'runs', 'history events', 'throughput wf/s', 'p50 ms', 'p95 ms', 'CPU ms/wf: workers', 'server', 'PostgreSQL', 'total', 'stalled activities', 'task timeouts', 'worker RSS MB'],
    row(`bare: ${activities} no-op activities`, bare, events.bare),
    row('hybridPipeline, no-op backends', pipe, events.pipeline),
    ['ratio, pooled (pipeline cost / bare)', '', x(events.pipeline / events.bare), x(pooled.throughput), x(pooled.p50), x(pooled.p95), x(pipe.cpuWorker / bare.cpuWorker), x(pipe.cpuServer / bare.cpuServer), x(pipe.cpuPostgres / bare.cpuPostgres), x(cpuTotal(pipe) / cpuTotal(bare)), '', '', ''],
    ...perRound.map((r, i) => [`ratio, round ${i + 1}`, '', '', x(r.throughput), x(r.p50), x(r.p95), '', '', '', '', '', '', '']),
    ['ratio, median of rounds', '', '', x(median.throughput), x(median.p50), x(median.p95), '', '', '', '', '', '', ''],
  ];
  printTable(rows);
  const worst = Math.max(median.throughput, median.p50, median.p95);
  console.log(`\ngoal ≤ ${GOAL}× bare (throughput and p50/p95 latency, median of ${rounds} rounds): ${worst <= GOAL ? 'met' : 'NOT met'} (worst ${x(worst)}; pooled worst ${x(Math.max(pooled.throughput, pooled.p50, pooled.p95))}); CPU per workflow ${x(cpuTotal(pipe) / cpuTotal(bare))} bare; ${pipe.stalled + bare.stalled} activity attempts timed out, ${pipe.taskTimeouts + bare.taskTimeouts} workflow tasks`);
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  console.log('');
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
}

/**
 * Bounded memory: `concurrent` pipelines started at once whose train watches never end (the workers'
 * no-op backends heartbeat them until cancelled), so every one is running at once; the two workers' RSS
 * is sampled until all are training (visibility: TandemStage = 'train'), then they are terminated. Each
 * worker runs at most its activity slots of watches (TANDEM_WORKER_MAX_ACTIVITIES); the other watches
 * wait on the server, scheduled, for a free slot.
 */
async function memory(client: Client, spec: Spec, pids: number[], rssMb: (pid: number) => number): Promise<void> {
  const rss = () => pids.map(rssMb);
  const idle = rss();
  const peak = pids.map(() => 0);
  const sample = () => rss().forEach((v, i) => (peak[i] = Math.max(peak[i]!, v)));
  const timer = setInterval(sample, 250);
  const t0 = performance.now();
  const ids = Array.from({ length: concurrent }, (_, i) => `memory-${i}`);
  const handles: WorkflowHandle[] = [];
  for (let i = 0; i < ids.length; i += 100) handles.push(...(await Promise.all(ids.slice(i, i + 100).map((workflowId) => client.workflow.start('hybridPipeline', { taskQueue: QUEUE, workflowId, args: [{ spec }] })))));
  let training = 0;
  const limitMs = Number(process.env.SCALE_MEMORY_LIMIT_MS ?? 15 * 60_000);
  while (performance.now() - t0 < limitMs) {
    await new Promise((r) => setTimeout(r, 5000));
    training = (await client.workflow.count(`WorkflowType = 'hybridPipeline' AND ExecutionStatus = 'Running' AND TandemStage = 'train'`)).count;
    process.stderr.write(`  ${((performance.now() - t0) / 1000).toFixed(0)} s: ${training}/${concurrent} pipelines training; worker RSS ${rss().map((v) => v.toFixed(0)).join(' + ')} MB\n`);
    if (training >= concurrent) break;
  }
  // Settle: every watch either runs on a worker (started, heartbeating) or waits on the server (scheduled).
  await new Promise((r) => setTimeout(r, 10_000));
  sample();
  clearInterval(timer);
  const settled = rss();
  const watches = { started: 0, scheduled: 0 };
  for (let i = 0; i < handles.length; i += 50) {
    for (const d of await Promise.all(handles.slice(i, i + 50).map((h) => h.describe()))) {
      const w = (d.raw.pendingActivities ?? []).find((a) => a.activityType?.name === 'awaitJob');
      if (w) watches[w.state === 2 ? 'started' : 'scheduled']++; // PENDING_ACTIVITY_STATE_STARTED
    }
  }
  for (let i = 0; i < handles.length; i += 100) await Promise.all(handles.slice(i, i + 100).map((h) => h.terminate('bench:scale memory run done').catch(() => undefined)));
  printTable([
    ['pipelines running', 'worker', 'RSS idle MB', 'RSS peak MB', 'RSS all running MB'],
    ...pids.map((_, i) => [String(concurrent), `process ${i + 1}`, idle[i]!.toFixed(0), peak[i]!.toFixed(0), settled[i]!.toFixed(0)]),
  ]);
  console.log(`\n${training}/${concurrent} pipelines training after ${((performance.now() - t0) / 1000).toFixed(0)} s; train watches running on the workers ${watches.started}, scheduled and not yet on a worker ${watches.scheduled}`);
}
