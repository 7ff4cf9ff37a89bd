// Every workload Tandem runs on this host — each local Argo pod and each local pipeline job
// (backends/local-jobs.ts) — lives in its own bubblewrap sandbox (Debian's `bubblewrap`,
// scripts/argo/install.sh), laid out like a container on a node. The host is NOT visible: the sandbox
// is built from an allowlist (docs/security.md has the threat model):
//   - its root filesystem is a directory of its run directory (<home>/argo/pods/<job>/<container>/root),
//     the writable layer a container has: whatever it writes outside its mounts lands there, never on
//     the host. Of the host only SYSTEM_PATHS are bound over it, read-only: the programs and libraries
//     (/usr, /bin, /sbin, /lib*) and the few /etc files programs need (passwd, hosts, ld.so.cache, ssl,
//     …), plus the container's `readOnly` extras (a job's program, the Tandem package). Nothing else —
//     not $HOME, not TANDEM_HOME, not the secret store, not other runs' directories — exists in it;
//   - /tmp, /proc and /dev are its own: a fresh /tmp directory of its root, a /proc of its own pid
//     namespace (the worker's processes are not in it), a minimal /dev;
//   - the paths the pod owns (its working directory, its input and output artifacts and parameters) are
//     directories or files of that root, so a declared path anywhere (/result.txt, /mnt/out/x.json)
//     exists; the visible host directories above them are rebuilt in the root with their other visible
//     entries bound read-only, so nothing of the allowlist is hidden or writable;
//   - emptyDir volumes are directories of the pod (<run>/volumes/<name>), bind-mounted at each mount
//     path, shared by its init and main containers as in a Kubernetes pod; a hostPath volume is the
//     host's directory, as on a node, within the roots the worker allows (activities/argo/local.ts);
//     a job's `writable` directories (its run's data and checkpoints, its job directory) are bound at
//     their host paths;
//   - pid, ipc, uts, network (and user, cgroup where possible) namespaces of its own: its network is its
//     own loopback only, so nothing on 127.0.0.1 of the host (the Temporal frontend, the worker's
//     metrics, model servers) is reachable. `network: 'host'` is a declared capability, given only to
//     model servers, which the readiness gate must reach on 127.0.0.1;
//   - resource limits: `resources.limits.memory` is the data segment limit (RLIMIT_DATA: heap and
//     writable anonymous mappings, what a memory limit means for a process without cgroups), the CPU
//     limit times the deadline is a CPU-time limit (RLIMIT_CPU), the deadline itself is the walltime
//     the job backend enforces.
// No silent fallback: a host where bwrap is missing or cannot create namespaces fails the workload with
// RuntimeUnavailable saying what is missing.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, symlinkSync, chmodSync } from 'node:fs';
import { posix } from 'node:path';
import { findExecutable } from '../../argo/local-command.js';

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
  /** A hostPath volume: this host's directory instead of the pod's own. */
  hostPath?: string;
}

/** One container of a pod, as the sandbox sees it: pod paths only, argv already resolved on the host. */
export interface SandboxContainer {
  argv: string[];
  /** The container's working directory (a pod path); `/` when the template names none, as in most images. */
  workingDir?: string;
  volumeMounts: VolumeMount[];
  /** Pod paths the container owns (output parameters and artifacts, input artifacts): never host content. */
  ownPaths: string[];
  /** RLIMIT_DATA in bytes. */
  memoryBytes?: number;
  /** RLIMIT_CPU in seconds: SIGXCPU at this, SIGKILL a second later (as the kernel does with soft < hard). */
  cpuSeconds?: number;
  /** Host paths bound read-only at the same path, beyond SYSTEM_PATHS (a job's program, the Tandem package). */
  readOnly?: string[];
  /** Host directories bound writable at the same path (a pipeline job's run directories, its job directory). */
  writable?: string[];
  /**
   * Directories bound read-only from descriptors the sandbox's parent holds (`--ro-bind-fd`: bwrap
   * binds the open directory and checks it is the one mounted, so a path swapped for a symlink after
   * it was checked binds nothing else). `fd` is the descriptor's number in bwrap's process.
   */
  readOnlyFds?: { fd: number; path: string }[];
  /** Host paths hidden (an empty tmpfs) where they lie inside a `readOnly` extra: TANDEM_HOME inside a checkout. */
  hide?: string[];
  /** `host`: the host's network (a declared capability: model servers); its own loopback only by default. */
  network?: 'none' | 'host';
}

