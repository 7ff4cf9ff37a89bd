// `npm run bench:fuzz`: 1,000+ generated cases per loader (FUZZ_CASES overrides; FUZZ_SEED picks the
// run), each timed; prints a table and exits 1 on any crash or hang (a case whose loader spends over 10 s of CPU), listing them.
import { fuzzTarget, HANG_MS, targets } from './targets.js';

const cases = Number(process.argv[2] ?? 1000);
const seed = Number(process.argv[3] ?? 17);
const rows = targets().map((t) => fuzzTarget(t, cases, seed));
const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log(`fuzz: ${cases} cases per loader, seed ${seed}, hang threshold ${HANG_MS} ms of CPU; times below are CPU ms`);
console.log(['loader'.padEnd(8), pad('cases', 6), pad('accepted', 9), pad('rejected', 9), pad('crashes', 8), pad('hangs', 6), pad('max cpu ms', 11), pad('mean cpu ms', 12)].join('  '));
for (const r of rows) console.log([r.target.padEnd(8), pad(r.cases, 6), pad(r.accepted, 9), pad(r.rejected, 9), pad(r.crashes.length, 8), pad(r.hangs.length, 6), pad(r.maxMs.toFixed(1), 11), pad((r.totalMs / r.cases).toFixed(2), 12)].join('  '));
let bad = 0;
for (const r of rows) {
  for (const c of r.crashes.slice(0, 5)) console.log(`\nCRASH ${r.target}: ${c.detail}\n  input: ${JSON.stringify(c.text)}`);
  for (const h of r.hangs.slice(0, 5)) console.log(`\nHANG ${r.target}: ${h.ms.toFixed(0)} ms of CPU\n  input: ${JSON.stringify(h.text)}`);
  bad += r.crashes.length + r.hangs.length;
}
process.exitCode = bad ? 1 : 0;
