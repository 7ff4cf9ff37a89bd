// The house rule behind config/: only config/worker.ts reads the worker's TANDEM_* and TEMPORAL_*
// variables. The job programs read their job contract through programs/env.ts only.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SOURCE = ['argo', 'contract', 'workflows', 'activities', 'backends', 'programs', 'workers', 'sdk', 'cli', 'ui', 'placement', 'config', 'codec', 'audit', 'observe'];
const files = (dir: string): string[] => {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));
};

test('only config/worker.ts (and programs/env.ts, the job side) read the environment', () => {
  // `process.env.X`, `process.env[...]`, `env.TANDEM_X`, commander's `.env('TANDEM_X')` — but not
  // `{ ...process.env, … }` (the environment handed to child processes), PATH lookups, or setting a
  // job's variables (`env.TANDEM_JOB_ID = …`).
  const reads = /process\.env(?:\.(?!PATH\b)\w+|\[)|\benv\.(?:TANDEM|TEMPORAL)_\w+\b(?!\s*=[^=])|\.env\(['"](?:TANDEM|TEMPORAL)_/g;
  const found = SOURCE.flatMap((d) => files(join(ROOT, d)))
    .map((f) => relative(ROOT, f))
    .filter((f) => f !== 'config/worker.ts' && f !== 'programs/env.ts')
    .flatMap((f) => [...readFileSync(join(ROOT, f), 'utf8').matchAll(reads)].map((m) => `${f}: ${m[0]}`));
  expect(found).toEqual([]);
});
