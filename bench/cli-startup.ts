// `npm run bench:cli-startup`: how long `tandem --help` and `tandem --version` take to start, from the
// compiled package (bin/tandem.js → dist/, what users run) and from the TypeScript through tsx (what
// `npm run tandem` in a checkout runs), against bare `node` starting and exiting. Median of N runs
// each, interleaved so machine load hits every row alike. The goal is ≤ 0.5 s from the compiled bin.
// Usage: npm run bench:cli-startup -- [runs=10]   (builds dist/ first when it is missing)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const runs = Number(process.argv[2] ?? 10);
const GOAL_S = 0.5;
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = fileURLToPath(new URL('../bin/tandem.js', import.meta.url));
const source = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

if (!existsSync(new URL('../dist/cli/main.js', import.meta.url))) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });

interface Row {
  name: string;
  argv: string[];
  times: number[];
}
const rows: Row[] = [
  { name: 'node (bare start-up)', argv: ['-e', '0'] },
  ...['--help', '--version'].flatMap((flag) => [
    { name: `compiled  tandem ${flag}`, argv: [bin, flag] },
    { name: `tsx       tandem ${flag}`, argv: ['--import', tsx, source, flag] },
  ]),
].map((r) => ({ ...r, times: [] }));

for (let i = 0; i < runs; i++) {
  for (const r of rows) {
    const t = process.hrtime.bigint();
    const p = spawnSync(process.execPath, r.argv, { cwd: root, encoding: 'utf8' });
    const s = Number(process.hrtime.bigint() - t) / 1e9;
    if (p.status !== 0) throw new Error(`${r.name} exited ${p.status}: ${p.stderr}`);
    r.times.push(s);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const tsxOf = (name: string) => rows.find((r) => r.name === name.replace('compiled', 'tsx     '));
console.log(`tandem CLI start-up, median of ${runs} runs (node ${process.version})\n`);
console.log(`${'command'.padEnd(28)} ${'median s'.padStart(9)} ${'min s'.padStart(7)} ${'vs tsx'.padStart(7)}  goal ≤ ${GOAL_S} s`);
for (const r of rows) {
  const m = median(r.times);
  const t = r.name.startsWith('compiled') ? tsxOf(r.name) : undefined;
  const ratio = t ? `${(m / median(t.times)).toFixed(2)}×` : '';
  const goal = r.name.startsWith('compiled') ? (m <= GOAL_S ? 'met' : 'MISSED') : '';
  console.log(`${r.name.padEnd(28)} ${m.toFixed(3).padStart(9)} ${Math.min(...r.times).toFixed(3).padStart(7)} ${ratio.padStart(7)}  ${goal}`);
}
