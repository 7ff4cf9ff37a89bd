// `.ci/run`'s end-of-run check (the lanes' own is test/lanes/process-guard.mjs, which this reuses):
//   node scripts/ci/guard.mjs check <cgroup dir> <pid of .ci/run>
// lists every process still in the run's cgroup besides .ci/run itself, kills them and exits 1.
import { describeLeftovers, leftovers } from '../../test/lanes/process-guard.mjs';

const [cmd, dir, ciPid] = process.argv.slice(2);
if (cmd !== 'check' || !dir || !ciPid) {
  console.error('usage: node scripts/ci/guard.mjs check <cgroup dir> <pid of .ci/run>');
  process.exit(2);
}
const exclude = [Number(ciPid), process.ppid];
let left = leftovers({ dir }, exclude);
for (let i = 0; i < 40 && left.length; i++) {
  await new Promise((r) => setTimeout(r, 250));
  left = leftovers({ dir }, exclude);
}
if (!left.length) {
  console.log('ci: no process of the run is left running');
  process.exit(0);
}
console.error(`ci: ${left.length} process(es) started by this run were still running at its end (now killed):\n${describeLeftovers(left)}`);
for (const p of left) {
  try {
    process.kill(p.pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}
process.exit(1);
