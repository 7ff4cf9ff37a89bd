// The lease wrapper (programs/fence.ts) as jobs run it: a job whose lease expired exits 75 and leaves
// the fenced marker; a program that exits 75 on its own leaves none, so it is not taken for fenced. A
// lease file that is briefly unreadable does not stop the job; one that stays so for twice the grace
// does, and the whole process group stops with it.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinCommand } from '../../programs/commands.js';
import { DEFAULT_UNREADABLE_GRACE_MS, FENCED_EXIT_CODE, fencedMarker } from '../../programs/lease.js';
import { tempDir } from '../helpers.js';

const FENCE = new URL('../../programs/fence.ts', import.meta.url).pathname;

function fence(lease: string, program: string[]): Promise<number> {
  const [node, ...loader] = builtinCommand('train').slice(0, 3);
  return new Promise((resolve) => execFile(node!, [...loader, FENCE, lease, '--', ...program], (err) => resolve(err ? Number((err as { code?: number }).code) : 0)));
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Running (a zombie left to an init that does not reap counts as stopped). */
const alive = (pid: number) => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};
/** Makes the lease unreadable (gone, as on a shared filesystem's hiccup) for `ms`, then restores it. */
async function unreadableFor(f: string, ms: number): Promise<void> {
  const text = readFileSync(f, 'utf8');
  rmSync(f);
  await sleep(ms);
  writeFileSync(f, text);
}
const lease = (dir: string, ttlMs: number) => {
  const f = join(dir, 'lease-job.json');
  writeFileSync(f, JSON.stringify({ holder: 'job', expiresAt: Date.now() + ttlMs }));
  return f;
};

test('an expired lease: the job does not start, exits 75 and marks itself fenced', async () => {
  const f = lease(tempDir('fence'), -1000);
  expect(await fence(f, [process.execPath, '-e', 'console.log("must not run")'])).toBe(FENCED_EXIT_CODE);
  expect(existsSync(fencedMarker(f))).toBe(true);
});

test('a lease that runs out while the job runs stops it and marks it fenced', async () => {
  const f = lease(tempDir('fence'), 800);
  expect(await fence(f, [process.execPath, '-e', 'setTimeout(() => {}, 30000)'])).toBe(FENCED_EXIT_CODE);
  expect(existsSync(fencedMarker(f))).toBe(true);
});

test('a program that exits 75 by itself under a valid lease is not marked fenced', async () => {
  const f = lease(tempDir('fence'), 60_000);
  expect(await fence(f, [process.execPath, '-e', 'process.exit(75)'])).toBe(75);
  expect(existsSync(fencedMarker(f))).toBe(false);
});

test('a lease unreadable for 1 s does not stop the job', async () => {
  const dir = tempDir('fence');
  const f = lease(dir, 60_000);
  const done = join(dir, 'done');
  const started = join(dir, 'started');
  const run = fence(f, [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(started)}, 'ok'); setTimeout(() => require('fs').writeFileSync(${JSON.stringify(done)}, 'ok'), 2500)`]);
  for (let i = 0; i < 300 && !existsSync(started); i++) await sleep(100);
  await unreadableFor(f, 1000);
  expect(await run).toBe(0);
  expect(existsSync(done)).toBe(true);
  expect(existsSync(fencedMarker(f))).toBe(false);
});

test('a lease unreadable for twice the grace stops the job and its whole process group', async () => {
  const dir = tempDir('fence');
  const f = lease(dir, 60_000);
  const pidFile = join(dir, 'grandchild.pid');
  // A shell whose child ignores nothing and would run on for a minute: torchrun's workers, say.
  const run = fence(f, ['sh', '-c', `sleep 60 & echo $! > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; wait`]);
  // Started (tsx's start-up takes seconds on a loaded machine): the shell has written its child's pid.
  for (let i = 0; i < 300 && !existsSync(pidFile); i++) await sleep(100);
  const grandchild = Number(readFileSync(pidFile, 'utf8'));
  expect(alive(grandchild)).toBe(true);
  rmSync(f);
  const started = Date.now();
  expect(await run).toBe(FENCED_EXIT_CODE);
  expect(Date.now() - started).toBeGreaterThanOrEqual(DEFAULT_UNREADABLE_GRACE_MS);
  expect(existsSync(fencedMarker(f))).toBe(true);
  await sleep(300);
  expect(alive(grandchild)).toBe(false);
});
