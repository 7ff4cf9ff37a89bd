// stagedMigration's phases, gates, approvals, fallback and rollback on the real Temporal server,
// against an in-memory site (test/migration/slurm.long.test.ts, in npm run test:long, runs the same against real Slurm).
import type { WorkflowHandle } from '@temporalio/client';
import { MigrationPlanSchema, type MigrationPlanInput } from '../../contract/migration.js';
import { approveSignal, migrationStatusQuery, rollbackUpdate, stagedMigration } from '../../workflows/migration.js';
import { waitFor } from '../helpers.js';
import { useMigrationWorkers, type StartMigration } from './harness.js';
import { fakeSite, type FakeSiteScript } from './fake-site.js';

const withWorker = useMigrationWorkers();

const plan = (over: Partial<MigrationPlanInput> = {}) =>
  MigrationPlanSchema.parse({ site: 'zurich', phase2: { steps: [50, 100], observeFor: '200ms' }, phase3: { rollbackWindow: '2s' }, ...over });

async function withSite<T>(script: FakeSiteScript, fn: (h: StartMigration, site: ReturnType<typeof fakeSite>) => Promise<T>): Promise<T> {
  const site = fakeSite(script);
  return withWorker(site.acts, (start) => fn(start, site));
}

const state = (h: WorkflowHandle<typeof stagedMigration>) => h.query(migrationStatusQuery);
const until = (h: WorkflowHandle<typeof stagedMigration>, s: string) => waitFor(`state ${s}`, async () => ((await state(h)).state === s ? await state(h) : undefined), 30_000, 100);

describe('stagedMigration', () => {
  test('Phase 1 → 2 → 3 with approvals, then the legacy path is retired after the rollback window', async () => {
    await withSite({}, async (start, site) => {
      const h = await start(plan());
      let st = await until(h, 'awaiting-approval');
      expect(st.pools).toEqual({ legacy: 9, tandem: 1 });
      expect(site.partitions.get('tandem')?.nodes).toEqual(['n10']);
      expect(st.gates[0]).toMatchObject({ phase: 'phase1', passed: true });
      await h.signal(approveSignal, 'phase2');
      await waitFor('phase 2 done', async () => ((await state(h)).completedPhases.includes('phase2') || undefined));
      expect(site.routing().percent).toBe(100);
      await h.signal(approveSignal, 'phase3');
      st = await h.result();
      expect(st.state).toBe('completed');
      expect(site.partitions.get('batch')).toMatchObject({ nodes: [], state: 'INACTIVE' });
      expect(site.partitions.get('tandem')).toMatchObject({ nodes: expect.arrayContaining(['n1', 'n10']), overSubscribe: 'YES:2' });
      expect(site.partitions.get('tandem')!.nodes).toHaveLength(10);
      expect(site.routing()).toEqual({ percent: 100, policies: ['preemption', 'oversubscription'], pools: { tandem: 'tandem', legacy: 'batch' } });
      expect(st.gates.map((g) => g.name)).toEqual(['benchmark', 'step 50%', 'step 100%']);
    });
  });

  test('a failing benchmark gate returns the nodes: partitions are identical to before', async () => {
    await withSite({ tandemRunSeconds: 40 }, async (start, site) => {
      const before = site.snapshot();
      const h = await start(plan());
      const st = await until(h, 'failed');
      expect(st.gates[0]).toMatchObject({ passed: false, reason: expect.stringMatching(/Tandem ran 40s vs legacy 10s \(limit 1.5x\)/) });
      expect(site.snapshot()).toEqual(before);
      expect(st.completedPhases).toEqual([]);
      await h.terminate('test done');
    });
  });

  test('an SLO breach in Phase 2 falls back automatically: routing 0%, pilot nodes returned, reason recorded', async () => {
    await withSite({ observations: [{}, { errorRate: 0.4, failed: 4, jobs: 10 }] }, async (start, site) => {
      const before = site.snapshot();
      const h = await start(plan({ requireApproval: false }));
      const st = await until(h, 'failed');
      expect(site.routing().percent).toBe(0);
      expect(site.snapshot()).toEqual(before);
      expect(st.gates.at(-1)).toMatchObject({ phase: 'phase2', name: 'step 100%', passed: false, reason: 'error rate 40.0% > 5.0% (4/10 jobs failed)' });
      expect(st.log.map((l) => l.message)).toContain('fell back: routing 0%, pilot nodes returned to the legacy pool');
      await h.terminate('test done');
    });
  });

  test('an operator rolls back from Phase 3 to Phase 2 within the window', async () => {
    await withSite({}, async (start, site) => {
      const h = await start(plan({ requireApproval: false, phase3: { rollbackWindow: '1h' } }));
      await until(h, 'rollback-window');
      const afterPhase2 = { tandem: ['n10'], batch: site.partitions.get('batch')!.state };
      expect(afterPhase2.batch).toBe('DRAIN');
      const r = await h.executeUpdate(rollbackUpdate);
      expect(r).toEqual({ rolledBack: 'phase3', state: 'rolled-back' });
      const st = await state(h);
      expect(st.completedPhases).toEqual(['phase1', 'phase2']);
      expect(site.partitions.get('batch')).toMatchObject({ state: 'UP' });
      expect(site.partitions.get('batch')!.nodes).toHaveLength(9);
      expect(site.partitions.get('tandem')).toMatchObject({ nodes: ['n10'], overSubscribe: 'NO' });
      // Back to Phase 2's last step, still split between the two pools.
      expect(site.routing()).toEqual({ percent: 100, policies: [], pools: { tandem: 'tandem', legacy: 'batch' } });
      await h.terminate('test done');
    });
  });

  test('rolling back during Phase 1 undoes its half-done changes; a rollback with nothing to undo is refused', async () => {
    let release: () => void = () => {};
    const hold = new Promise<void>((r) => (release = r));
    await withSite({ holdBenchmarks: hold }, async (start, site) => {
      const before = site.snapshot();
      const h = await start(plan());
      await waitFor('pilot nodes moved', () => (site.partitions.get('tandem')?.nodes.length ? true : undefined));
      expect(await h.executeUpdate(rollbackUpdate)).toEqual({ rolledBack: 'phase1', state: 'rolled-back' });
      expect(site.snapshot()).toEqual(before);
      await expect(h.executeUpdate(rollbackUpdate)).rejects.toMatchObject({ cause: { message: expect.stringMatching(/no phase has made changes yet; nothing to roll back/) } });
      release();
      await h.terminate('test done');
    });
  });

  test('the plan is validated with field paths', () => {
    const r = MigrationPlanSchema.safeParse({ site: 'Zurich', legacyPartition: 'batch', tandemPartition: 'batch', phase2: { steps: [50, 20] } });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path.join('.'))).toEqual(['site', 'tandemPartition', 'phase2.steps']);
  });
});
