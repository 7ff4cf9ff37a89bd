// The embedded local runtime: detached jobs with state in files, and the checkpoint catalog.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { LocalJobBackend } from '../backends/local-jobs.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { isAlive } from '../backends/proc.js';
import { applyRetention, latestValidCheckpoint, listCheckpoints, writeCheckpoint } from '../backends/checkpoints.js';
import { ResourcesSchema } from '../contract/pipeline.js';
import { tempDir, waitFor } from './helpers.js';

const resources = ResourcesSchema.parse({});
const sh = (script: string) => ['/bin/sh', '-c', script];

async function finished(b: LocalJobBackend, id: string) {
  return waitFor(`job ${id} to end`, async () => {
    const s = await b.status(id);
    return s.state === 'RUNNING' || s.state === 'PENDING' ? undefined : s;
  });
}

describe('LocalJobBackend', () => {
  test('a job runs detached, reports COMPLETED, and a second submit with its name adopts it', async () => {
    const b = new LocalJobBackend(tempDir('jobs'));
    const req = { name: 'job-ok', command: sh('echo started >> "$MARK"; sleep 0.3'), env: { MARK: join(tempDir('mark'), 'm') }, resources, walltimeMs: 60_000 };
    const first = await b.submit(req);
    const again = await b.submit(req);
    expect(first).toMatchObject({ jobId: 'job-ok', adopted: false, runtime: 'local' });
    expect(again).toMatchObject({ jobId: 'job-ok', adopted: true });
    expect(await b.findByName('job-ok')).toMatchObject({ jobId: 'job-ok' });
    expect(await b.findByName('job-unknown')).toBeUndefined();
    expect((await b.status('job-ok')).state).toBe('RUNNING');
    expect(await finished(b, 'job-ok')).toMatchObject({ state: 'COMPLETED', exitCode: 0 });
    expect(readFileSync(req.env.MARK, 'utf8')).toBe('started\n'); // ran once
  });

  test('a non-zero exit is FAILED with the output tail; arguments are never re-parsed by a shell', async () => {
    const b = new LocalJobBackend(tempDir('jobs'));
    const evil = '$(touch /tmp/tandem-injected); `id`';
    await b.submit({ name: 'job-fail', command: ['/bin/sh', '-c', 'echo "arg=$1" >&2; exit 3', 'sh', evil], env: {}, resources, walltimeMs: 60_000 });
    const st = await finished(b, 'job-fail');
    expect(st).toMatchObject({ state: 'FAILED', exitCode: 3, reason: 'exit code 3' });
    expect(st.tail).toBe(`arg=${evil}`);
    expect(existsSync('/tmp/tandem-injected')).toBe(false);
  });

  test('cancel stops the whole process group and reports CANCELLED; cancelling again is fine', async () => {
    const b = new LocalJobBackend(tempDir('jobs'));
    await b.submit({ name: 'job-cancel', command: sh('sleep 30 & sleep 30; wait'), env: {}, resources, walltimeMs: 60_000 });
    const pid = b.pid('job-cancel')!;
    await b.cancel('job-cancel');
    expect(isAlive(pid, undefined)).toBe(false);
    expect((await b.status('job-cancel')).state).toBe('CANCELLED');
    await expect(b.cancel('job-cancel')).resolves.toBeUndefined();
    await expect(b.cancel('never-submitted')).resolves.toBeUndefined();
  });

  test('walltime is enforced as TIMEOUT', async () => {
    const b = new LocalJobBackend(tempDir('jobs'));
    await b.submit({ name: 'job-slow', command: sh('sleep 30'), env: {}, resources, walltimeMs: 200 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await finished(b, 'job-slow')).toMatchObject({ state: 'TIMEOUT', reason: 'walltime exceeded' });
  });

  test('a job whose process group vanished without an exit status is LOST (infrastructure)', async () => {
    const b = new LocalJobBackend(tempDir('jobs'));
    await b.submit({ name: 'job-lost', command: sh('sleep 30'), env: {}, resources, walltimeMs: 60_000 });
    process.kill(-b.pid('job-lost')!, 'SIGKILL');
    expect(await finished(b, 'job-lost')).toMatchObject({ state: 'LOST' });
  });

  test('a NUL byte in an argument or variable is refused before anything exists (it used to leave an empty job directory and a retrying submit)', async () => {
    const home = tempDir('jobs');
    const b = new LocalJobBackend(home);
    for (const [name, command, env] of [['job-nul-arg', ['/bin/echo', 'a\0b'], {}], ['job-nul-env', ['/bin/true'], { A: 'x\0y' }]] as const) {
      const err = (await b.submit({ name, command: [...command], env: { ...env }, resources, walltimeMs: 60_000 }).catch((e: unknown) => e)) as ApplicationFailure;
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: 'InvalidRequest', nonRetryable: true, message: expect.stringMatching(name === 'job-nul-arg' ? /command\[1\] contains a NUL byte/ : /env\.A contains a NUL byte/) });
      expect(existsSync(b.jobDir(name))).toBe(false);
    }
    const serving = new LocalServingBackend(home);
    await expect(serving.deploy({ name: 'dep-nul', model: 'm', checkpoint: '/c', command: ['/bin/true'], env: { A: '\0' } })).rejects.toMatchObject({ type: 'InvalidRequest' });
    expect(serving.list()).toEqual([]);
    expect(existsSync(join(home, 'deployments', 'dep-nul'))).toBe(false);
  });

  test('job ids cannot escape the state directory', async () => {
    const b = new LocalJobBackend(tempDir('jobs'));
    await expect(b.status('../../etc')).rejects.toThrow(/invalid local job id/);
  });
});

