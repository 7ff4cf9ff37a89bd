import { MigrationPlanSchema } from '../../../contract/migration.js';

test('phase2.checkEvery is optional, and may not exceed the window it reads within', () => {
  expect(MigrationPlanSchema.parse({ site: 'zurich' }).phase2.checkEvery).toBeUndefined();
  expect(MigrationPlanSchema.parse({ site: 'zurich', phase2: { observeFor: '10m', checkEvery: '1m' } }).phase2.checkEvery).toBe('1m');
  const r = MigrationPlanSchema.safeParse({ site: 'zurich', phase2: { observeFor: '5m', checkEvery: '6m' } });
  expect(r.success).toBe(false);
  expect(r.error!.issues).toEqual([expect.objectContaining({ path: ['phase2', 'checkEvery'], message: 'must not exceed observeFor (5m)' })]);
  expect(MigrationPlanSchema.safeParse({ site: 'zurich', phase2: { checkEvery: 'soon' } }).success).toBe(false);
});
