// SlurmrestdJobBackend against a real Slurm 22.05 cluster (Debian packages) through slurmrestd on a
// unix socket, running as an unprivileged user.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SlurmrestdJobBackend } from '../../backends/slurm/slurmrestd-backend.js';
import { SlurmApiError } from '../../backends/slurm/errors.js';
import { classifyJobState } from '../../contract/outcome.js';
import { ResourcesSchema } from '../../contract/pipeline.js';
import { startCluster, type Cluster } from './cluster.js';
import { finished, request, running, until } from './jobs.js';

let cluster: Cluster;
let backend: SlurmrestdJobBackend;
let timeoutJob: string;

beforeAll(async () => {
  cluster = await startCluster('rest');
  backend = new SlurmrestdJobBackend({ site: 'zurich', workDir: cluster.workDir, statusIntervalMs: 250, rest: { socketPath: cluster.restSocket } });
  // Slurm's time limits are whole minutes and checked every 30 s: start the TIMEOUT job first so it
  // runs out while the other tests run.
  timeoutJob = (await backend.submit(request('rest-timeout', ['/bin/sleep', '600'], { walltimeMs: 60_000 }))).jobId;
});

afterAll(async () => {
  await cluster?.down();
});

test('a job completes; status carries the exit code and the resources reached Slurm', async () => {
  const ref = await backend.submit(request('rest-ok', ['/bin/sh', '-c', 'echo hello from slurm'], { resources: ResourcesSchema.parse({ cpusPerTask: 2, memoryMB: 100, partition: 'long' }) }));
  expect(ref).toMatchObject({ runtime: 'slurm', site: 'zurich', adopted: false, name: 'rest-ok' });
  const st = await until(backend, ref.jobId, finished);
  expect(st).toMatchObject({ state: 'COMPLETED', exitCode: 0 });
  expect(readFileSync(join(cluster.workDir, 'rest-ok.out'), 'utf8')).toContain('hello from slurm');
  const shown = await cluster.cli('scontrol', ['show', 'job', ref.jobId]);
  expect(shown).toMatch(/Partition=long/);
  expect(shown).toMatch(/MinCPUsNode=2|NumCPUs=2/);
  expect(shown).toMatch(/Requeue=0/); // the site's JobRequeue=0: v0.0.38 ignores requeue=false
});

test('a job exiting non-zero is a classified job failure with the tail of its output', async () => {
  const ref = await backend.submit(request('rest-fail', ['/bin/sh', '-c', 'echo step one; echo "boom: bad input" >&2; exit 3']));
  const st = await until(backend, ref.jobId, finished);
  expect(st).toMatchObject({ state: 'FAILED', exitCode: 3 });
  expect(classifyJobState(st.state)).toBe('job-failure');
  expect(st.tail).toContain('boom: bad input');
  expect(st.reason).toMatch(/exit code 3/);
});

test('submit is idempotent: the same name adopts the existing job', async () => {
  const req = request('rest-idem', ['/bin/sleep', '2']);
  const a = await backend.submit(req);
  const b = await backend.submit(req);
  expect(b).toEqual({ ...a, adopted: true });
  expect(await backend.findByName('rest-idem')).toEqual({ ...a, adopted: true });
  expect(await backend.findByName('rest-never-submitted')).toBeUndefined();
  const ids = (await cluster.cli('squeue', ['-h', '-n', 'rest-idem', '-t', 'all', '-o', '%A'])).trim().split('\n');
  expect(ids).toEqual([a.jobId]);
});

test('a hostile parameter is quoted and harmless; hostile Slurm options are refused', async () => {
  const canary = join(cluster.workDir, 'pwned');
  const hostile = `"; touch ${canary}; rm -rf ~ #`;
  const ref = await backend.submit(request('rest-hostile', ['/bin/echo', hostile, `$(touch ${canary})`, "it's `touch " + canary + '`'], { env: { TANDEM_NOTE: `'; touch ${canary}; '` } }));
  const st = await until(backend, ref.jobId, finished);
  expect(st.state).toBe('COMPLETED');
  const out = readFileSync(join(cluster.workDir, 'rest-hostile.out'), 'utf8');
  expect(out).toContain(hostile);
  expect(out).toContain(`$(touch ${canary})`);
  expect(existsSync(canary)).toBe(false);
  await expect(backend.submit(request('rest-bad', ['/bin/true'], { resources: { ...ResourcesSchema.parse({}), partition: 'debug\n#SBATCH --uid=0' } }))).rejects.toMatchObject({ name: 'InvalidRequest' });
  await expect(backend.submit(request('x; rm -rf ~', ['/bin/true']))).rejects.toBeInstanceOf(SlurmApiError);
});

test('an unknown partition is an invalid request, not an observation failure', async () => {
  await expect(backend.submit(request('rest-nopart', ['/bin/true'], { resources: ResourcesSchema.parse({ partition: 'nope' }) }))).rejects.toMatchObject({ name: 'InvalidRequest', kind: 'invalid' });
});

test('cancel during the run: the job is gone, and cancelling again or an unknown job is fine', async () => {
  const ref = await backend.submit(request('rest-cancel', ['/bin/sleep', '300']));
  await until(backend, ref.jobId, running);
  await backend.cancel(ref.jobId);
  const st = await until(backend, ref.jobId, finished);
  expect(st.state).toBe('CANCELLED');
  expect(classifyJobState(st.state)).toBe('cancelled');
  await backend.cancel(ref.jobId);
  await backend.cancel('999999');
  expect((await cluster.cli('squeue', ['-h', '-j', ref.jobId, '-t', 'R,PD', '-o', '%A']).catch(() => '')).trim()).toBe('');
});

test('time limit → TIMEOUT, a job failure', async () => {
  const st = await until(backend, timeoutJob, finished, 150_000);
  expect(await cluster.cli('scontrol', ['show', 'job', timeoutJob])).toMatch(/TimeLimit=00:01:00/);
  expect(st.state).toBe('TIMEOUT');
  expect(classifyJobState(st.state)).toBe('job-failure');
}, 160_000);

test('node set down during the run → NODE_FAIL, classified as infrastructure', async () => {
  const ref = await backend.submit(request('rest-nodefail', ['/bin/sleep', '300']));
  await until(backend, ref.jobId, running);
  await cluster.cli('scontrol', ['update', `nodename=${cluster.node}`, 'state=down', 'reason=tandem-test']);
  try {
    const st = await until(backend, ref.jobId, finished);
    expect(st.state).toBe('NODE_FAIL');
    expect(classifyJobState(st.state)).toBe('infrastructure');
  } finally {
    // ReturnToService=2 may already have returned the node when slurmd re-registered.
    await cluster.cli('scontrol', ['update', `nodename=${cluster.node}`, 'state=resume']).catch(() => undefined);
  }
});
