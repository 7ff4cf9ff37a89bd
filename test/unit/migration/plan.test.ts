import { MigrationPlanSchema } from '../../../contract/migration.js';

test('phase2.checkEvery is optional, and may not exceed the window it reads within', () => {
  expect(MigrationPlanSchema.parse({ site: 'zurich' }).phase2.checkEvery).toBeUndefined();
  expect(MigrationPlanSchema.parse({ site: 'zurich', phase2: { observeFor: '10m', checkEvery: '1m' } }).phase2.checkEvery).toBe('1m');
  const r = MigrationPlanSchema.safeParse({ site: 'zurich', phase2: { observeFor: '5m', checkEvery: '6m' } });
  expect(r.success).toBe(false);
  expect(r.error!.issues).toEqual([expect.objectContaining({ path: ['phase2', 'checkEvery'], message: 'must not exceed observeFor (5m)' })]);
  expect(MigrationPlanSchema.safeParse({ site: 'zurich', phase2: { checkEvery: 'soon' } }).success).toBe(false);
});

test('phase2.checkEvery is bounded below and in reads per window, so the history stays far from its limit', () => {
  const issue = (phase2: Record<string, unknown>) => MigrationPlanSchema.safeParse({ site: 'zurich', phase2 }).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  expect(issue({ observeFor: '10m', checkEvery: 0 })).toEqual(['phase2.checkEvery: must be at least 1s (got 0)']);
  expect(issue({ observeFor: '10m', checkEvery: '500ms' })).toEqual(['phase2.checkEvery: must be at least 1s (got 500ms)']);
  expect(issue({ observeFor: '24h', checkEvery: '1s' })).toEqual(['phase2.checkEvery: reads the pool 86400 times in observeFor 24h; at most 1000 are allowed: use checkEvery ≥ 87s']);
  expect(issue({ observeFor: '24h', checkEvery: '87s' })).toBeUndefined();
  expect(issue({ observeFor: '10m', checkEvery: '1s' })).toBeUndefined();
});
