// An in-memory Slurm site for migration workflow tests: partitions, routing and scripted benchmark
// and observation results, behind the same activity names as activities/migration.ts.
import type { MigrationActivities, Observation, Routing } from '../../activities/migration.js';
import type { BenchmarkResult, PartitionState, UndoStep } from '../../contract/migration.js';

export interface FakeSiteScript {
  /** Tandem's run time per benchmark (legacy is always 10 s): > 15 fails a 1.5x gate. */
  tandemRunSeconds?: number;
  /** Observations returned by successive Phase 2 steps. */
  observations?: Partial<Observation>[];
  /** Make runBenchmarks block until released (for pause/rollback-during-phase tests). */
  holdBenchmarks?: Promise<void>;
}

export function fakeSite(script: FakeSiteScript = {}) {
  const nodes = Array.from({ length: 10 }, (_, i) => `n${i + 1}`);
  const partitions = new Map<string, PartitionState>([
    ['batch', { name: 'batch', nodes: [...nodes], state: 'UP', overSubscribe: 'NO' }],
    ['debug', { name: 'debug', nodes: ['n1'], state: 'UP', overSubscribe: 'NO' }],
  ]);
  let routing: Routing = { percent: 0, policies: [] };
  const changes: string[] = [];
  let step = 0;
  const snapshot = () => [...partitions.values()].map((p) => ({ ...p, nodes: [...p.nodes].sort() })).sort((a, b) => a.name.localeCompare(b.name));

  const acts: MigrationActivities = {
    async snapshotSite() {
      return { partitions: snapshot() };
    },
    async applyPartition(_site, p) {
      const cur = partitions.get(p.name);
      const next = { ...p, nodes: [...p.nodes].sort(), overSubscribe: p.overSubscribe ?? cur?.overSubscribe ?? 'NO' };
      if (cur && JSON.stringify(cur) === JSON.stringify(next)) return false;
      partitions.set(p.name, next);
      changes.push(`${p.name}:${next.nodes.join(',')}:${next.state}`);
      return true;
    },
    async removePartition(_site, name) {
      changes.push(`delete:${name}`);
      return partitions.delete(name);
    },
    async setRouting(_site, r) {
      const prev = routing;
      routing = r;
      return prev;
    },
    async getRouting() {
      return routing;
    },
    async applyUndo(site, s: UndoStep) {
      if (s.kind === 'set-partition') await acts.applyPartition(site, s.partition);
      else if (s.kind === 'delete-partition') await acts.removePartition(site, s.name);
      else await acts.setRouting(site, { percent: s.percent, policies: s.policies, ...(s.pools ? { pools: s.pools } : {}) });
    },
    async runBenchmarks(_site, input) {
      await script.holdBenchmarks;
      const out: BenchmarkResult[] = [];
      for (const kind of input.suite) {
        out.push({ kind, pool: 'legacy', jobId: `l-${kind}`, state: 'COMPLETED', waitSeconds: 1, runSeconds: 10 });
        out.push({ kind, pool: 'tandem', jobId: `t-${kind}`, state: 'COMPLETED', waitSeconds: 1, runSeconds: script.tandemRunSeconds ?? 11 });
      }
      return out;
    },
    async observePool() {
      const o = script.observations?.[step++] ?? {};
      return { jobs: 10, failed: 0, errorRate: 0, avgWaitSeconds: 2, utilisation: 0.9, ...o };
    },
  };
  return { acts, partitions, snapshot, changes, routing: () => routing };
}
