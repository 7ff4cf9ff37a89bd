// `tandem logs` on Slurm, as a user runs it: a fresh CLI process, configured like the workers
// (TANDEM_SLURM_* for slurmrestd on a real Slurm 22.05 cluster), reads each Slurm job's output through
// the backend — preprocess, then train, every attempt with its header — and says which configuration
// is missing when the site is not configured here.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SlurmrestdJobBackend } from '../../backends/slurm/slurmrestd-backend.js';
import { startCluster, type Cluster } from './cluster.js';
import { address, spec, startWorker, uniqueQueue } from '../helpers.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
let cluster: Cluster;
let oldUmask: number;

beforeAll(async () => {
  // Jobs run as the cluster's unprivileged user in run directories the worker creates: world-writable here.
  oldUmask = process.umask(0);
  cluster = await startCluster('logs');
}, 120_000);
afterAll(async () => {
  process.umask(oldUmask);
  await cluster?.down();
});

const cli = (queue: string, args: string[], env: Record<string, string>) =>
  new Promise<{ code: number; out: string }>((resolve) =>
    execFile(process.execPath, ['--import', TSX, 'cli/main.ts', '--task-queue', queue, ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), KUBECONFIG: '', TANDEM_SITES_FILE: '', ...env }, timeout: 120_000 }, (error, out, err) =>
      resolve({ code: typeof error?.code === 'number' ? error.code : error ? -1 : 0, out: out + err }),
    ),
  );

test('tandem logs reads the Slurm jobs of a run through slurmrestd, stage by stage; an unconfigured site is named', async () => {
  const home = mkdtempSync(join(cluster.workDir, 'home-'));
  chmodSync(home, 0o777);
  const slurm = new SlurmrestdJobBackend({ site: 'zurich', workDir: cluster.workDir, statusIntervalMs: 250, rest: { socketPath: cluster.restSocket } });
  const queue = uniqueQueue('slurm-logs');
  const w = await startWorker({ taskQueue: queue, home, backends: { slurm } });
  try {
    const h = await w.tandem.launch(spec({ name: 'slurm-logs', stages: { preprocess: { runtime: 'slurm', samples: 200 }, train: { runtime: 'slurm', steps: 20, checkpointEvery: 10 }, deploy: { runtime: 'local' } } }), { tuning: { pollMaxMs: 500 } });
    await h.result();
    const submitted = (await h.timeline()).filter((e) => e.kind === 'job-submitted' && (e.stage === 'preprocess' || e.stage === 'train'));
    const job = (stage: string) => submitted.find((e) => e.stage === stage)!.jobId!;
    const env = { TANDEM_HOME: home, TANDEM_SLURM_API: 'slurmrestd', TANDEM_SLURM_SITE: 'zurich', TANDEM_SLURM_WORKDIR: cluster.workDir, TANDEM_SLURMRESTD_SOCKET: cluster.restSocket };
    const train = await cli(queue, ['logs', h.id, '--stage', 'train'], env);
    expect(train.code).toBe(0);
    expect(train.out).toContain(`==> train attempt 1: slurm zurich job ${job('train')} <==`);
    expect(train.out).toMatch(/train: step 20\/20 loss=[\d.]+/);
    expect(train.out).not.toContain('==> preprocess');
    const all = await cli(queue, ['logs', h.id], env);
    expect(all.code).toBe(0);
    expect(all.out).toContain(`==> preprocess attempt 1: slurm zurich job ${job('preprocess')} <==`);
    expect(all.out.indexOf('==> preprocess')).toBeLessThan(all.out.indexOf('==> train'));
    // The same command where the site is not configured: it names what is missing, exit non-zero.
    const bare = await cli(queue, ['logs', h.id, '--stage', 'train'], { TANDEM_HOME: home, TANDEM_SLURM_API: '' });
    expect(bare.code).not.toBe(0);
    expect(bare.out).toContain(`job ${job('train')} ran at Slurm site zurich, which neither TANDEM_SLURM_* nor TANDEM_SITES_FILE configures here`);
  } finally {
    await w.stop();
  }
}, 300_000);
