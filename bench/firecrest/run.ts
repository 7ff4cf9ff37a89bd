// npm run bench:firecrest — 1,000 concurrently watched Slurm jobs through FirecREST (jobs simulated
// inside the test gateway). Each job is watched with awaitJob's schedule (0.2 s doubling to pollMax,
// at most 1 s apart while RUNNING) through one FirecrestJobBackend, as one worker would. Reports
// polling requests per job-hour and the worker's RSS. Goals: ≤ 120 requests/job-hour, ≤ 300 MB RSS.
import { fork } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FirecrestJobBackend } from '../../backends/slurm/firecrest-backend.js';
import { classifyJobState } from '../../contract/outcome.js';
import { ResourcesSchema } from '../../contract/pipeline.js';

const JOBS = Number(process.env.BENCH_JOBS ?? 1000);
const JOB_MS = Number(process.env.BENCH_JOB_MS ?? 60_000);
const POLL_MAX_MS = 64_000;

const child = fork(fileURLToPath(new URL('./gateway-main.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_JOB_MS: String(JOB_MS) }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
const first = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
const { baseUrl, tokenUrl } = JSON.parse(first) as { baseUrl: string; tokenUrl: string };
const gatewayStats = () => new Promise<{ stats: { requests: number; byOperation: Record<string, number>; tokenRequests: number }; violations: number }>((resolve) => {
  child.once('message', (m) => resolve(m as never));
  child.send('stats');
});

const backend = new FirecrestJobBackend({ site: 'sim', system: 'sim', workDir: '/tmp/tandem-bench', firecrest: { baseUrl, credentials: { tokenUrl, clientId: 'bench', clientSecret: 'bench-secret' } } });
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);

// Submit with bounded concurrency (each submit looks up by name first, as in production).
const refs: string[] = [];
const resources = ResourcesSchema.parse({});
let next = 0;
const t0 = Date.now();
await Promise.all(Array.from({ length: 50 }, async () => {
  while (next < JOBS) {
    const i = next++;
    const ref = await backend.submit({ name: `tandem-bench-${i}-train-1`, command: ['/bin/true'], env: {}, resources, walltimeMs: 3_600_000 });
    refs.push(ref.jobId);
  }
}));
const submitS = (Date.now() - t0) / 1000;
const before = await gatewayStats();

// Watch: awaitJob's loop, minus Temporal.
const watchStart = Date.now();
let watchedMs = 0;
let statusCalls = 0;
await Promise.all(refs.map(async (jobId) => {
  const start = Date.now();
  let delay = 200;
  for (;;) {
    statusCalls++;
    const st = await backend.status(jobId).catch(() => undefined);
    if (st && classifyJobState(st.state) !== 'active') {
      if (st.state !== 'COMPLETED') throw new Error(`job ${jobId} ended ${st.state}`);
      break;
    }
    if (st?.state === 'RUNNING') delay = Math.min(delay, 1000);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, POLL_MAX_MS);
  }
  watchedMs += Date.now() - start;
}));
const wallS = (Date.now() - watchStart) / 1000;
const after = await gatewayStats();
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);

const polling = after.stats.requests - before.stats.requests;
const jobHours = watchedMs / 3_600_000;
const perJobHour = polling / jobHours;
const rssMB = peakRss / 1024 / 1024;
const row = (k: string, v: string, goal = '') => console.log(`| ${k.padEnd(34)} | ${v.padStart(14)} | ${goal.padEnd(10)} |`);
console.log(`\nFirecREST polling benchmark: ${JOBS} jobs of ${JOB_MS / 1000} s, watched concurrently by one backend\n`);
console.log(`| ${'metric'.padEnd(34)} | ${'value'.padStart(14)} | ${'goal'.padEnd(10)} |`);
console.log(`|${'-'.repeat(36)}|${'-'.repeat(16)}|${'-'.repeat(12)}|`);
row('jobs submitted (s)', `${JOBS} (${submitS.toFixed(1)} s)`);
row('watch wall time (s)', wallS.toFixed(1));
row('status() calls by watchers', String(statusCalls));
row('HTTP requests while watching', String(polling));
row('job-hours watched', jobHours.toFixed(2));
row('requests per job-hour', perJobHour.toFixed(1), '≤ 120');
row('worker peak RSS (MB)', rssMB.toFixed(0), '≤ 300');
row('token fetches', String(backend.client.tokens.fetches));
row('contract violations', String(after.violations), '0');
child.kill();
const ok = perJobHour <= 120 && rssMB <= 300 && after.violations === 0;
console.log(`\n${ok ? 'PASS' : 'FAIL'}: goals ≤ 120 requests/job-hour and ≤ 300 MB RSS`);
process.exit(ok ? 0 : 1);
