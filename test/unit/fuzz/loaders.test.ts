// A fast subset of `npm run bench:fuzz` (bench/fuzz/targets.ts): 100 generated cases per loader (spec,
// sites, quotas, Argo, history) on a fixed seed. Each must be accepted or refused with every issue
// located (a path or a line); none may crash or take over the hang threshold.
import { fuzzTarget, HANG_MS, runCase, targets } from '../../../bench/fuzz/targets.js';
import type { InputIssue } from '../../../contract/input-error.js';

test.each(targets().map((t) => [t.name, t]))('%s: 100 generated cases, no crash, no hang, every rejection located', (_name, t) => {
  const tally = fuzzTarget(t, 100, 4242);
  expect(tally.cases).toBe(100);
  expect(tally.crashes).toEqual([]);
  expect(tally.hangs).toEqual([]);
  expect(tally.maxMs).toBeLessThan(HANG_MS);
  // The generator really reaches both sides of each loader.
  expect(tally.rejected).toBeGreaterThan(20);
});

test('the harness counts what is not a clean rejection as a crash', () => {
  const t = { name: 'x', seeds: [], render: 'json' as const, load: (s: string) => (s === 'throw' ? JSON.parse('{') : s === 'unlocated' ? [{ message: 'somewhere' } as InputIssue] : s === 'whole' ? [{ path: '', message: 'the file is empty' }] : undefined) };
  expect(runCase(t, 'throw').outcome).toBe('crash');
  expect(runCase(t, 'unlocated')).toMatchObject({ outcome: 'crash', detail: 'unlocated issue: somewhere' });
  expect(runCase(t, 'whole').outcome).toBe('rejected'); // path '' is the whole input (InputIssue)
  expect(runCase(t, 'fine').outcome).toBe('accepted');
});