/** The /etc entries a workload sees: users and groups, name resolution, the dynamic linker, certificates, time zone. */
const ETC = ['alternatives', 'ca-certificates', 'ca-certificates.conf', 'debian_version', 'group', 'host.conf', 'hostname', 'hosts', 'inputrc', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'mime.types', 'nsswitch.conf', 'os-release', 'passwd', 'profile', 'protocols', 'resolv.conf', 'services', 'ssl', 'timezone', 'bash.bashrc', 'magic'];

/** The host paths every sandbox sees, read-only (those that exist here). Everything else of the host is absent. */
export const SYSTEM_PATHS: readonly string[] = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', ...ETC.map((e) => `/etc/${e}`)];

/** Where a container's pod paths live on the host. */
export interface SandboxLayout {
  /** The container's root filesystem (its writable layer). */
  root: string;
  /** The pod's emptyDir volumes, one directory each. */
  volumesDir: string;
}

/** Host paths a pod never sees: its own /tmp, /proc and /dev replace them. */
const PRIVATE = new Set(['/tmp', '/proc', '/dev']);

const norm = (p: string): string => {
  const n = posix.normalize(p.startsWith('/') ? p : `/${p}`).replace(/\/+$/, '');
  return n === '' ? '/' : n;
};
const within = (p: string, dir: string): boolean => dir === '/' || p === dir || p.startsWith(`${dir}/`);

function mounts(c: SandboxContainer, layout: SandboxLayout): { pod: string; host: string; readOnly: boolean }[] {
  // Parents first, so a volume mounted inside another one is bound over it.
  return c.volumeMounts.map((m) => ({ pod: norm(m.mountPath), host: posix.join(m.hostPath ?? posix.join(layout.volumesDir, m.name), m.subPath ?? ''), readOnly: m.readOnly === true })).sort((a, b) => a.pod.length - b.pod.length);
}

/** The host paths a container sees read-only: the system allowlist and its own extras. */
function visible(c: SandboxContainer): string[] {
  return [...SYSTEM_PATHS, ...(c.readOnly ?? []).map(norm)];
}

/** A pod path made absolute (relative paths are relative to the working directory) and normalised. */
export const absolutePodPath = (c: SandboxContainer, podPath: string): string => norm(posix.isAbsolute(podPath) ? podPath : posix.join(c.workingDir ?? '/', podPath));

/**
 * The host path behind a pod path, for placing inputs and collecting outputs: inside a volume mount,
 * the volume's directory; otherwise the container's root, or the host itself for read-only host content
 * (an output artifact naming /etc/os-release). Relative paths are relative to the working directory.
 */
export function hostPath(c: SandboxContainer, layout: SandboxLayout, podPath: string): string {
  const p = absolutePodPath(c, podPath);
  const m = mounts(c, layout)
    .filter((v) => within(p, v.pod))
    .sort((a, b) => b.pod.length - a.pod.length)[0];
  if (m) return posix.join(m.host, posix.relative(m.pod, p));
  const inRoot = posix.join(layout.root, p);
  // A path the pod owns is never host content, even where the host has the same path (an /art directory).
  const owns = c.ownPaths.some((o) => within(p, absolutePodPath(c, o)));
  if (owns || existsSync(inRoot) || [...PRIVATE].some((d) => within(p, d))) return inRoot;
  // Host content only where the sandbox shows it (an output artifact naming /etc/os-release), never the rest of the host.
  return existsSync(p) && visible(c).some((v) => within(p, v)) ? p : inRoot;
}

/**
 * Host content the sandbox shows under a pod directory that is not itself shown (the files of /etc
 * bound into it): what the pod sees there beside its own root's files. Empty inside a volume mount.
 * Never a whole top-level tree (/usr, /lib), nor the job's program or the Tandem package bound
 * read-only: an artifact at `/` is the pod's root and /etc's files, not gigabytes of the host's.
 */
export function visibleUnder(c: SandboxContainer, layout: SandboxLayout, podPath: string): string[] {
  const p = absolutePodPath(c, podPath);
  if (mounts(c, layout).some((v) => within(p, v.pod))) return [];
  // The system's small entries only: not the job's program or the Tandem package bound read-only.
  return SYSTEM_PATHS.filter((v) => v !== p && within(v, p) && posix.dirname(v) !== '/' && existsSync(v));
}

