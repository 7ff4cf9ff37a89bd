// Nothing left behind: every process a test lane starts (model servers, job processes, Temporal,
// Slurm daemons, Kubernetes and Argo binaries) is put in a cgroup of the lane's own, so the lane can
// list what is still running when it ends, however the process was started (detached, setsid, a
// double fork, bubblewrap). cgroup membership is inherited by every descendant and survives
// re-parenting to init, which a process-tree walk does not see. Jest's global setup enters the guard
// before its workers start; its global teardown lists and ends what is left and fails the run.
// `.ci/run` does the same for the whole run (scripts/ci/guard.sh).
//
// Needs a writable cgroup v2 hierarchy (root, as on CI). Without one the guard says so in one line and
// checks nothing.
import { existsSync, mkdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The mount point of the cgroup v2 hierarchy (`/sys/fs/cgroup` or, on hybrid hosts, `/sys/fs/cgroup/unified`). */
function cgroup2Root() {
  try {
    for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const [left, right] = line.split(' - ');
      if (right?.startsWith('cgroup2 ')) return left.split(' ')[4];
    }
  } catch {
    /* not Linux */
  }
  return undefined;
}

/** This process's cgroup v2 path relative to the hierarchy's root (the `0::` line). */
function ownCgroup() {
  const line = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'));
  return line ? line.slice(3) : '/';
}

/**
 * Moves this process into a new cgroup below its current one; returns a handle, or undefined (with
 * the reason) where no cgroup can be made.
 */
export function enterGuard(name) {
  const root = cgroup2Root();
  if (!root) return { skipped: 'no cgroup v2 hierarchy is mounted' };
  const parent = join(root, ownCgroup());
  const dir = join(parent, `tandem-${name}-${process.pid}`);
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, 'cgroup.procs'), String(process.pid));
  } catch (e) {
    try {
      rmdirSync(dir);
    } catch {
      /* never made */
    }
    return { skipped: `cannot make a cgroup (${e.code ?? e.message}); run as root to check for leftover processes` };
  }
  return { dir, parent };
}

function processInfo(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      /* not ours to read */
    }
    return { pid, ppid: Number(ppid), state, cmd, cwd };
  } catch {
    return undefined; // exited meanwhile
  }
}

/** Processes in the guard's cgroup other than this one, those in `exclude`, and zombies. */
export function leftovers(guard, exclude = []) {
  if (!guard?.dir || !existsSync(guard.dir)) return [];
  const pids = readFileSync(join(guard.dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  return pids
    .filter((p) => p !== process.pid && !exclude.includes(p))
    .map(processInfo)
    .filter((p) => p && p.state !== 'Z' && !JEST_WORKER.test(p.cmd) && !(p.ppid === process.pid && ESBUILD_SERVICE.test(p.cmd)));
}

// Jest's own worker processes (ended by jest itself, after the last suite).
// tsx's esbuild service, a child of this very process (global setup imports TypeScript through tsx);
// it ends with the process.
const ESBUILD_SERVICE = /esbuild --service=/;
const JEST_WORKER = /jest-worker\/build\/.*(processChild|threadChild)/;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits up to `graceMs` for the cgroup to empty (processes that were told to stop and are exiting),
 * then kills what is left, leaves and removes the cgroup, and returns the processes that were left.
 */
export async function closeGuard(guard, graceMs = 10_000) {
  if (!guard?.dir) return [];
  const deadline = Date.now() + graceMs;
  let left = leftovers(guard);
  while (left.length && Date.now() < deadline) {
    await sleep(250);
    left = leftovers(guard);
  }
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (let i = 0; i < 40 && leftovers(guard).length; i++) await sleep(50);
  try {
    writeFileSync(join(guard.parent, 'cgroup.procs'), String(process.pid));
    rmdirSync(guard.dir);
  } catch {
    /* still in use: left for the host to clean */
  }
  return left;
}

export function describeLeftovers(left) {
  // The working directory names the suite's home for a job or model server (its command line does not).
  return left.map((p) => `  pid ${p.pid}: ${p.cmd.length > 200 ? `${p.cmd.slice(0, 200)}…` : p.cmd}${p.cwd ? ` (in ${p.cwd})` : ''}`).join('\n');
}
