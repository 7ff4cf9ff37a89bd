// FirecREST's /filesystem/{system}/ops endpoints, executed on the host filesystem (the local cluster's).
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, basename, isAbsolute } from 'node:path';
import type * as T from '../../../backends/slurm/firecrest-types.js';
import { HttpError } from './executor.js';

const names = new Map<string, string>();
function nameOf(kind: 'passwd' | 'group', id: number): string {
  const key = `${kind}:${id}`;
  if (!names.has(key)) {
    let n = String(id);
    try {
      n = execFileSync('getent', [kind, String(id)], { encoding: 'utf8' }).split(':')[0] || n;
    } catch {
      /* unknown id: numeric */
    }
    names.set(key, n);
  }
  return names.get(key)!;
}

function perms(mode: number): string {
  const bits = 'rwxrwxrwx';
  return [...bits].map((c, i) => (mode & (1 << (8 - i)) ? c : '-')).join('');
}

function typeChar(s: Stats): string {
  return s.isDirectory() ? 'd' : s.isSymbolicLink() ? 'l' : '-';
}

function absolute(path: string): string {
  if (!isAbsolute(path)) throw new HttpError(400, `path must be absolute: ${path}`);
  return path;
}

function existing(path: string): Stats {
  absolute(path);
  try {
    return lstatSync(path);
  } catch {
    throw new HttpError(404, `${path}: no such file or directory`);
  }
}

export function fileModel(path: string, s: Stats = existing(path)): T.File {
  return {
    name: basename(path),
    type: typeChar(s),
    linkTarget: s.isSymbolicLink() ? readlinkSync(path) : null,
    user: nameOf('passwd', s.uid),
    group: nameOf('group', s.gid),
    permissions: perms(s.mode),
    lastModified: s.mtime.toISOString().replace(/\.\d+Z$/, ''),
    size: String(s.size),
  };
}

export function ls(path: string, showHidden: boolean): T.File[] {
  const s = existing(path);
  if (!s.isDirectory()) return [fileModel(path, s)];
  return readdirSync(path)
    .filter((n) => showHidden || !n.startsWith('.'))
    .sort()
    .map((n) => fileModel(join(path, n)));
}

export function stat(path: string, dereference: boolean): T.FileStat {
  existing(path);
  const s = dereference ? statSync(path) : lstatSync(path);
  return { mode: s.mode, ino: s.ino, dev: s.dev, nlink: s.nlink, uid: s.uid, gid: s.gid, size: s.size, atime: Math.floor(s.atimeMs / 1000), ctime: Math.floor(s.ctimeMs / 1000), mtime: Math.floor(s.mtimeMs / 1000) };
}

function regularFile(path: string): Buffer {
  const s = existing(path);
  if (s.isDirectory()) throw new HttpError(400, `${path} is a directory`);
  return readFileSync(path);
}

export function checksum(path: string): T.FileChecksum {
  return { algorithm: 'SHA-256', checksum: createHash('sha256').update(regularFile(path)).digest('hex') };
}

/** head/tail by lines (default 10) or bytes, with FirecREST's skip variants. */
export function part(path: string, which: 'head' | 'tail', opts: { lines?: number; bytes?: number; skip?: boolean }): T.FileContent {
  const data = regularFile(path);
  if (opts.bytes !== undefined && opts.lines !== undefined) throw new HttpError(400, 'give either bytes or lines');
  if (opts.bytes !== undefined) {
    const n = Math.max(0, opts.bytes);
    const [start, end] = which === 'head' ? (opts.skip ? [0, Math.max(0, data.length - n)] : [0, Math.min(n, data.length)]) : opts.skip ? [Math.min(n, data.length), data.length] : [Math.max(0, data.length - n), data.length];
    return { content: data.subarray(start, end).toString('utf8'), contentType: 'bytes', startPosition: start, endPosition: end };
  }
  const n = opts.lines ?? 10;
  const text = data.toString('utf8');
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text ? text.split('\n') : [];
  const [start, end] = which === 'head' ? (opts.skip ? [0, Math.max(0, lines.length - n)] : [0, Math.min(n, lines.length)]) : opts.skip ? [Math.min(n, lines.length), lines.length] : [Math.max(0, lines.length - n), lines.length];
  const chosen = lines.slice(start, end);
  return { content: chosen.length ? `${chosen.join('\n')}\n` : '', contentType: 'lines', startPosition: start, endPosition: end };
}

export function view(path: string, size: number, offset: number): string {
  return regularFile(path).subarray(offset, offset + size).toString('utf8');
}

export function mkdir(path: string, parent: boolean): T.File {
  absolute(path);
  if (existsSync(path) && !parent) throw new HttpError(400, `${path} already exists`);
  try {
    mkdirSync(path, { recursive: parent });
  } catch (e) {
    throw new HttpError(400, `mkdir ${path}: ${(e as NodeJS.ErrnoException).code}`);
  }
  return fileModel(path);
}

export function upload(path: string, fileName: string | undefined, content: Buffer): void {
  absolute(path);
  const target = existsSync(path) && statSync(path).isDirectory() ? join(path, basename(fileName ?? 'file')) : path;
  writeFileSync(target, content);
}

export function download(path: string): Buffer {
  return regularFile(path);
}
