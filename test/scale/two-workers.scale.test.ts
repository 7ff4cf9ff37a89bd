// Scale-out on a real cluster: a full Temporal server on PostgreSQL with mutual TLS required
// (scripts/temporal-server/cluster.sh), a real Slurm site (scripts/slurm/cluster.sh), and two worker
// processes standing for two hosts. Each host runs a worker on the run's own queue, with a private
// TANDEM_HOME and no Slurm access, and a worker on the site's queue, with the site's backend and a
// TANDEM_HOME on the site's filesystem (shared by the site's workers, as a cluster's /scratch is by its
// login nodes). The pipeline routes the activities that touch the site to its queue (tuning.siteQueues).
// The host whose site worker watches training is SIGKILLed mid-training; the other host's site worker
// takes the watch over (default heartbeat timeout, 30 s), re-attaches to the same Slurm job, and the
// pipeline completes. npm run test:scale (jest.config.js); binaries: npm run temporal-server:install.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { LocalServingBackend } from '../../backends/local-serving.js';
import type { PipelineSpec } from '../../contract/pipeline.js';
import { TandemClient } from '../../sdk/client.js';
import { bundleWorkflows } from '../../workers/worker.js';
import { startCluster, type Cluster } from '../slurm/cluster.js';
import { jobNameOf, spec, uniqueQueue, waitFor } from '../helpers.js';
import { serverBuilt, startFullServer, type FullServer } from './temporal-server.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
let server: FullServer;
let cluster: Cluster;
let dir: string;
let bundlePath: string;

beforeAll(async () => {
  if (!serverBuilt()) throw new Error('the Temporal server is not built: run npm run temporal-server:install');
  dir = mkdtempSync(join(tmpdir(), 'tandem-scale-'));
  server = await startFullServer();
  console.log(`[scale] Temporal ${server.address} on PostgreSQL, mTLS required: ready in ${(server.startupMs / 1000).toFixed(1)} s`);
  cluster = await startCluster('scale');
  bundlePath = join(dir, 'workflows.js');
  writeFileSync(bundlePath, (await bundleWorkflows()).code);
}, 300_000);