/**
 * bwrap's arguments for one container, after preparing its root on the host (the rebuilt directories,
 * the host's top-level symlinks, /tmp). `list` reads a host directory (injectable for tests).
 */
export function sandboxArgs(c: SandboxContainer, layout: SandboxLayout, list: (dir: string) => HostEntry[] | undefined = listDir): string[] {
  const vols = mounts(c, layout);
  const inVolume = (p: string) => vols.some((v) => within(p, v.pod));
  const wd = norm(c.workingDir ?? '/');
  const owned = new Set([...c.ownPaths.map((p) => norm(posix.isAbsolute(p) ? p : posix.join(wd, p))).filter((p) => !inVolume(p)), ...vols.map((v) => v.pod)]);
  // Directories rebuilt in the root: every ancestor of an owned path, and the working directory.
  const rebuilt = new Set<string>(['/']);
  for (const p of [...owned, ...(inVolume(wd) ? [] : [wd])]) {
    for (let d = p === wd && !owned.has(p) ? p : posix.dirname(p); ; d = posix.dirname(d)) {
      rebuilt.add(d);
      if (d === '/') break;
    }
  }
  for (const d of rebuilt) mkdirSync(posix.join(layout.root, d), { recursive: true });
  const tmp = posix.join(layout.root, 'tmp');
  mkdirSync(tmp, { recursive: true });
  chmodSync(tmp, 0o1777);
  const args = ['--bind', layout.root, '/', '--dev', '/dev', '--proc', '/proc'];
  const shown = SYSTEM_PATHS;
  const walk = (dir: string) => {
    for (const e of list(dir) ?? []) {
      const p = posix.join(dir, e.name);
      if (PRIVATE.has(p) || owned.has(p) || vols.some((v) => within(p, v.pod) && p !== v.pod)) continue;
      const inside = shown.some((v) => within(p, v));
      // Neither allowlisted nor above an allowlisted path: absent from the sandbox.
      if (!inside && !shown.some((v) => within(v, p))) continue;
      if (rebuilt.has(p) || (!inside && e.symlink === undefined)) {
        mkdirSync(posix.join(layout.root, p), { recursive: true });
        walk(p);
        continue;
      }
      if (e.symlink !== undefined) {
        // A symlink (/bin → usr/bin) is recreated in the root: it points at the bound host content.
        const link = posix.join(layout.root, p);
        if (!existsSync(link) && !isLink(link)) symlinkSync(e.symlink, link);
      } else args.push('--ro-bind', p, p);
    }
  };
  walk('/');
  // Extras at their host paths (their real paths: a symlinked directory is bound as what it points at).
  // A path granted inside a hidden one (a model server's checkpoint inside TANDEM_HOME inside a checkout)
  // is bound after the tmpfs that hides the rest, or the tmpfs would cover it.
  const hidden = (p: string) => (c.hide ?? []).some((h) => within(norm(p), norm(h)));
  const bindReadOnly = (p: string) => existsSync(p) && args.push('--ro-bind', realpathSync(p), norm(p));
  for (const p of c.readOnly ?? []) if (!hidden(p)) bindReadOnly(p);
  for (const h of c.hide ?? []) if ((c.readOnly ?? []).some((r) => !hidden(r) && within(norm(h), norm(r)))) args.push('--tmpfs', norm(h));
  for (const p of c.readOnly ?? []) if (hidden(p)) bindReadOnly(p);
  for (const p of c.readOnlyFds ?? []) args.push('--ro-bind-fd', String(p.fd), norm(p.path)); // after the tmpfs, which would cover one inside the home
  for (const p of c.writable ?? []) {
    mkdirSync(p, { recursive: true });
    args.push('--bind', realpathSync(p), norm(p));
  }
  for (const v of vols) {
    mkdirSync(v.host, { recursive: true });
    args.push(v.readOnly ? '--ro-bind' : '--bind', v.host, v.pod);
  }
  // No capabilities, even when the worker runs as root: a sandboxed root could otherwise mount over its view or reach devices.
  args.push('--unshare-all', ...(c.network === 'host' ? ['--share-net'] : []), '--cap-drop', 'ALL', '--die-with-parent', '--chdir', wd, '--');
  const limits = [...(c.memoryBytes !== undefined ? [`--data=${c.memoryBytes}`] : []), ...(c.cpuSeconds !== undefined ? [`--cpu=${c.cpuSeconds}:${c.cpuSeconds + 1}`] : [])];
  if (limits.length) {
    const prlimit = findExecutable('prlimit');
    if (!prlimit) throw new SandboxUnavailable('resources.limits need prlimit (util-linux), which is not installed on this host');
    args.push(prlimit, ...limits, '--');
  }
  return [...args, ...c.argv];
}

