// Lease fencing for jobs that may outlive Tandem's view of them. Runs the real program as a child and
// lets it run only while the lease file says so: the watching activity renews the lease each time the
// site answers for the job; when the site becomes unreachable nobody renews it, and the job stops itself
// once the lease has expired. Tandem waits longer than the lease before it submits a replacement
// elsewhere, so there are never two live training jobs of one pipeline, even when the old site cannot
// be reached to cancel its job.
//   node --import tsx runtime/fence.ts <lease-file> -- <program> [args...]
// The lease file holds {"expiresAt": <epoch ms>, "holder": "<job name>"}. Exit code 75 = fenced, and
// `<lease-file>.fenced` says so, so that a program that exits 75 on its own is not taken for fenced.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { FENCED_EXIT_CODE, fencedMarker } from './lease.js';

const [leaseFile, sep, program, ...args] = process.argv.slice(2);
if (!leaseFile || sep !== '--' || !program) {
  console.error('usage: fence.ts <lease-file> -- <program> [args...]');
  process.exit(2);
}

function expiresAt(): number {
  try {
    return Number((JSON.parse(readFileSync(leaseFile!, 'utf8')) as { expiresAt?: number }).expiresAt ?? 0);
  } catch {
    return 0; // absent or mid-write: treated as expired only if it stays so (checked again below)
  }
}

function markFenced(): void {
  try {
    writeFileSync(fencedMarker(leaseFile!), new Date().toISOString());
  } catch {
    /* the exit code still says it; the watcher then treats it as the program's own failure */
  }
}

function valid(): boolean {
  return expiresAt() > Date.now();
}

if (!valid()) {
  // A lease that expired while the job was queued: another job may already hold the work.
  await new Promise((r) => setTimeout(r, 300));
  if (!valid()) {
    console.error(`fence: lease ${leaseFile} has expired; not starting`);
    markFenced();
    process.exit(FENCED_EXIT_CODE);
  }
}

const child = spawn(program, args, { stdio: 'inherit' });
let fenced = false;
const timer = setInterval(() => {
  if (valid() || fenced) return;
  fenced = true;
  markFenced();
  console.error(`fence: lease ${leaseFile} expired at ${new Date(expiresAt()).toISOString()}; stopping the job`);
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), 2000).unref();
}, 250);
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => {
  clearInterval(timer);
  process.exit(fenced ? FENCED_EXIT_CODE : (code ?? (signal ? 128 + 1 : 1)));
});
