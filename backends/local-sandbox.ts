// The one sandbox of the local runtime's workloads outside Argo: pipeline jobs (backends/local-jobs.ts)
// and model servers (backends/local-serving.ts). Both run under bubblewrap through the Argo target's
// sandboxArgs (activities/argo/sandbox.ts): the system allowlist and the Tandem installation
// read-only, TANDEM_HOME hidden, only the workload's own directories visible beyond that.
import { closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { failure } from '../contract/failures.js';
import { bwrapBinary, sandboxArgs, SandboxUnavailable } from '../activities/argo/sandbox.js';

/** The Tandem installation (programs, and their dependencies' node_modules) and the node binary a sandboxed workload may read. */
export function tandemInstallation(): string[] {
  const root = dirname(dirname(fileURLToPath(import.meta.url))); // backends/.. (or dist/backends/..)
  const pkg = existsSync(join(root, 'package.json')) ? root : dirname(root);
  const out = [pkg];
  // An installed package finds its dependencies in the node_modules it sits in.
  const at = pkg.lastIndexOf(`${sep}node_modules${sep}`);
  if (at >= 0) out.push(pkg.slice(0, at + `${sep}node_modules`.length));
  out.push(realpathSync(process.execPath));
  return out;
}

export interface LocalSandbox {
  /** What the workload is, for errors: "job train-1", "deployment demo-…". */
  what: string;
  /** The workload's own directory: its sandbox root (`root/`) and scratch working directory (`work/`) live here. */
  dir: string;
  /** TANDEM_HOME: never visible, even where it lies inside the installation. */
  home: string;
  /** Further host paths visible read-only (a model server's checkpoint), even inside TANDEM_HOME. */
  readOnly?: string[];
  /** Host directories writable at their own paths (a job's run data and checkpoints). */
  writable?: string[];
  /** `host` only for a workload that must be reached on the host's 127.0.0.1 (a model server). */
  network?: 'none' | 'host';
}

/** TANDEM_HOME as given and as its real path (a home reached through a symlink, /home/u → /gpfs/…): both hidden. */
function homePaths(home: string): string[] {
  const abs = resolve(home);
  const real = existsSync(abs) ? realpathSync(abs) : abs;
  return real === abs ? [abs] : [abs, real];
}

/** `bwrap … -- argv` for a local workload, and its working directory (`<dir>/work`, writable). */
export function sandboxedCommand(argv: string[], s: LocalSandbox): { command: string[]; work: string } {
  const work = join(s.dir, 'work');
  mkdirSync(work, { recursive: true });
  try {
    const args = sandboxArgs(
      { argv, workingDir: work, volumeMounts: [], ownPaths: [], readOnly: [...tandemInstallation(), ...(s.readOnly ?? [])], hide: homePaths(s.home), writable: [work, ...(s.writable ?? [])], network: s.network },
      { root: join(s.dir, 'root'), volumesDir: join(s.dir, 'volumes') },
    );
    return { command: [bwrapBinary(), ...args], work };
  } catch (e) {
    if (e instanceof SandboxUnavailable) throw failure('RuntimeUnavailable', `${s.what}: ${e.message}`);
    throw e;
  }
}

/**
 * A small file a sandboxed workload wrote (a progress or endpoint file), read without trusting it: not
 * through a symlink (O_NOFOLLOW: a link to a secret or /dev/zero), never blocking on a FIFO
 * (O_NONBLOCK), only a regular file of at most `maxBytes`. Undefined when absent or refused.
 */
export function readWorkloadFile(path: string, maxBytes: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined; // absent, a symlink (ELOOP), or unreadable
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return undefined;
    const buf = Buffer.alloc(st.size);
    const n = readSync(fd, buf, 0, st.size, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Why `path` may not be bound into a sandbox as a model server's checkpoint: a training job of the run
 * can write its checkpoints directory, so a planted symlink there (`step-40 → $TANDEM_HOME`) would
 * otherwise show the server whatever it points at. Inside TANDEM_HOME no component below the home may
 * be a symlink and the path must lie in a run's checkpoints; anywhere, it must be a real directory that
 * neither is nor contains the home.
 */
export function checkpointBindProblem(path: string, home: string): string | undefined {
  const abs = resolve(path);
  const homeAbs = resolve(home);
  let st;
  try {
    st = lstatSync(abs);
  } catch {
    return undefined; // absent: nothing is bound, and the server says it cannot load it
  }
  if (st.isSymbolicLink() || !st.isDirectory()) return 'not a directory (a checkpoint is a directory; a symlink is refused)';
  const real = realpathSync(abs);
  const homeReal = existsSync(homeAbs) ? realpathSync(homeAbs) : homeAbs;
  for (const h of [homeAbs, homeReal]) if (h === real || h.startsWith(`${real}${sep}`)) return 'it contains TANDEM_HOME';
  const rel = relative(homeAbs, abs);
  if (!rel.startsWith('..') && !isAbsolute(rel)) {
    const parts = rel.split(sep);
    if (parts[0] !== 'runs' || parts[2] !== 'checkpoints' || parts.length < 4) return "inside TANDEM_HOME but not in a run's checkpoints";
    for (let i = 1; i <= parts.length; i++) if (lstatSync(join(homeAbs, ...parts.slice(0, i))).isSymbolicLink()) return `${join(homeAbs, ...parts.slice(0, i))} is a symlink`;
  } else if (real.startsWith(`${homeReal}${sep}`)) return 'it leads into TANDEM_HOME';
  return undefined;
}
