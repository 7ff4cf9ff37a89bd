// The chaos matrix (`npm run chaos [-- a,b,…]`, CHAOS_TRIALS=50 for row a): a real Temporal dev server,
// two real Slurm sites (zurich via slurmrestd, lugano via the FirecREST gateway), Tandem workers as
// separate processes under a supervisor that restarts them, and the failover pipeline with the built-in
// trainer. Prints one table row per scenario:
//   (a) SIGKILL the worker at random points      (d) 20% gateway faults for the whole run
//   (b) zurich's daemons stopped mid-training    (e) both sites down: waits within the deadline, fails cleanly
//   (c) corrupt newest checkpoint + NODE_FAIL    (f) the Temporal dev server restarted mid-run
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDevServer, freePort, type DevServer } from '../../workers/dev-server.js';
import { bundleWorkflows } from '../../workers/worker.js';
import { TandemClient } from '../../sdk/client.js';
import { validatePipelineSpec } from '../../contract/parse.js';
import { runDirs } from '../../activities/run-store.js';
import { listCheckpoints } from '../../backends/checkpoints.js';
import { LocalServingBackend } from '../../backends/local-serving.js';
import type { PipelineTuning } from '../../contract/tuning.js';
import type { TimelineEntry } from '../../contract/status.js';
import { startTwoSites, type TestSite } from '../../test/recovery/sites.js';
import { CLIENT } from '../../test/slurm/firecrest-bed.js';
import { waitFor } from '../../test/helpers.js';
import type { SiteDescriptor } from './worker.js';
import { lineageJobName } from '../../workflows/pipeline/identity.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const WORKER = new URL('./worker.ts', import.meta.url).pathname;
const only = (process.argv[2] ?? 'a,b,c,d,e,f').split(',');
const TRIALS = Number(process.env.CHAOS_TRIALS ?? 50);
/** Runs of each of rows b–f (each is a one-off failure scenario; repeats show it is not luck). */
const REPEAT = Number(process.env.CHAOS_REPEAT ?? 1);
const verbose = !!process.env.CHAOS_VERBOSE;

interface Row {
  row: string;
  scenario: string;
  trials: number;
  completed: number;
  duplicates: number;
  leaked: number;
  /** Train jobs of one run at different sites that were live at the same time. */
  overlaps: number;
  lostMax?: number;
  /** Steps a run of the row may lose: one checkpoint interval, or two when the newest checkpoint is corrupt. */
  lostBound?: number;
  seconds: number;
  notes: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

process.umask(0);
const base = mkdtempSync(join(tmpdir(), 'tandem-chaos-'));
const port = await freePort();
const dbFile = join(base, 'temporal.db');
let server: DevServer = await startDevServer({ dbFile, port, startTimeoutMs: 90_000 });
const [zurich, lugano] = await startTwoSites().catch(async (e: unknown) => {
  await server.stop(); // nothing is left running when the test bed cannot start
  rmSync(base, { recursive: true, force: true });
  throw e;
});
const sites = [zurich, lugano];
const bundlePath = join(base, 'workflows.js');
writeFileSync(bundlePath, (await bundleWorkflows()).code);
const descriptors: SiteDescriptor[] = sites.map((s) => ({
  name: s.cluster.name,
  api: s.gateway ? 'firecrest' : 'slurmrestd',
  root: s.root,
  workDir: s.cluster.workDir,
  restSocket: s.cluster.restSocket,
  ...s.firecrest,
}));

let restarts = 0;
let aFailovers = 0;
let aLeaseRestarts = 0;

/** Workers as child processes, restarted by this supervisor whenever one dies. */
class Supervisor {
  child?: ChildProcess;
  restarts = 0;
  private stopped = false;
  constructor(private readonly home: string, private readonly queue: string) {}
  start(): void {
    const child = spawn(process.execPath, ['--import', TSX, WORKER], {
      env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: server.address, TANDEM_HOME: this.home, TANDEM_TASK_QUEUE: this.queue, TANDEM_WORKFLOW_BUNDLE: bundlePath, TANDEM_CHAOS_SITES: JSON.stringify(descriptors), TANDEM_CHAOS_CLIENT_ID: CLIENT.clientId, TANDEM_CHAOS_CLIENT_SECRET: CLIENT.clientSecret },
      stdio: ['ignore', verbose ? 'inherit' : 'ignore', verbose ? 'inherit' : 'ignore'],
    });
    this.child = child;
    child.once('exit', () => {
      if (this.stopped || this.child !== child) return;
      this.restarts++;
      setTimeout(() => !this.stopped && this.start(), 200);
    });
  }
  kill(): void {
    this.child?.kill('SIGKILL');
  }
  async stop(): Promise<void> {
    this.stopped = true;
    const c = this.child;
    if (c && c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      await new Promise<void>((r) => c.once('exit', () => r()));
    }
  }
}

