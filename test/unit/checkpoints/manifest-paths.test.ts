// A checkpoint's manifest is data a job wrote, so it may not steer the worker outside the checkpoint
// root: paths that are absolute or climb out, and symbolic links leading out, are refused before any
// file is read, so verification never reads (or reports the size or hash of) a file elsewhere, and a
// cross-site copy never writes outside its destination. On a real filesystem (temporary directories).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyCheckpoint, latestValidCheckpoint, manifestPathProblem, sha256Text, stepDirName, verifyCheckpoint, writeCheckpoint, type CheckpointManifest } from '../../../backends/checkpoints.js';

const SECRET = 'the worker can read this, the job must not learn anything of it\n';
const SECRET_SIZE = String(Buffer.byteLength(SECRET));
const SECRET_HASH = sha256Text(SECRET).slice(0, 12);
const meta = { job: 'j', site: 'zurich' };

let base: string;
let root: string;
let outside: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'tandem-ckpt-paths-'));
  root = join(base, 'run', 'checkpoints');
  outside = join(base, 'secret.txt');
  writeFileSync(outside, SECRET);
  writeCheckpoint(root, 10, { 'weights.json': '{"w":[1]}' }, meta);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** Rewrites step 20's manifest (a valid checkpoint first) with `files`. */
function tampered(files: CheckpointManifest['files'], extra: Partial<CheckpointManifest> = {}): string {
  const dir = writeCheckpoint(root, 20, { 'weights.json': '{"w":[2]}' }, meta);
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as CheckpointManifest;
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...m, files, ...extra }));
  return dir;
}

const leaks = (reason: string) => reason.includes(SECRET_SIZE) || reason.includes(SECRET_HASH);

test('a manifest path that climbs out of the checkpoint is refused unread, even with the right size and hash', async () => {
  const dir = tampered([{ path: '../../../secret.txt', size: Buffer.byteLength(SECRET), sha256: sha256Text(SECRET) }]);
  const v = await verifyCheckpoint(dir);
  expect(v).toEqual({ ok: false, reason: 'manifest files[0].path "../../../secret.txt" climbs out of the checkpoint directory (".." segment)' });
  // With a wrong size and hash, the reason says nothing of the file outside either.
  const probe = await verifyCheckpoint(tampered([{ path: '../../../secret.txt', size: 1, sha256: '0'.repeat(64) }]));
  expect(probe.ok).toBe(false);
  expect(leaks((probe as { reason: string }).reason)).toBe(false);
  // The newest checkpoint is skipped with why; the previous valid one is used.
  const { latest, skipped } = await latestValidCheckpoint(root);
  expect(latest?.step).toBe(10);
  expect(skipped).toEqual([{ path: dir, reason: expect.stringMatching(/climbs out of the checkpoint directory/) }]);
});

test('absolute paths, and links that lead outside, are refused without revealing the size or hash of their target', async () => {
  const abs = await verifyCheckpoint(tampered([{ path: outside, size: 1, sha256: '0'.repeat(64) }]));
  expect(abs).toEqual({ ok: false, reason: `manifest files[0].path ${JSON.stringify(outside)} is an absolute path; manifest paths are relative to the checkpoint directory` });
  const dir = tampered([{ path: 'weights.json', size: 1, sha256: '0'.repeat(64) }]);
  rmSync(join(dir, 'weights.json'));
  symlinkSync(outside, join(dir, 'weights.json'));
  const link = await verifyCheckpoint(dir);
  expect(link).toEqual({ ok: false, reason: 'weights.json resolves (through a symbolic link) to outside the checkpoint directory' });
  // A linked directory on the way is the same: `sub/secret.txt` through `sub` → outside.
  symlinkSync(base, join(dir, 'sub'));
  const viaDir = await verifyCheckpoint(tampered([{ path: 'sub/secret.txt', size: 1, sha256: '0'.repeat(64) }]));
  expect(viaDir).toEqual({ ok: false, reason: expect.stringMatching(/^sub\/secret\.txt (resolves \(through a symbolic link\) to outside|is missing)/) });
  for (const r of [abs, link, viaDir]) expect(leaks((r as { reason: string }).reason)).toBe(false);
  // A manifest.json that is itself a link outside is not parsed (its parse error could quote the target).
  const m = join(root, stepDirName(20), 'manifest.json');
  rmSync(m);
  symlinkSync(outside, m);
  expect(await verifyCheckpoint(join(root, stepDirName(20)))).toEqual({ ok: false, reason: 'manifest.json resolves (through a symbolic link) to outside the checkpoint directory' });
  // And so is a step directory that is a link.
  symlinkSync(join(root, stepDirName(10)), join(root, stepDirName(30)));
  expect(await verifyCheckpoint(join(root, stepDirName(30)))).toEqual({ ok: false, reason: 'the checkpoint directory is a symbolic link' });
});

