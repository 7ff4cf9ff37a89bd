// `npx tsx bench/spec-parse.ts [max=100000]`: how long validating a pipeline spec takes as its env
// grows, YAML (parsePipelineSpec, with the duplicate-key check) and an object (validatePipelineSpec).
// The YAML path used yaml's own uniqueKeys check, quadratic in a mapping's size: 100k env keys took
// 105 s. contract/parse.ts keyProblems() is one pass with a Set; the ratio column shows the growth
// per 10× more keys (≈10 is linear, ≈100 quadratic). Specs above MAX_ENV_ENTRIES are refused for
// their size, after the whole file was checked, which is what is timed.
import { parsePipelineSpec, SpecError, validatePipelineSpec } from '../contract/parse.js';

const max = Number(process.argv[2] ?? 100_000);
const sizes = [100, 1000, 10_000, 100_000].filter((n) => n <= max);

function time(fn: () => void): number {
  const t = performance.now();
  try {
    fn();
  } catch (e) {
    if (!(e instanceof SpecError)) throw e; // refused for its size: still a full validation
  }
  return performance.now() - t;
}

const rows = [['env keys', 'YAML ms', 'YAML ×/10× keys', 'object ms']];
let previous: number | undefined;
for (const n of sizes) {
  const env = Object.fromEntries(Array.from({ length: n }, (_, i) => [`K${i}`, 'v']));
  const text = `name: bench\nstages:\n  train:\n    env:\n${Object.keys(env).map((k) => `      ${k}: v`).join('\n')}\n`;
  const yamlMs = time(() => parsePipelineSpec(text));
  const objectMs = time(() => validatePipelineSpec({ name: 'bench', stages: { train: { env } } }));
  rows.push([String(n), yamlMs.toFixed(1), previous ? (yamlMs / previous).toFixed(1) : '-', objectMs.toFixed(1)]);
  previous = yamlMs;
}
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
console.log('\nbaseline (yaml uniqueKeys, before): 100k keys 105 s; goal: linear (ratio ≈ 10)');
