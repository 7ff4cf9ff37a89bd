// The house rules that lint cannot express: no import circles among the source modules (a circle
// makes load order matter and hides which module is the lower one), and the size cap on workflow files.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE = ['argo', 'contract', 'workflows', 'activities', 'backends', 'programs', 'workers', 'sdk', 'cli', 'ui', 'placement', 'config', 'codec', 'audit', 'observe'];

function files(dir: string): string[] {
  let out: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out = out.concat(files(p));
    else if (n.endsWith('.ts')) out.push(p);
  }
  return out;
}

/**
 * Imports of each module, as absolute paths of .ts files: type imports too (a type circle still tangles
 * the layers) and dynamic `import('./x.js')` (a module loaded lazily still depends on it: cli/groups.ts
 * loads the groups' modules, which must not import it back).
 */
function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const f of SOURCE.flatMap((d) => files(join(ROOT, d)))) {
    const text = readFileSync(f, 'utf8');
    const deps: string[] = [];
    for (const m of [...text.matchAll(/^(?:import|export)\s+[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms), ...text.matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)]) {
      const target = resolve(dirname(f), m[1]!).replace(/\.js$/, '.ts');
      deps.push(target.endsWith('.ts') ? target : `${target}/index.ts`);
    }
    g.set(f, deps);
  }
  return g;
}

function cycles(g: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, 'open');
    stack.push(n);
    for (const d of g.get(n) ?? []) {
      if (!g.has(d)) continue;
      if (state.get(d) === 'open') found.push(stack.slice(stack.indexOf(d)).concat(d).map((p) => relative(ROOT, p)));
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of g.keys()) if (!state.has(n)) visit(n);
  return found;
}

test('no import circles among source modules', () => {
  expect(cycles(graph())).toEqual([]);
});

test('the detector sees a circle', () => {
  const g = new Map([
    ['/a.ts', ['/b.ts']],
    ['/b.ts', ['/a.ts']],
  ]);
  expect(cycles(g)).toHaveLength(1);
});

test('no workflow file over 400 lines', () => {
  const big = files(join(ROOT, 'workflows'))
    .map((f) => ({ f: relative(ROOT, f), lines: readFileSync(f, 'utf8').split('\n').length }))
    .filter((x) => x.lines > 400);
  expect(big).toEqual([]);
});
