// Checkpoints on a filesystem: a directory step-<NNNNNNNN>/ holding the model files and a
// manifest.json (step, created, files with size and sha256, producing job, site). A checkpoint is
// valid only if every listed file exists with its recorded size and hash; a newest checkpoint that
// is partial or corrupt is skipped, with the reason, in favour of the previous valid one.
import { createHash } from 'node:crypto';
import { copyFileSync, createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface CheckpointManifest {
  step: number;
  created: string;
  files: ManifestFile[];
  job: string;
  site: string;
  metrics?: Record<string, number>;
}

export interface CheckpointInfo {
  path: string;
  step: number;
  manifest: CheckpointManifest;
}

export interface Skipped {
  path: string;
  reason: string;
}

const DIR = /^step-(\d{8})$/;
export const stepDirName = (step: number) => `step-${String(step).padStart(8, '0')}`;

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => hash.update(d))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}

export function sha256Text(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Writes a checkpoint atomically: files go to a hidden temp dir that is renamed into place. */
export function writeCheckpoint(root: string, step: number, files: Record<string, string>, meta: Omit<CheckpointManifest, 'step' | 'created' | 'files'>, created = new Date()): string {
  mkdirSync(root, { recursive: true });
  const final = join(root, stepDirName(step));
  const tmp = join(root, `.tmp-${stepDirName(step)}-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  const listed: ManifestFile[] = [];
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(tmp, name), content);
    listed.push({ path: name, size: Buffer.byteLength(content), sha256: sha256Text(content) });
  }
  const manifest: CheckpointManifest = { step, created: created.toISOString(), files: listed, ...meta };
  writeFileSync(join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 2));
  rmSync(final, { recursive: true, force: true });
  renameSync(tmp, final);
  return final;
}

/** Checkpoint directories, newest step first. */
export function listCheckpoints(root: string): { path: string; step: number }[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .map((name) => ({ name, m: DIR.exec(name) }))
    .filter((e): e is { name: string; m: RegExpExecArray } => e.m !== null)
    .map((e) => ({ path: join(root, e.name), step: Number(e.m[1]) }))
    .sort((a, b) => b.step - a.step);
}

/**
 * How a file's sha256 is obtained: locally by default; a site can supply its own (FirecREST's
 * /filesystem/{system}/ops/checksum), so that verification happens where the data lives.
 */
export type Hasher = (path: string) => Promise<string>;

/** Verifies one checkpoint; returns the reason it is invalid, or the manifest. */
export async function verifyCheckpoint(path: string, deep = true, hasher: Hasher = sha256File): Promise<{ ok: true; manifest: CheckpointManifest } | { ok: false; reason: string }> {
  const manifestPath = join(path, 'manifest.json');
  if (!existsSync(manifestPath)) return { ok: false, reason: 'no manifest.json (partial checkpoint)' };
  let manifest: CheckpointManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as CheckpointManifest;
  } catch (e) {
    return { ok: false, reason: `manifest.json is not valid JSON: ${(e as Error).message}` };
  }
  if (!Array.isArray(manifest.files) || manifest.files.length === 0) return { ok: false, reason: 'manifest lists no files' };
  for (const f of manifest.files) {
    const p = join(path, f.path);
    if (!existsSync(p)) return { ok: false, reason: `${f.path} is missing` };
    const size = statSync(p).size;
    if (size !== f.size) return { ok: false, reason: `${f.path} has ${size} bytes, manifest says ${f.size}` };
    if (deep) {
      const sum = await hasher(p);
      if (sum !== f.sha256) return { ok: false, reason: `${f.path} sha256 ${sum.slice(0, 12)}… does not match manifest ${f.sha256.slice(0, 12)}…` };
    }
  }
  return { ok: true, manifest };
}

/** The newest valid checkpoint, and the newer ones skipped with why. */
export async function latestValidCheckpoint(root: string, deep = true, hasher: Hasher = sha256File): Promise<{ latest?: CheckpointInfo; skipped: Skipped[] }> {
  const skipped: Skipped[] = [];
  for (const c of listCheckpoints(root)) {
    const v = await verifyCheckpoint(c.path, deep, hasher);
    if (v.ok) return { latest: { path: c.path, step: c.step, manifest: v.manifest }, skipped };
    skipped.push({ path: c.path, reason: v.reason });
  }
  return { skipped };
}

/** Retention: keep the newest `keep` checkpoints (always including `protect`); returns what was removed.
 *  With `everyNth`, checkpoints whose step is a multiple of it are kept as well (long-term history). */
export function applyRetention(root: string, keep: number, protect?: string, everyNth?: number): string[] {
  const removed: string[] = [];
  listCheckpoints(root).forEach((c, i) => {
    if (!retained(c.step, i, keep, everyNth) && c.path !== protect) {
      rmSync(c.path, { recursive: true, force: true });
      removed.push(c.path);
    }
  });
  return removed;
}

/** The retention rule alone: the newest `keep` (index 0 = newest) and every step divisible by `everyNth`. */
export function retained(step: number, index: number, keep: number, everyNth?: number): boolean {
  return index < keep || (everyNth !== undefined && everyNth > 0 && step % everyNth === 0);
}

export interface CopyResult {
  path: string;
  step: number;
  bytes: number;
  /** False when the destination already held a valid copy of this step (nothing was copied). */
  copied: boolean;
}

/** Prefix of in-flight copies: never a valid step-* name, removed by `removeStaleCopies`. */
export const COPY_PREFIX = '.copy-';

/**
 * Copies one checkpoint to another checkpoint root (another site's filesystem) and verifies the copy
 * against the source manifest before it becomes visible: files land in a hidden directory that is
 * renamed to step-NNNNNNNN only after every size and sha256 matched. A copy that fails half-way is
 * removed (compensation) and the error rethrown; a crash mid-copy leaves only a hidden directory that
 * the next copy into that root removes.
 */
export async function copyCheckpoint(src: string, dstRoot: string, opts: { hasher?: Hasher; onFile?: (name: string) => void | Promise<void>; tag?: string } = {}): Promise<CopyResult> {
  const v = await verifyCheckpoint(src, true);
  if (!v.ok) throw new Error(`source checkpoint ${src} is not valid: ${v.reason}`);
  const step = v.manifest.step;
  const final = join(dstRoot, stepDirName(step));
  if (existsSync(final)) {
    const there = await verifyCheckpoint(final, true, opts.hasher);
    if (there.ok && sameFiles(there.manifest, v.manifest)) return { path: final, step, bytes: 0, copied: false };
  }
  mkdirSync(dstRoot, { recursive: true });
  removeStaleCopies(dstRoot);
  const tmp = join(dstRoot, `${COPY_PREFIX}${basename(src)}-${opts.tag ?? process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  let bytes = 0;
  try {
    for (const f of v.manifest.files) {
      copyFileSync(join(src, f.path), join(tmp, f.path));
      bytes += f.size;
      await opts.onFile?.(f.path);
    }
    copyFileSync(join(src, 'manifest.json'), join(tmp, 'manifest.json'));
    const check = await verifyCheckpoint(tmp, true, opts.hasher);
    if (!check.ok) throw new Error(`copy of ${src} failed verification at ${dstRoot}: ${check.reason}`);
    rmSync(final, { recursive: true, force: true });
    renameSync(tmp, final);
    return { path: final, step, bytes, copied: true };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true }); // compensation: no half-finished copy stays behind
    throw e;
  }
}

/** Removes hidden directories of copies that never finished (a crash mid-copy); returns them. */
export function removeStaleCopies(root: string): string[] {
  if (!existsSync(root)) return [];
  const stale = readdirSync(root).filter((n) => n.startsWith(COPY_PREFIX)).map((n) => join(root, n));
  for (const p of stale) rmSync(p, { recursive: true, force: true });
  return stale;
}

function sameFiles(a: CheckpointManifest, b: CheckpointManifest): boolean {
  return a.files.length === b.files.length && a.files.every((f, i) => f.path === b.files[i]!.path && f.sha256 === b.files[i]!.sha256);
}

/** Copies a flat directory of input files (the data set) with sha256 verification; used to stage data. */
export async function copyVerifiedDir(src: string, dst: string): Promise<{ files: number; bytes: number; copied: boolean }> {
  const names = existsSync(src) ? readdirSync(src).filter((n) => statSync(join(src, n)).isFile()) : [];
  if (names.length === 0) throw new Error(`nothing to stage: ${src} holds no files`);
  let bytes = 0;
  let copied = false;
  mkdirSync(dst, { recursive: true });
  for (const n of names) {
    const from = join(src, n);
    const to = join(dst, n);
    const want = await sha256File(from);
    if (existsSync(to) && (await sha256File(to)) === want) continue;
    const tmp = join(dst, `${COPY_PREFIX}${n}`);
    try {
      copyFileSync(from, tmp);
      if ((await sha256File(tmp)) !== want) throw new Error(`staged copy of ${n} does not match its source`);
      renameSync(tmp, to);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
    bytes += statSync(to).size;
    copied = true;
  }
  return { files: names.length, bytes, copied };
}
