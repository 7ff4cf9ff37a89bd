// The one sandbox of the local runtime's workloads outside Argo: pipeline jobs (backends/local-jobs.ts)
// and model servers (backends/local-serving.ts). Both run under bubblewrap through the Argo target's
// sandboxArgs (activities/argo/sandbox.ts): the system allowlist and the Tandem installation
// read-only, TANDEM_HOME hidden, only the workload's own directories visible beyond that.
import { closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync, readSync, realpathSync } from 'node:fs';
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
  /** Further host paths visible read-only, even inside TANDEM_HOME. */
  readOnly?: string[];
  /**
   * Directories visible read-only through a descriptor the caller opened (a model server's pinned
   * checkpoint, pinCheckpoint), even inside TANDEM_HOME. Each is handed to bwrap as the child's fd
   * `3 + index`: spawn with `stdio: [in, out, err, ...fds]` (sandboxedCommand returns them in order).
   */
  readOnlyFds?: PinnedCheckpoint[];
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

/**
 * `bwrap … -- argv` for a local workload, its working directory (`<dir>/work`, writable), and the
 * descriptors to pass as the child's fds 3, 4, … (`stdio: [in, out, err, ...fds]`).
 */
export function sandboxedCommand(argv: string[], s: LocalSandbox): { command: string[]; work: string; fds: number[] } {
  const work = join(s.dir, 'work');
  mkdirSync(work, { recursive: true });
  try {
    const args = sandboxArgs(
      {
        argv,
        workingDir: work,
        volumeMounts: [],
        ownPaths: [],
        readOnly: [...tandemInstallation(), ...(s.readOnly ?? [])],
        readOnlyFds: (s.readOnlyFds ?? []).map((p, i) => ({ fd: 3 + i, path: p.path })),
        hide: homePaths(s.home),
        writable: [work, ...(s.writable ?? [])],
        network: s.network,
      },
      { root: join(s.dir, 'root'), volumesDir: join(s.dir, 'volumes') },
    );
    return { command: [bwrapBinary(), ...args], work, fds: (s.readOnlyFds ?? []).map((p) => p.fd) };
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

/** A checkpoint directory opened for a sandbox: bound through its descriptor, so what was checked is what is bound. */
export interface PinnedCheckpoint {
  /** An open descriptor of the directory (O_DIRECTORY | O_NOFOLLOW); the caller closes it once the sandbox started. */
  fd: number;
  /** The path the sandbox shows it at (the requested path, absolute). */
  path: string;
}

/**
 * Opens `path` to bind into a sandbox as a model server's checkpoint, or says why it may not be. A
 * training job of the run can write its checkpoints directory, so a planted symlink there
 * (`step-40 → $TANDEM_HOME`) would otherwise show the server whatever it points at, and a check of
 * the path followed by a bind of the path leaves a window in which the job swaps the checked
 * directory for a link. So the directory is opened once (never through a symlink as its last
 * component), every check reads where that descriptor really is (/proc/self/fd), and bwrap binds the
 * descriptor (`--ro-bind-fd`), not the path. Inside TANDEM_HOME the descriptor must be exactly at the
 * requested path under the home's real path (no component below the home redirected) in a run's
 * checkpoints; anywhere, a real directory that neither is nor contains the home, nor leads into it.
 * Undefined `pinned` and `problem`: the path is absent (nothing is bound; the server says it cannot
 * load it).
 */
export function pinCheckpoint(path: string, home: string): { pinned?: PinnedCheckpoint; problem?: string } {
  const abs = resolve(path);
  const homeAbs = resolve(home);
  const rel = relative(homeAbs, abs);
  const inHome = !rel.startsWith('..') && !isAbsolute(rel);
  if (inHome) {
    const parts = rel.split(sep);
    if (rel === '') return { problem: 'it contains TANDEM_HOME' };
    if (parts[0] !== 'runs' || parts[2] !== 'checkpoints' || parts.length < 4) return { problem: "inside TANDEM_HOME but not in a run's checkpoints" };
    // Named for the error: the first component below the home that is a symlink now.
    for (let i = 1; i <= parts.length; i++) {
      const at = join(homeAbs, ...parts.slice(0, i));
      try {
        if (lstatSync(at).isSymbolicLink()) return { problem: i === parts.length ? 'not a directory (a checkpoint is a directory; a symlink is refused)' : `${at} is a symlink` };
      } catch {
        return {}; // absent
      }
    }
  }
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { problem: 'not a directory (a checkpoint is a directory; a symlink is refused)' };
  }
  const refuse = (problem: string) => {
    closeSync(fd);
    return { problem };
  };
  let real: string;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return refuse('its real path cannot be read (/proc/self/fd)');
  }
  const homeReal = existsSync(homeAbs) ? realpathSync(homeAbs) : homeAbs;
  for (const h of [homeAbs, homeReal]) if (h === real || h.startsWith(`${real}${sep}`)) return refuse('it contains TANDEM_HOME');
  if (inHome) {
    // Opened somewhere else than the path checked above: a component was swapped for a link meanwhile.
    if (real !== join(homeReal, rel)) return refuse(`it was redirected while opened (now at ${real})`);
  } else if (real.startsWith(`${homeReal}${sep}`) || real.startsWith(`${homeAbs}${sep}`)) return refuse('it leads into TANDEM_HOME');
  return { pinned: { fd, path: abs } };
}