const specFor = (steps: number, extra: { deadline?: string } = {}) => validatePipelineSpec({ name: 'chaos', retry: { initialInterval: '100ms' }, ...extra, stages: { preprocess: { runtime: 'local', samples: 200 }, train: { runtime: 'slurm', steps, checkpointEvery: 10, stepDelayMs: 100 }, deploy: { runtime: 'local' } } });

async function jobsOf(site: TestSite, id: string): Promise<{ name: string; state: string }[]> {
  // No catch: a site that cannot be asked makes the audit fail, never pass by default.
  const out = (await site.cluster.cli('squeue', ['-h', '-t', 'all', '-o', '%j %T'])).trim();
  return out ? out.split('\n').map((l) => l.split(' ')).map(([name, state]) => ({ name: name!, state: state! })).filter((j) => j.name.startsWith(`tandem-${id}-`)) : [];
}

/**
 * Duplicate = the same job name twice at one site; leaked = a job of the run still queued or running
 * once the sites have had `settleMs` to settle: a site back from an outage first reconciles the jobs
 * whose processes their lease stopped while it was dark.
 */
async function audit(id: string, settleMs = 60_000): Promise<{ duplicates: number; leaked: number; settledMs: number }> {
  const t0 = Date.now();
  for (;;) {
    let duplicates = 0;
    let leaked = 0;
    for (const s of sites) {
      const jobs = await jobsOf(s, id);
      const names = jobs.map((j) => j.name);
      duplicates += names.length - new Set(names).size;
      leaked += jobs.filter((j) => /PENDING|RUNNING|COMPLETING|CONFIGURING/.test(j.state)).length;
    }
    if (!leaked || Date.now() - t0 >= settleMs) return { duplicates, leaked, settledMs: Date.now() - t0 };
    await sleep(1000);
  }
}

const progressStep = (s: TestSite, job: string) => {
  try {
    return (JSON.parse(readFileSync(join(s.cluster.workDir, `${job}.progress.json`), 'utf8')) as { step: number }).step;
  } catch {
    return 0;
  }
};
/** Run ids by workflow id: a run's job names hash its run id (workflows/pipeline/identity.ts). */
const runIds = new Map<string, string>();
const trainJob = (id: string, attempt: number) => lineageJobName({ workflowId: id, runId: runIds.get(id) ?? '' }, 'train', attempt);
const lineage = (s: TestSite, id: string) => {
  const f = join(runDirs(s.root, id).checkpoints, 'lineage.jsonl');
  return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { job: string; resumedFromStep: number }) : [];
};

interface Trial {
  id: string;
  tuning: PipelineTuning;
  steps: number;
  deadline?: string;
  /** Chaos to inject once the run has started; may return lost steps. */
  chaos?: (ctx: { id: string; sup: Supervisor; tandem: TandemClient }) => Promise<number | void>;
  expectFailure?: boolean;
  /** Undo the chaos once the run has ended, before the audit (e.g. revive the sites). */
  after?: () => Promise<void>;
  /** What the timeline must show beyond the outcome; returns the problem, if any. */
  check?: (timeline: TimelineEntry[]) => string | undefined;
}

/**
 * Two live trainers: a train job that still wrote progress after the next train job of the run was
 * submitted (at another site, or at the same one after a self-fence).
 */