afterAll(async () => {
  await cluster?.down().catch(() => undefined);
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('mutual TLS', () => {
  const call = async (opts: Parameters<typeof Connection.connect>[0]) => {
    const c = await Connection.connect({ ...opts, connectTimeout: 5000 });
    try {
      return await c.workflowService.describeNamespace({ namespace: server.namespace });
    } finally {
      await c.close();
    }
  };

  test('a client with the CA but no certificate, and a plaintext client, are refused; one with a certificate is served', async () => {
    const tls = server.connection.tls as { serverRootCACertificate: Buffer; serverNameOverride: string };
    await expect(call({ address: server.address, tls: { serverRootCACertificate: tls.serverRootCACertificate, serverNameOverride: tls.serverNameOverride } })).rejects.toThrow();
    await expect(call({ address: server.address })).rejects.toThrow();
    expect((await call({ address: server.address, tls: server.connection.tls })).namespaceInfo?.name).toBe('default');
    // The SDK's own connect, with the certificate, reaches the namespace (and Tandem's search attributes are set up).
    const tandem = await TandemClient.connect({ address: server.address, tls: server.connection.tls, namespace: server.namespace });
    try {
      const report = await tandem.setup();
      expect(report.registered).toEqual([]); // the harness registered them already
      expect(report.present.length).toBeGreaterThan(0);
    } finally {
      await tandem.close();
    }
  });
});

interface Host {
  name: string;
  home: string;
  proc: ChildProcess;
  out: string[];
}

function startHost(name: string, mainQueue: string, siteQueue: string, siteHome: string): Host {
  const home = mkdtempSync(join(dir, `${name}-home-`));
  const out: string[] = [];
  const proc = spawn(process.execPath, ['--import', TSX, 'test/scale/worker-process.ts'], {
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      ...server.env,
      SCALE_MAIN_HOME: home,
      SCALE_MAIN_QUEUE: mainQueue,
      SCALE_BUNDLE: bundlePath,
      TANDEM_HOME: siteHome,
      TANDEM_TASK_QUEUE: siteQueue,
      TANDEM_SLURM_API: 'slurmrestd',
      TANDEM_SLURMRESTD_SOCKET: cluster.restSocket,
      TANDEM_SLURM_WORKDIR: cluster.workDir,
      TANDEM_SLURM_STATUS_INTERVAL_MS: '300',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const s of [proc.stdout!, proc.stderr!]) s.on('data', (d: Buffer) => (out.push(d.toString()), process.env.TANDEM_TEST_VERBOSE && process.stderr.write(`[${name}] ${d}`)));
  return { name, home, proc, out };
}
const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

type Event = temporal.api.history.v1.IHistoryEvent;

test('SIGKILL the host whose worker watches training: the other host re-attaches to the same Slurm job and the pipeline completes', async () => {
  const mainQueue = uniqueQueue('scale-main');
  const siteQueue = uniqueQueue('scale-site');
  // The site's filesystem: every worker on the site's queue has its TANDEM_HOME here; the jobs (run as
  // the cluster's unprivileged user) write their data and checkpoints under it.
  const siteHome = mkdtempSync(join(cluster.workDir, 'site-home-'));
  chmodSync(siteHome, 0o777);
  const hosts = [startHost('host-a', mainQueue, siteQueue, siteHome), startHost('host-b', mainQueue, siteQueue, siteHome)];
  const tandem = await TandemClient.connect({ address: server.address, tls: server.connection.tls, namespace: server.namespace, taskQueue: mainQueue });
  const { client, close } = await (async () => {
    const c = await Connection.connect({ address: server.address, tls: server.connection.tls });
    return { client: new Client({ connection: c, namespace: server.namespace }), close: () => c.close() };
  })();
  try {
    for (const h of hosts) await waitFor(`${h.name}'s workers to start`, () => h.out.join('').includes('worker ready') || (h.proc.exitCode !== null ? Promise.reject(new Error(`${h.name} exited: ${h.out.join('')}`)) : undefined), 120_000, 200);
    const pipeline: PipelineSpec = spec({ stages: { preprocess: { runtime: 'slurm', samples: 200 }, train: { runtime: 'slurm', steps: 120, checkpointEvery: 20, stepDelayMs: 500 }, deploy: { runtime: 'local' } } });
    // Default tuning apart from the site queue: the takeover waits out the default 30 s heartbeat timeout.
    const handle = await tandem.launch(pipeline, { id: uniqueQueue('scale-kill'), tuning: { siteQueues: { slurm: siteQueue } } });
    const trainJob = await jobNameOf(handle.workflow, 'train', 1);

    // Mid-training: the watch has reported progress; its worker's identity (pid@host) names the host.
    const watching = await waitFor('training to be under way', async () => {
      const desc = await client.workflow.getHandle(handle.id).describe();
      const act = (desc.raw.pendingActivities ?? []).find((a) => a.activityType?.name === 'awaitJob');
      const live = await handle.liveProgress();
      return act && live && live.progress.step >= 10 ? { identity: act.lastWorkerIdentity ?? '', step: live.progress.step } : undefined;
    }, 180_000, 250).catch(async (e: Error) => {
      const desc = await client.workflow.getHandle(handle.id).describe();
      throw new Error(`${e.message}\ntimeline: ${JSON.stringify(await handle.timeline(), null, 1)}\npending: ${JSON.stringify(desc.raw.pendingActivities, null, 1)}\n${hosts.map((h) => `--- ${h.name} ---\n${h.out.join('').slice(-3000)}`).join('\n')}`);
    });
    const victim = hosts.find((h) => watching.identity === `${h.proc.pid}@${hostname()}`);
    expect(victim).toBeDefined();
    const survivor = hosts.find((h) => h !== victim)!;
    victim!.proc.kill('SIGKILL');
    await exited(victim!.proc);
    const killedAt = Date.now();

    const result = await handle.result();
    const doneAfterS = (Date.now() - killedAt) / 1000;
    expect(result).toMatchObject({ checkpoint: { step: 120 }, trainingAttempts: 1 });
    expect(result.checkpoint.path.startsWith(siteHome)).toBe(true);

    // One Slurm job for training: the survivor adopted the watch, it did not submit again.
    const jobs = (await cluster.cli('squeue', ['-h', '-n', trainJob, '-t', 'all', '-o', '%A %T'])).trim().split('\n');
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatch(/ COMPLETED$/);

    const events = ((await handle.workflow.fetchHistory()).events ?? []) as Event[];
    const scheduled = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!]));
    const queueOf = new Map<string, Set<string>>();
    for (const a of scheduled.values()) {
      const set = queueOf.get(a.activityType!.name!) ?? new Set<string>();
      set.add(a.taskQueue!.name!);
      queueOf.set(a.activityType!.name!, set);
    }
    // Everything that touches the site ran on its queue; the rest on the run's own.
    for (const name of ['admitQuota', 'submitJob', 'awaitJob', 'catalogCheckpoint']) expect([...queueOf.get(name)!]).toEqual([siteQueue]);
    for (const name of ['deployModel', 'awaitReadiness']) expect([...queueOf.get(name)!]).toEqual([mainQueue]);
    // The train watch: attempt 1 on the victim, attempt 2 on the survivor after the heartbeat timeout.
    const trainWatch = [...scheduled.entries()].filter(([, a]) => a.activityType!.name === 'awaitJob').at(-1)![0];
    const starts = events.filter((e) => e.activityTaskStartedEventAttributes && String(e.activityTaskStartedEventAttributes.scheduledEventId) === trainWatch).map((e) => e.activityTaskStartedEventAttributes!);
    expect(starts.map((s) => [s.attempt, s.identity])).toEqual([[2, `${survivor.proc.pid}@${hostname()}`]]); // the started event records the last attempt
    expect(String(starts[0]!.lastFailure?.message)).toMatch(/heartbeat/i);

    // Nothing of the run on either host's own disk: its data and checkpoints are on the site's filesystem.
    for (const h of hosts) expect(existsSync(join(h.home, 'runs')) ? readdirSync(join(h.home, 'runs')) : []).toEqual([]);
    expect(readdirSync(join(siteHome, 'runs'))).toEqual([handle.id]);
    console.log(`[scale] killed ${victim!.name} (pid ${victim!.proc.pid}) at training step ${watching.step}; ${survivor.name} took over the watch of Slurm job ${jobs[0]!.split(' ')[0]} (attempt 2, after the 30 s heartbeat timeout) and the pipeline completed ${doneAfterS.toFixed(1)} s after the kill`);
  } finally {
    for (const h of hosts) if (h.proc.exitCode === null && h.proc.signalCode === null) h.proc.kill('SIGTERM');
    for (const h of hosts) await exited(h.proc);
    for (const h of hosts) {
      const serving = new LocalServingBackend(h.home);
      for (const d of serving.list()) await serving.undeploy(d.name);
    }
    await tandem.close();
    await close();
  }
}, 8 * 60_000);