describe('checkpoint catalog on a filesystem', () => {
  const meta = { job: 'j1', site: 'local' };

  test('the newest valid checkpoint wins; corrupt and partial newer ones are skipped with reasons', async () => {
    const root = tempDir('ckpt');
    writeCheckpoint(root, 10, { 'weights.json': '{"w":[1]}' }, meta);
    writeCheckpoint(root, 20, { 'weights.json': '{"w":[2]}' }, meta);
    writeCheckpoint(root, 30, { 'weights.json': '{"w":[3]}' }, meta);
    writeFileSync(join(root, 'step-00000030', 'weights.json'), '{"w":[9]}'); // same size, other bytes
    mkdirSync(join(root, 'step-00000040')); // a crash before the manifest
    const { latest, skipped } = await latestValidCheckpoint(root);
    expect(latest).toMatchObject({ step: 20, manifest: { step: 20, job: 'j1', files: [{ path: 'weights.json', size: 9 }] } });
    expect(skipped).toEqual([
      { path: join(root, 'step-00000040'), reason: 'no manifest.json (partial checkpoint)' },
      { path: join(root, 'step-00000030'), reason: expect.stringMatching(/weights.json sha256 .* does not match manifest/) },
    ]);
  });

  test('a truncated file is caught by size even without hashing', async () => {
    const root = tempDir('ckpt');
    writeCheckpoint(root, 5, { 'weights.json': '{"w":[1,2,3]}' }, meta);
    writeFileSync(join(root, 'step-00000005', 'weights.json'), '{"w":');
    const { latest, skipped } = await latestValidCheckpoint(root, false);
    expect(latest).toBeUndefined();
    expect(skipped[0]!.reason).toMatch(/has 5 bytes, manifest says 13/);
  });

  test('retention keeps the newest K and never the one in use', () => {
    const root = tempDir('ckpt');
    for (const s of [1, 2, 3, 4, 5]) writeCheckpoint(root, s, { 'w.json': String(s) }, meta);
    const removed = applyRetention(root, 2, join(root, 'step-00000001'));
    expect(removed.map((p) => p.slice(-2))).toEqual(['03', '02']);
    expect(listCheckpoints(root).map((c) => c.step)).toEqual([5, 4, 1]);
  });
});