function overlaps(id: string, timeline: TimelineEntry[]): number {
  const jobs = timeline.filter((e) => e.stage === 'train' && (e.kind === 'job-submitted' || e.kind === 'job-adopted') && e.site);
  let n = 0;
  for (let k = 1; k < jobs.length; k++) {
    const old = jobs[k - 1]!;
    const at = sites.find((s) => s.cluster.name === old.site);
    const f = at && join(at.cluster.workDir, `${trainJob(id, old.attempt ?? 1)}.progress.json`);
    if (f && existsSync(f) && statSync(f).mtimeMs > Date.parse(jobs[k]!.at) + 500) n++;
  }
  return n;
}

async function trial(t: Trial): Promise<{ ok: boolean; duplicates: number; leaked: number; overlaps: number; lost?: number; note: string; timeline: TimelineEntry[]; runMs: number }> {
  const home = mkdtempSync(join(base, `${t.id}-`));
  const queue = `chaos-${t.id}`;
  const sup = new Supervisor(home, queue);
  sup.start();
  const tandem = await TandemClient.connect({ address: server.address, taskQueue: queue });
  let ok = false;
  let note = '';
  let lost: number | undefined;
  let timeline: TimelineEntry[] = [];
  let runMs = 0;
  try {
    const h = await tandem.launch(specFor(t.steps, { deadline: t.deadline }), { id: t.id, tuning: t.tuning });
    runIds.set(t.id, (await h.workflow.describe()).runId);
    await waitFor('the worker to pick the run up', async () => ((await h.timeline()).length ? true : undefined), 60_000);
    const picked = Date.now();
    const l = t.chaos ? await t.chaos({ id: t.id, sup, tandem }) : undefined;
    if (typeof l === 'number') lost = l;
    try {
      const r = await h.result().finally(() => (runMs = Date.now() - picked));
      ok = !t.expectFailure && r.checkpoint.step === t.steps;
      note = `step ${r.checkpoint.step}`;
    } catch (e) {
      const st = await h.status();
      const compensated = st.phase === 'failed';
      ok = !!t.expectFailure && compensated;
      note = `${st.phase}: ${String((e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message).slice(0, 120)}`;
    }
    timeline = await h.timeline().catch(() => []);
    const problem = t.check?.(timeline);
    if (problem) {
      ok = false;
      note += `; ${problem}`;
    }
  } finally {
    await t.after?.().catch((e: Error) => process.stderr.write(`${t.id}: undoing the chaos failed: ${e.message}\n`));
    await sup.stop();
    restarts += sup.restarts;
    const serving = new LocalServingBackend(home);
    for (const d of serving.list()) await serving.undeploy(d.name).catch(() => undefined);
    await tandem.close();
  }
  await sleep(1500); // let the sites settle what they were told
  const { settledMs, ...a } = await audit(t.id);
  if (settledMs >= 1000) note += `; the sites settled the run's jobs ${Math.round(settledMs / 1000)}s after it ended`;
  if (verbose) console.log(timeline.map((e) => `  ${e.kind} ${e.message}`).join('\n'));
  return { ok, ...a, overlaps: overlaps(t.id, timeline), lost, note, timeline, runMs };
}

const fo = (over: Partial<NonNullable<PipelineTuning['failover']>> = {}): PipelineTuning => ({ heartbeatTimeoutMs: 3000, pollMaxMs: 500, failover: { sites: ['zurich', 'lugano'], graceMs: 8000, leaseTtlMs: 4000, waitIntervalMs: 3000, ...over } });
const rows: Row[] = [];
async function scenario(row: string, scenarioName: string, trials: Trial[], lostBound?: number): Promise<void> {
  if (!only.includes(row)) return;
  const t0 = Date.now();
  const r: Row = { row, scenario: scenarioName, trials: trials.length, completed: 0, duplicates: 0, leaked: 0, overlaps: 0, lostBound, seconds: 0, notes: [] };
  for (const t of trials) {
    let res;
    try {
      res = await trial(t);
    } catch (e) {
      r.notes.push(`${t.id}: ${(e as Error).message}`);
      continue;
    }
    if (res.ok) r.completed++;
    else r.notes.push(`${t.id}: ${res.note}`);
    r.duplicates += res.duplicates;
    r.leaked += res.leaked;
    r.overlaps += res.overlaps;
    if (row === 'a') for (const e of res.timeline) if (e.kind === 'failover') aFailovers++; else if (e.kind === 'fence' && e.message.includes('stopped itself')) aLeaseRestarts++;
    if (res.lost !== undefined) r.lostMax = Math.max(r.lostMax ?? 0, res.lost);
    if (row !== 'a') r.notes.push(res.note);
    process.stderr.write(`(${row}) ${t.id}: ${res.ok ? 'ok' : 'NOT OK'} ${res.note} dup=${res.duplicates} leaked=${res.leaked} overlaps=${res.overlaps}${res.lost !== undefined ? ` lost=${res.lost}` : ''}\n`);
  }
  r.seconds = Math.round((Date.now() - t0) / 1000);
  rows.push(r);
}

