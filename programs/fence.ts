// Lease fencing for jobs that may outlive Tandem's view of them. Runs the real program as a child and
// lets it run only while the lease file says so: the watching activity renews the lease each time the
// site answers for the job; when the site becomes unreachable nobody renews it, and the job stops itself
// once the lease has expired. Tandem waits longer than the lease before it submits a replacement
// elsewhere, so there are never two live training jobs of one pipeline, even when the old site cannot
// be reached to cancel its job.
//   node --import tsx programs/fence.ts [--unreadable-grace-ms N] <lease-file> -- <program> [args...]
// The lease file holds {"expiresAt": <epoch ms>, "holder": "<job name>"}. Exit code 75 = fenced, and
// `<lease-file>.fenced` says so, so that a program that exits 75 on its own is not taken for fenced.
//
// A lease that cannot be read (a shared filesystem's hiccup, a renewal caught mid-write) is not an
// expired one: the job keeps the last expiry it read, and is stopped only when that expiry passes or
// the file stays unreadable for the grace period. The program runs in its own process group and the
// whole group is stopped, so a trainer's workers (torchrun, mpirun, a shell's children) stop with it.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { DEFAULT_UNREADABLE_GRACE_MS, FENCED_EXIT_CODE, fencedMarker } from './lease.js';

const argv = process.argv.slice(2);
let graceMs = DEFAULT_UNREADABLE_GRACE_MS;
if (argv[0] === '--unreadable-grace-ms') {
  graceMs = Number(argv[1]);
  argv.splice(0, 2);
}
const [leaseFile, sep, program, ...args] = argv;
if (!leaseFile || sep !== '--' || !program || !Number.isFinite(graceMs) || graceMs < 0) {
  console.error('usage: fence.ts [--unreadable-grace-ms N] <lease-file> -- <program> [args...]');
  process.exit(2);
}

/** The last expiry read, and since when the file has been unreadable (undefined while it reads). */
let lastExpiry = 0;
let unreadableSince: number | undefined;

function readLease(now: number): void {
  try {
    const v = Number((JSON.parse(readFileSync(leaseFile!, 'utf8')) as { expiresAt?: number }).expiresAt);
    if (!Number.isFinite(v)) throw new Error('no expiresAt');
    lastExpiry = v;
    unreadableSince = undefined;
  } catch {
    unreadableSince ??= now;
  }
}

/** Why the job must stop now, or undefined while the lease holds. */
function verdict(now = Date.now()): string | undefined {
  readLease(now);
  if (unreadableSince !== undefined && now - unreadableSince >= graceMs) return `lease ${leaseFile} unreadable for ${Math.round((now - unreadableSince) / 100) / 10}s`;
  if (unreadableSince === undefined && lastExpiry <= now) return `lease ${leaseFile} expired at ${new Date(lastExpiry).toISOString()}`;
  // Unreadable, within the grace: the last expiry read still holds.
  if (unreadableSince !== undefined && lastExpiry > 0 && lastExpiry <= now) return `lease ${leaseFile} expired at ${new Date(lastExpiry).toISOString()} (and is unreadable)`;
  return undefined;
}

function markFenced(): void {
  try {
    writeFileSync(fencedMarker(leaseFile!), new Date().toISOString());
  } catch {
    /* the exit code still says it; the watcher then treats it as the program's own failure */
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Before starting: a lease that expired while the job was queued means another job may already hold
// the work. An unreadable one gets the grace period to become readable.
for (;;) {
  const why = verdict();
  if (why === undefined && unreadableSince === undefined) break;
  if (why !== undefined) {
    console.error(`fence: ${why}; not starting`);
    markFenced();
    process.exit(FENCED_EXIT_CODE);
  }
  await sleep(100);
}

const child = spawn(program, args, { stdio: 'inherit', detached: true });
const killGroup = (sig: NodeJS.Signals) => {
  try {
    process.kill(-child.pid!, sig);
  } catch {
    /* the group is gone already */
  }
};
let fenced = false;
const timer = setInterval(() => {
  if (fenced) return;
  const why = verdict();
  if (why === undefined) return;
  fenced = true;
  markFenced();
  console.error(`fence: ${why}; stopping the job`);
  killGroup('SIGTERM');
  setTimeout(() => killGroup('SIGKILL'), 2000).unref();
}, 250);
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => killGroup(sig));
child.on('exit', (code, signal) => {
  clearInterval(timer);
  // Stragglers of the group (a trainer's own children) do not outlive the job.
  killGroup('SIGKILL');
  process.exit(fenced ? FENCED_EXIT_CODE : (code ?? (signal ? 128 + 1 : 1)));
});