/**
 * Whether the worker may read `file` (a host path behind a pod path) on the workload's behalf: its real
 * path is inside the workload's own root or volumes, or host content the workload sees anyway. A symlink
 * the workload planted (/tmp/out → <home>/argo/secrets/…) resolves elsewhere and is refused.
 */
export function readableFor(c: SandboxContainer, layout: SandboxLayout, file: string): boolean {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return false;
  }
  const real_ = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return norm(p);
    }
  };
  const own = [layout.root, layout.volumesDir, ...c.volumeMounts.flatMap((m) => (m.hostPath ? [m.hostPath] : [])), ...(c.writable ?? [])].map(real_);
  return own.some((d) => within(real, d)) || visible(c).some((v) => within(real, real_(v)) || within(real, v));
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** An entry of a host directory: its name, and its target when it is a symlink. */
export interface HostEntry {
  name: string;
  symlink?: string;
}

function listDir(dir: string): HostEntry[] | undefined {
  try {
    if (!lstatSync(dir).isDirectory()) return undefined;
    return readdirSync(dir, { withFileTypes: true }).map((d) => (d.isSymbolicLink() ? { name: d.name, symlink: readlinkSync(posix.join(dir, d.name)) } : { name: d.name }));
  } catch {
    return undefined; // vanished, or unreadable: nothing of it is bound
  }
}

export class SandboxUnavailable extends Error {}

let probed: { bwrap: string } | { error: string } | undefined;

/** The bwrap binary, after checking once per process that it can build a sandbox here. */
export function bwrapBinary(): string {
  probed ??= probeSandbox(findExecutable('bwrap'));
  if ('error' in probed) throw new SandboxUnavailable(probed.error);
  return probed.bwrap;
}

/** Whether `bwrap` (a path, or undefined when none is installed) can build a sandbox on this host. */
export function probeSandbox(bwrap: string | undefined): { bwrap: string } | { error: string } {
  if (!bwrap) return { error: 'Tandem runs every local Argo pod and local pipeline job in a bubblewrap sandbox, and bwrap is not installed: run scripts/argo/install.sh (Debian package bubblewrap)' };
  const r = spawnSync(bwrap, ['--ro-bind', '/usr', '/usr', ...['/bin', '/lib', '/lib64'].flatMap((d) => (existsSync(d) ? ['--ro-bind', d, d] : [])), '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-all', '--cap-drop', 'ALL', '--die-with-parent', '--', 'true'], { encoding: 'utf8', timeout: 10_000 });
  if (r.status === 0) return { bwrap };
  const why = (r.stderr || r.error?.message || `exit ${String(r.status)}`).trim();
  return {
    error:
      `Tandem runs every local Argo pod and local pipeline job in a bubblewrap sandbox, and bwrap cannot create one here (${why}): ` +
      'it needs mount and pid namespaces, which an unprivileged user gets only with user namespaces enabled ' +
      '(sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0; inside a container, a seccomp/AppArmor profile that allows unshare), or running as root',
  };
}

/** A Kubernetes quantity in bytes ("64Mi", "1G", "512k", "1e9"); undefined when it is not one. */
export function memoryBytes(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  const m = /^\s*([0-9.]+(?:[eE][0-9]+)?)\s*(Ki|Mi|Gi|Ti|Pi|Ei|k|K|M|G|T|P|E|m)?\s*$/.exec(String(q));
  if (!m) return undefined;
  const unit: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, m: 1e-3 };
  return Math.ceil(Number(m[1]) * (m[2] ? unit[m[2]]! : 1));
}

/** A Kubernetes CPU quantity in cores ("200m" → 0.2, "2" → 2); undefined when it is not one. */
export function cpuCores(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  const m = /^\s*([0-9.]+)(m)?\s*$/.exec(String(q));
  return m ? Number(m[1]) / (m[2] ? 1000 : 1) : undefined;
}

/** POSIX shell quoting of one word. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