test('the cross-site copy refuses such a manifest and writes nothing outside (nor leaves anything behind)', async () => {
  const dst = join(base, 'other-site', 'checkpoints');
  const target = join(base, 'other-site', 'planted.txt');
  const dir = tampered([{ path: '../../planted.txt', size: 9, sha256: sha256Text('{"w":[2]}') }]);
  writeFileSync(join(base, 'run', 'planted.txt'), '{"w":[2]}'); // makes the escaping source entry "valid" before the fix
  await expect(copyCheckpoint(dir, dst)).rejects.toThrow(/is not valid: manifest files\[0\]\.path "\.\.\/\.\.\/planted\.txt" climbs out/);
  expect(existsSync(target)).toBe(false);
  expect(existsSync(dst) ? readdirSync(dst) : []).toEqual([]);
  // A good checkpoint still copies.
  await expect(copyCheckpoint(join(root, stepDirName(10)), dst)).resolves.toMatchObject({ step: 10, copied: true });
});

test('the manifest shape is checked first: step, sizes, digests, duplicates', async () => {
  const good = { path: 'weights.json', size: 9, sha256: sha256Text('{"w":[2]}') };
  expect(await verifyCheckpoint(tampered([good], { step: '../../x' as unknown as number }))).toEqual({ ok: false, reason: 'manifest step is not a non-negative integer' });
  expect(await verifyCheckpoint(tampered([good], { step: 7 }))).toEqual({ ok: false, reason: 'manifest says step 7, but the directory is step-00000020' });
  expect(await verifyCheckpoint(tampered([{ ...good, size: -1 }]))).toEqual({ ok: false, reason: 'manifest files[0].size is not a byte count' });
  expect(await verifyCheckpoint(tampered([{ ...good, sha256: 'abc' }]))).toEqual({ ok: false, reason: 'manifest files[0].sha256 is not a sha256 hex digest' });
  expect(await verifyCheckpoint(tampered([good, good]))).toEqual({ ok: false, reason: 'manifest lists "weights.json" twice' });
  expect(await verifyCheckpoint(tampered([good]))).toMatchObject({ ok: true });
});

test('the writer refuses file names that would leave the checkpoint, and nested names stay inside', () => {
  expect(() => writeCheckpoint(root, 30, { '../escape.json': '{}' }, meta)).toThrow('checkpoint file "../escape.json" climbs out of the checkpoint directory (".." segment)');
  expect(() => writeCheckpoint(root, 30, { [outside]: '{}' }, meta)).toThrow(/is an absolute path/);
  expect(existsSync(join(root, '..', 'escape.json'))).toBe(false);
  expect(['a/../../b', 'manifest.json', '.', '', 'x\0y'].map((p) => manifestPathProblem(p) !== undefined)).toEqual([true, true, true, true, true]);
  expect(manifestPathProblem('shards/part-0.bin')).toBeUndefined();
  mkdirSync(join(base, 'nested'));
  const dir = writeCheckpoint(join(base, 'nested'), 1, { 'shards/part-0.bin': 'x' }, meta);
  expect(readFileSync(join(dir, 'shards', 'part-0.bin'), 'utf8')).toBe('x');
});