/** Workflow ids of a one-off scenario's REPEAT runs. */
const ids = (base: string): string[] => Array.from({ length: REPEAT }, (_, k) => (REPEAT > 1 ? `${base}-${k}` : base));

/** Lost work after a failover: the old site's last trained step minus where the new job resumed. */
function lostAfter(id: string, from: TestSite, to: TestSite): number {
  const last = progressStep(from, trainJob(id, 1));
  const resumed = lineage(to, id)[0]?.resumedFromStep ?? 0;
  return last - resumed;
}

try {
  // (a) SIGKILL the worker at a random point of the run (seeded), then let the supervisor restart it.
  // A calibration run without chaos measures how long a run lasts, so that every kill lands inside one.
  let seed = 12345;
  const killedIn = new Map<string, number>();
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const aTuning = fo({ graceMs: 20_000, leaseTtlMs: 12_000 });
  const runMs = only.includes('a') ? (await trial({ id: 'chaos-a-calibration', steps: 30, tuning: aTuning })).runMs : 0;
  if (only.includes('a')) process.stderr.write(`(a) calibration: a run lasts ${(runMs / 1000).toFixed(1)} s after the worker picks it up\n`);
  await scenario('a', 'SIGKILL worker at a random point', Array.from({ length: TRIALS }, (_, i) => ({
    id: `chaos-a-${i}`,
    steps: 30,
    tuning: aTuning,
    chaos: async ({ id, sup, tandem }) => {
      await sleep(200 + rand() * Math.max(0, runMs - 400));
      // Where the kill lands, for the table: a kill after the run ended tests nothing.
      const st = await (await tandem.get(id)).status().catch(() => undefined);
      const at = !st ? 'unknown' : st.phase === 'running' ? (st.stage ?? 'starting') : 'after the end';
      killedIn.set(at, (killedIn.get(at) ?? 0) + 1);
      sup.kill();
    },
  })));
  if (only.includes('a')) rows.at(-1)!.notes.unshift(`kills landed in: ${[...killedIn].map(([k, n]) => `${k} ${n}`).join(', ')}; worker restarts ${restarts}; failovers ${aFailovers} (a worker kill alone should cause none), resubmits after a self-fence ${aLeaseRestarts}`);

  // (b) zurich's daemons stopped mid-training: resume at lugano, lost work ≤ one interval.
  await scenario('b', 'site outage (zurich daemons killed)', ids('chaos-b').map((id): Trial => ({
    id,
    steps: 120,
    tuning: fo(),
    chaos: async ({ id }) => {
      await waitFor('training at zurich', () => (progressStep(zurich, trainJob(id, 1)) >= 35 ? true : undefined), 120_000);
      await zurich.outage();
      await waitFor('resumption at lugano', () => (lineage(lugano, id).length ? true : undefined), 120_000);
      const lost = lostAfter(id, zurich, lugano);
      await zurich.revive();
      return lost;
    },
  })), 10);

  // (c) corrupt newest checkpoint, then a real NODE_FAIL: the previous valid one is used at lugano.
  await scenario('c', 'corrupt newest checkpoint + NODE_FAIL', ids('chaos-c').map((id): Trial => ({
    id,
    steps: 100,
    tuning: fo(),
    chaos: async ({ id }) => {
      await waitFor('training at zurich', () => (progressStep(zurich, trainJob(id, 1)) >= 32 ? true : undefined), 120_000);
      await zurich.cluster.cli('scontrol', ['update', `nodename=${zurich.cluster.node}`, 'state=down', 'reason=chaos']);
      const newest = listCheckpoints(runDirs(zurich.root, id).checkpoints)[0]!;
      const f = join(newest.path, 'weights.json');
      writeFileSync(f, readFileSync(f, 'utf8').replace(/\d/, (d) => String((Number(d) + 1) % 10)));
      await waitFor('resumption at lugano', () => (lineage(lugano, id).length ? true : undefined), 120_000);
      await zurich.cluster.cli('scontrol', ['update', `nodename=${zurich.cluster.node}`, 'state=resume']).catch(() => undefined);
      const resumed = lineage(lugano, id)[0]!.resumedFromStep;
      if (resumed !== newest.step - 10) throw new Error(`resumed from ${resumed}, expected the previous valid ${newest.step - 10}`);
      return lostAfter(id, zurich, lugano);
    },
  })), 20);

  // (d) 20% gateway faults at lugano (FirecREST) for the whole run; lugano only.
  await scenario('d', '20% FirecREST gateway faults, whole run', ids('chaos-d').map((id): Trial => ({
    id,
    steps: 40,
    tuning: fo({ sites: ['lugano'] }),
    // Observation failures alone never fail over (not even back to lugano itself).
    check: (tl) => (tl.some((e) => e.kind === 'failover') ? `failed over on observation errors: ${tl.find((e) => e.kind === 'failover')!.message}` : undefined),
    chaos: async () => {
      lugano.gateway!.setFaults({ rate: 0.2, kinds: ['500', '502', '503', '429', '408', 'drop', 'slow'], retryAfterS: 0, slowMs: 300, seed: 7 });
    },
  })));
  lugano.gateway?.setFaults(undefined);

  // (e) both sites down during training: waits for a healthy site within the deadline, then fails cleanly.
  await scenario('e', 'both sites down', ids('chaos-e').map((id): Trial => ({
    id,
    steps: 400,
    deadline: new Date(Date.now() + 10 * 60_000).toISOString(),
    tuning: fo({ maxWaitMs: 20_000 }),
    expectFailure: true,
    // It waited for a healthy site, then failed cleanly: every compensation ran, none failed.
    check: (tl) => (!tl.some((e) => e.kind === 'site-wait') ? 'never waited for a healthy site' : tl.some((e) => e.kind === 'compensation-failed') ? `a compensation failed: ${tl.find((e) => e.kind === 'compensation-failed')!.message}` : !tl.some((e) => e.kind === 'pipeline-failed') ? 'no pipeline-failed entry' : undefined),
    chaos: async ({ id }) => {
      await waitFor('training at zurich', () => (progressStep(zurich, trainJob(id, 1)) >= 15 ? true : undefined), 120_000);
      await Promise.all([zurich.outage(), lugano.outage()]);
    },
    // Revived after the run and before the audit, which then sees what they did with the old job.
    after: async () => void (await Promise.all([zurich.revive(), lugano.revive()])),
  })));

  // (f) the Temporal dev server stopped and restarted (same database, same port) during training.
  await scenario('f', 'Temporal dev server restarted', ids('chaos-f').map((id): Trial => ({
    id,
    steps: 80,
    tuning: fo(),
    chaos: async ({ id }) => {
      await waitFor('training at zurich', () => (progressStep(zurich, trainJob(id, 1)) >= 20 ? true : undefined), 120_000);
      await server.stop();
      await sleep(2000);
      server = await startDevServer({ dbFile, port, startTimeoutMs: 90_000 });
    },
  })));
} finally {
  console.log('\n| | scenario | trials | completed | duplicate jobs | leaked jobs | two live trainers | lost steps (max / bound; interval 10) | time | notes |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| (${r.row}) | ${r.scenario} | ${r.trials} | ${r.completed}/${r.trials} | ${r.duplicates} | ${r.leaked} | ${r.overlaps} | ${r.lostMax === undefined ? '–' : `${r.lostMax} / ≤${r.lostBound}${r.lostMax > r.lostBound! ? ' EXCEEDED' : ''}`} | ${r.seconds}s | ${r.notes.slice(0, 3).join('; ').replace(/\|/g, '/').replace(/\n/g, ' ')} |`);
  await lugano.gateway?.close();
  await Promise.all([zurich.cluster.down().catch(() => undefined), lugano.cluster.down().catch(() => undefined)]);
  await server.stop();
  rmSync(base, { recursive: true, force: true });
}
