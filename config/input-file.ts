// Reading a file a user named on the command line or in a variable (a pipeline spec, an Argo manifest,
// a job trace, an inventory, a carbon series, a token file), with a size bound and the reason in words.
// readFileSync alone reads until end of file: `/dev/zero`, `/dev/urandom` or a pipe that never ends
// (`tandem simulate <(yes)`) grew the process without bound instead of an error, and Node's own text
// ("EISDIR: illegal operation on a directory, read") names a system call, not the problem.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** A file past the bound its reader sets: the whole of it is never read. */
export class FileTooLarge extends Error {
  constructor(
    readonly path: string,
    readonly limit: number,
    /** The file's first bytes (up to 4), so a caller can say what kind of file was too large (a gzip). */
    readonly head: Buffer = Buffer.alloc(0),
  ) {
    super(`${path}: more than ${sizeText(limit)}`);
    this.name = 'FileTooLarge';
  }
}

/** 16 MiB, 64 KiB, 100 bytes: a bound as users read it. */
export function sizeText(bytes: number): string {
  if (bytes >= 2 ** 20 && bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** Why a file could not be read, in words: for an error of readInput/readInputAsync, or of any fs call. */
export function readProblem(e: unknown): string {
  if (e instanceof FileTooLarge) return `more than ${sizeText(e.limit)}: larger than this input may be`;
  switch ((e as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'a directory, not a file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'ELOOP':
      return 'too many symbolic links';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    default:
      return (e as Error).message;
  }
}

const CHUNK = 64 * 1024;
/** A token or secret file's bound: a bearer token is a line, never megabytes. */
export const TOKEN_FILE_BYTES = 64 * 1024;
const isDirError = () => Object.assign(new Error('is a directory'), { code: 'EISDIR' });

/**
 * The bytes of `path`, at most `limit` of them; a longer file throws FileTooLarge after reading at
 * most limit + 1 bytes (a regular file is refused by its size before any read). Pipes and devices
 * are read as they come, so `<(zcat trace.gz)` works and `/dev/zero` ends in an error. Errors keep
 * Node's `code`; readProblem() words them.
 */
export function readInput(path: string, limit: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw isDirError();
    if (st.isFile() && st.size > limit) {
      const head = Buffer.alloc(4);
      throw new FileTooLarge(path, limit, head.subarray(0, readSync(fd, head, 0, 4, 0)));
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // A regular file in one read of its size (and one byte more, to see it grow); anything else in chunks.
      const buf = Buffer.allocUnsafe(st.isFile() && total === 0 ? Math.min(st.size + 1, limit + 1) : CHUNK);
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > limit) throw new FileTooLarge(path, limit, (chunks[0] ?? buf).subarray(0, 4));
      chunks.push(n === buf.length ? buf : buf.subarray(0, n));
    }
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/** readInput for async callers (the SDK): the same bound and errors, without blocking the event loop on a pipe. */
export async function readInputAsync(path: string, limit: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw isDirError();
    if (st.isFile() && st.size > limit) {
      const { bytesRead, buffer } = await fh.read(Buffer.alloc(4), 0, 4, 0);
      throw new FileTooLarge(path, limit, buffer.subarray(0, bytesRead));
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(CHUNK);
      const { bytesRead: n } = await fh.read(buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > limit) throw new FileTooLarge(path, limit, (chunks[0] ?? buf).subarray(0, 4));
      chunks.push(buf.subarray(0, n));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await fh.close();
  }
}
