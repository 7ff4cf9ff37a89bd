// The one sandbox of the local runtime's workloads outside Argo: pipeline jobs (backends/local-jobs.ts)
// and model servers (backends/local-serving.ts). Both run under bubblewrap through the Argo target's
// sandboxArgs (activities/argo/sandbox.ts): the system allowlist and the Tandem installation
// read-only, TANDEM_HOME hidden, only the workload's own directories visible beyond that.
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
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

/** `bwrap … -- argv` for a local workload, and its working directory (`<dir>/work`, writable). */
export function sandboxedCommand(argv: string[], s: LocalSandbox): { command: string[]; work: string } {
  const work = join(s.dir, 'work');
  mkdirSync(work, { recursive: true });
  try {
    const args = sandboxArgs(
      { argv, workingDir: work, volumeMounts: [], ownPaths: [], readOnly: [...tandemInstallation(), ...(s.readOnly ?? [])], hide: [s.home], writable: [work, ...(s.writable ?? [])], network: s.network },
      { root: join(s.dir, 'root'), volumesDir: join(s.dir, 'volumes') },
    );
    return { command: [bwrapBinary(), ...args], work };
  } catch (e) {
    if (e instanceof SandboxUnavailable) throw failure('RuntimeUnavailable', `${s.what}: ${e.message}`);
    throw e;
  }
}
