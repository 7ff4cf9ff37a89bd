// The interpreter's pure modules must load outside the workflow sandbox: none may import
// @temporalio/workflow at run time, directly or through another module of workflows/argo/.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../../../workflows/argo/', import.meta.url));
const PURE = ['model', 'nodes', 'scope', 'io', 'loops', 'pods', 'retry', 'memoize', 'sync', 'call', 'steps', 'dag', 'fanout-plan'];

/** Value imports of a module (`import type` and type-only specifier lists are erased). */
function valueImports(mod: string): string[] {
  const src = readFileSync(`${DIR}${mod}.ts`, 'utf8');
  return [...src.matchAll(/^import\s+(?!type\s)([^;]*?)\s+from\s+'([^']+)';/gms)]
    .filter(([, what]) => !/^\{[^}]*\}$/s.test(what!) || what!.replace(/[{}\s]/g, '').split(',').some((s) => s && !s.startsWith('type')))
    .map(([, , from]) => from!);
}

test.each(PURE)('%s.ts reaches no @temporalio/workflow at run time', (mod) => {
  const seen = new Set<string>();
  const visit = (m: string): string[] => {
    if (seen.has(m)) return [];
    seen.add(m);
    return valueImports(m).flatMap((from) => (from.startsWith('./') ? visit(from.slice(2).replace(/\.js$/, '')) : [from]));
  };
  expect(visit(mod)).not.toContain('@temporalio/workflow');
});

test('the Temporal-facing modules are the ones expected to import it', () => {
  for (const m of ['api', 'context', 'lock-client', 'leaves', 'template', 'interpreter']) expect(valueImports(m)).toContain('@temporalio/workflow');
});
