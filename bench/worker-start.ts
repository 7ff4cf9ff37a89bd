// `npm run bench:worker-start`: how long a Tandem worker process takes from its spawn to polling its
// task queue, bundling the workflow code at its start (the default) against loading the bundle
// `tandem bundle` wrote (TANDEM_WORKFLOW_BUNDLE); both for the compiled package (`tandem worker` from
// bin/tandem.js → dist/, what an installed Tandem runs; the bundle from its own `tandem bundle`) and for
// workers/main.ts through tsx (`npm run worker` in a checkout). Median
// of N runs each, interleaved so machine load hits both rows alike, on a real Temporal dev server; the
// CPU column is the worker's own user + system time (its bundler child included). Prints the table.
// Usage: npm run bench:worker-start -- [runs=3]   (builds dist/ first when it is missing)
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startDevServer } from '../workers/dev-server.js';
import { workerBundleFlavour, writePrebuiltBundle } from '../workers/prebuilt-bundle.js';

const runs = Number(process.argv[2] ?? 3);
const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const bin = fileURLToPath(new URL('../bin/tandem.js', import.meta.url));
if (!existsSync(new URL('../dist/cli/main.js', import.meta.url))) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-worker-start-'));
const server = await startDevServer({ dbFile: join(dir, 'temporal.db') });

/** Spawn → "polling task queue" on stdout, in seconds, and the process tree's CPU seconds by then. */
async function startOnce(argv: string, env: Record<string, string>, i: number): Promise<{ s: number; cpu: number }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TANDEM_') && !k.startsWith('OTEL_')));
  const t0 = process.hrtime.bigint();
  // bash's `times` after the worker exits: its children's user + system CPU (the worker and its bundler).
  const child = spawn('bash', ['-c', `"${process.execPath}" ${argv}; times`], {
    cwd: root,
    env: { ...inherited, NODE_OPTIONS: '', TEMPORAL_ADDRESS: server.address, TANDEM_HOME: join(dir, `home-${i}`), TANDEM_TASK_QUEUE: `bench-start-${i}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let s = 0;
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (!s && out.includes('polling task queue')) {
      s = Number(process.hrtime.bigint() - t0) / 1e9;
      // SIGTERM the worker (bash's child), not bash: bash then prints its children's times.
      spawn('pkill', ['-TERM', '-P', String(child.pid)]);
    }
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (!s) throw new Error(`the worker exited (${code}) before polling: ${err || out}`);
  // `times` prints the shell's line, then its children's: "0m1.234s 0m0.567s".
  const lines = out.trim().split('\n');
  const [user, sys] = (lines.at(-1) ?? '').split(/\s+/).map((t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t);
    return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  });
  return { s, cpu: user! + sys! };
}

try {
  const file = join(dir, 'workflows.js');
  const t = Date.now();
  await writePrebuiltBundle(file, workerBundleFlavour({ encrypted: false, tracing: false }));
  const buildS = (Date.now() - t) / 1000;
  // The compiled package's bundle, by its own CLI (what an operator runs once per release).
  const compiledFile = join(dir, 'workflows-compiled.js');
  execFileSync(process.execPath, [bin, 'bundle', compiledFile], { cwd: root, stdio: 'ignore', env: { ...process.env, NODE_OPTIONS: '' } });
  const row = (name: string, argv: string, env: Record<string, string>) => ({ name, argv, env, s: [] as number[], cpu: [] as number[] });
  const rows = [
    row('compiled, bundles at start', `${bin} worker`, {}),
    row('compiled, prebuilt bundle', `${bin} worker`, { TANDEM_WORKFLOW_BUNDLE: compiledFile }),
    row('tsx, bundles at start', `--import ${tsx} workers/main.ts`, {}),
    row('tsx, prebuilt bundle', `--import ${tsx} workers/main.ts`, { TANDEM_WORKFLOW_BUNDLE: file }),
  ];
  for (let i = 0; i < runs; i++) {
    for (const [j, r] of rows.entries()) {
      const m = await startOnce(r.argv, r.env, i * rows.length + j);
      r.s.push(m.s);
      r.cpu.push(m.cpu);
    }
  }
  const median = (xs: number[]) => {
    const v = [...xs].sort((a, b) => a - b);
    return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
  };
  // Each prebuilt row against the default row of the same build.
  const baseOf = (k: number) => median(rows[k - (k % 2)]!.s);
  console.log(`tandem worker start, spawn to polling, median of ${runs} runs (node ${process.version}); building a prebuilt bundle took ${buildS.toFixed(1)} s, once\n`);
  console.log(`${'worker'.padEnd(28)} ${'median s'.padStart(9)} ${'min s'.padStart(7)} ${'CPU s'.padStart(7)} ${'vs bundling'.padStart(12)}`);
  for (const [k, r] of rows.entries()) console.log(`${r.name.padEnd(28)} ${median(r.s).toFixed(2).padStart(9)} ${Math.min(...r.s).toFixed(2).padStart(7)} ${median(r.cpu).toFixed(2).padStart(7)} ${`${(median(r.s) / baseOf(k)).toFixed(2)}×`.padStart(12)}`);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
