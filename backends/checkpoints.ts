// Checkpoints on a filesystem: a directory step-<NNNNNNNN>/ holding the model files and a
// manifest.json (step, created, files with size and sha256, producing job, site). A checkpoint is
// valid only if every listed file exists with its recorded size and hash; a newest checkpoint that
// is partial or corrupt is skipped, with the reason, in favour of the previous valid one.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

/** Verifies one checkpoint; returns the reason it is invalid, or the manifest. */
export async function verifyCheckpoint(path: string, deep = true): Promise<{ ok: true; manifest: CheckpointManifest } | { ok: false; reason: string }> {
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
      const sum = await sha256File(p);
      if (sum !== f.sha256) return { ok: false, reason: `${f.path} sha256 ${sum.slice(0, 12)}… does not match manifest ${f.sha256.slice(0, 12)}…` };
    }
  }
  return { ok: true, manifest };
}

/** The newest valid checkpoint, and the newer ones skipped with why. */
export async function latestValidCheckpoint(root: string, deep = true): Promise<{ latest?: CheckpointInfo; skipped: Skipped[] }> {
  const skipped: Skipped[] = [];
  for (const c of listCheckpoints(root)) {
    const v = await verifyCheckpoint(c.path, deep);
    if (v.ok) return { latest: { path: c.path, step: c.step, manifest: v.manifest }, skipped };
    skipped.push({ path: c.path, reason: v.reason });
  }
  return { skipped };
}

/** Retention: keep the newest `keep` checkpoints (always including `protect`); returns what was removed. */
export function applyRetention(root: string, keep: number, protect?: string): string[] {
  const removed: string[] = [];
  listCheckpoints(root).forEach((c, i) => {
    if (i >= keep && c.path !== protect) {
      rmSync(c.path, { recursive: true, force: true });
      removed.push(c.path);
    }
  });
  return removed;
}
