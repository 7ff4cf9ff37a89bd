// Prints the slowest test files of a `.ci/run` (the lines test/lanes/suite-times.mjs appended) and
// each lane's total: `node scripts/ci/suite-times.mjs <file> [count]`.
import { readFileSync } from 'node:fs';

const [file, count = '15'] = process.argv.slice(2);
const rows = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => {
  const [s, lane, status, path] = l.split('\t');
  return { s: Number(s), lane, status, path };
});
const lanes = new Map();
for (const r of rows) lanes.set(r.lane, (lanes.get(r.lane) ?? 0) + r.s);
console.log(`\nslowest ${count} of ${rows.length} test files (seconds of wall time each; lanes run their files in parallel, so these add up to more than the lane took)`);
console.log('| s | lane | file |\n|---:|---|---|');
for (const r of [...rows].sort((a, b) => b.s - a.s).slice(0, Number(count))) console.log(`| ${r.s.toFixed(1)} | ${r.lane} | ${r.path}${r.status === 'failed' ? ' (failed)' : ''} |`);
console.log('\nper lane: sum of file times');
for (const [lane, s] of lanes) console.log(`  ${lane}: ${s.toFixed(0)} s in ${rows.filter((r) => r.lane === lane).length} files`);
