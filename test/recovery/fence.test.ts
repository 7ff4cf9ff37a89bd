// The lease wrapper (programs/fence.ts) as jobs run it: a job whose lease expired exits 75 and leaves
// the fenced marker; a program that exits 75 on its own leaves none, so it is not taken for fenced.
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinCommand } from '../../programs/commands.js';
import { FENCED_EXIT_CODE, fencedMarker } from '../../programs/lease.js';
import { tempDir } from '../helpers.js';

const FENCE = new URL('../../programs/fence.ts', import.meta.url).pathname;

function fence(lease: string, program: string[]): Promise<number> {
  const [node, ...loader] = builtinCommand('train').slice(0, 3);
  return new Promise((resolve) => execFile(node!, [...loader, FENCE, lease, '--', ...program], (err) => resolve(err ? Number((err as { code?: number }).code) : 0)));
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
