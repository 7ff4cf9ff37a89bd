// Checkpoints on a filesystem: a directory step-<NNNNNNNN>/ holding the model files and a
// manifest.json (step, created, files with size and sha256, producing job, site). A checkpoint is
// valid only if every listed file exists with its recorded size and hash; a newest checkpoint that
// is partial or corrupt is skipped, with the reason, in favour of the previous valid one.
import { createHash } from 'node:crypto';
import { copyFileSync, createReadStream, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, posix, sep } from 'node:path';

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

/**
 * Why a manifest's file path is not a file inside its checkpoint directory, or undefined. A manifest is
 * data a job wrote: a path that is absolute or climbs out (`../../etc/passwd`) would make verification
 * read, and a cross-site copy write, outside the checkpoint root. Any ".." segment is refused, not only
 * one that escapes after normalisation: checkpoint files have no reason to climb.
 */
export function manifestPathProblem(p: unknown): string | undefined {
  if (typeof p !== 'string' || p === '') return 'is not a file name';
  if (p.includes('\0')) return 'contains a NUL byte';
  if (isAbsolute(p) || posix.isAbsolute(p) || /^[A-Za-z]:/.test(p) || p.startsWith('\\')) return 'is an absolute path; manifest paths are relative to the checkpoint directory';
  const segments = p.split(/[\\/]/);
  if (segments.includes('..')) return 'climbs out of the checkpoint directory (".." segment)';
  const norm = posix.normalize(p.replace(/\\/g, '/'));
  if (norm === '.' || norm === 'manifest.json' || norm.startsWith('../')) return 'is not a file of the checkpoint';
  return undefined;
}

/**
 * The real path of `rel` inside `dir` if it is a regular file there, following symbolic links only
 * while they stay inside `dir`. Reports nothing about a file outside (not its size, not its contents).
 */
function fileInside(dir: string, rel: string): { path: string } | { missing: true } | { problem: string } {
  const p = join(dir, rel);
  let real: string;
  try {
    real = realpathSync(p);
  } catch {
    return { missing: true }; // also a dangling link: where it points is not reported
  }
  const root = realpathSync(dir);
  if (real !== root && !real.startsWith(root + sep)) return { problem: 'resolves (through a symbolic link) to outside the checkpoint directory' };
  if (!statSync(real).isFile()) return { problem: 'is not a regular file' };
  return { path: real };
}

/** Writes a checkpoint atomically: files go to a hidden temp dir that is renamed into place. */
export function writeCheckpoint(root: string, step: number, files: Record<string, string>, meta: Omit<CheckpointManifest, 'step' | 'created' | 'files'>, created = new Date()): string {
  for (const name of Object.keys(files)) {
    const why = manifestPathProblem(name);
    if (why) throw new Error(`checkpoint file ${JSON.stringify(name)} ${why}`);
  }
  mkdirSync(root, { recursive: true });
  const final = join(root, stepDirName(step));
  const tmp = join(root, `.tmp-${stepDirName(step)}-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  const listed: ManifestFile[] = [];
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(tmp, name)), { recursive: true });
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

/** What is wrong with a manifest's shape (before any file it names is looked at), or undefined. */
function manifestProblem(m: unknown, dirStep: number | undefined): string | undefined {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return 'manifest.json is not an object';
  const { step, files } = m as Partial<CheckpointManifest>;
  if (typeof step !== 'number' || !Number.isSafeInteger(step) || step < 0) return 'manifest step is not a non-negative integer';
  if (dirStep !== undefined && step !== dirStep) return `manifest says step ${step}, but the directory is ${stepDirName(dirStep)}`;
  if (!Array.isArray(files) || files.length === 0) return 'manifest lists no files';
  const seen = new Set<string>();
  for (const [i, f] of files.entries()) {
    if (f === null || typeof f !== 'object') return `manifest files[${i}] is not an object`;
    const why = manifestPathProblem(f.path);
    if (why) return `manifest files[${i}].path${typeof f.path === 'string' ? ` ${JSON.stringify(f.path)}` : ''} ${why}`;
    if (seen.has(f.path)) return `manifest lists ${JSON.stringify(f.path)} twice`;
    seen.add(f.path);
    if (typeof f.size !== 'number' || !Number.isSafeInteger(f.size) || f.size < 0) return `manifest files[${i}].size is not a byte count`;
    if (typeof f.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(f.sha256)) return `manifest files[${i}].sha256 is not a sha256 hex digest`;
  }
  return undefined;
}

/**
 * Verifies one checkpoint; returns the reason it is invalid, or the manifest. Only files inside the
 * checkpoint directory are ever opened: the manifest's shape and paths are checked first, and a file
 * (or the manifest, or the directory) that is a symbolic link leading outside is refused unread, so a
 * reason never tells the size or hash of a file elsewhere.
 */
export async function verifyCheckpoint(path: string, deep = true, hasher: Hasher = sha256File): Promise<{ ok: true; manifest: CheckpointManifest } | { ok: false; reason: string }> {
  if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) return { ok: false, reason: 'the checkpoint directory is a symbolic link' };
  const manifestAt = fileInside(path, 'manifest.json');
  if ('missing' in manifestAt) return { ok: false, reason: 'no manifest.json (partial checkpoint)' };
  if ('problem' in manifestAt) return { ok: false, reason: `manifest.json ${manifestAt.problem}` };
  let manifest: CheckpointManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestAt.path, 'utf8')) as CheckpointManifest;
  } catch (e) {
    return { ok: false, reason: `manifest.json is not valid JSON: ${(e as Error).message}` };
  }
  const m = DIR.exec(basename(path));
  const shape = manifestProblem(manifest, m ? Number(m[1]) : undefined);
  if (shape) return { ok: false, reason: shape };
  for (const f of manifest.files) {
    const at = fileInside(path, f.path);
    if ('missing' in at) return { ok: false, reason: `${f.path} is missing` };
    if ('problem' in at) return { ok: false, reason: `${f.path} ${at.problem}` };
    const p = at.path;
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
      // Checked again right before the read: the source may have changed since it was verified.
      const from = fileInside(src, f.path);
      if (!('path' in from)) throw new Error(`source checkpoint ${src} changed during the copy: ${f.path} ${'problem' in from ? from.problem : 'is missing'}`);
      mkdirSync(dirname(join(tmp, f.path)), { recursive: true });
      copyFileSync(from.path, join(tmp, f.path));
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
