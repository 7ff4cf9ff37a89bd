// Placement decisions that happen (PATCHES.placementActions): a reservation is waited for before the
// job is submitted, explanations read as a person would (local time, no epochs, no topology a laptop
// lacks), and only Tandem's own, labelled, lower-priority checkpointable jobs are preemption victims.
// Real Temporal dev server and the real local runtime; the one scripted piece is the inventory source
// that reports the local node busy for a few seconds (to force a "reserve" decision).
import { hostname } from 'node:os';
import { createPlacementActivities, markPreemptible, type InventorySource, type RunningWork } from '../../activities/placement.js';
import { slurmInventory } from '../../activities/placement-sources.js';
import { encodeJobLabels, decodeJobLabels } from '../../contract/job-labels.js';
import { tandemActivities } from '../../workers/worker.js';
import { decide, policy } from '../../placement/index.js';
import { spec, startWorker, tempDir, uniqueQueue } from '../helpers.js';

const EPOCH = /\b1[6-9]\d{8}(\.\d+)?\b|t=\d/;
const job = (over = {}) => ({ id: 'tandem-r-train-1', type: 'ai-training' as const, tenant: 'a', qos: 'silver' as const, priority: 100, submit: Date.now() / 1000, count: 2, per: { cpus: 2, gpus: 0, memoryMB: 64 }, walltime: 600, ...over });

/** The local node (4 CPUs, no topology), fully used until `busyUntil` (epoch seconds) by another job. */
function busyLocal(busyUntil: () => number, cpus = 4): InventorySource {
  const node = hostname();
  return {
    name: 'scripted-local',
    async gather() {
      const now = Date.now() / 1000;
      const running: RunningWork[] = now < busyUntil() ? [{ job: { id: 'other-user', type: 'hybrid', tenant: 'site', qos: 'gold', priority: 1000, submit: 0, count: 1, per: { cpus, gpus: 0, memoryMB: 64 }, walltime: busyUntil() - now }, nodes: [{ node, slots: 1 }], start: now }] : [];
      return { sites: [{ name: 'local', clusters: [{ name: 'local', partitions: [{ name: 'local', nodes: [{ id: node, cpus, gpus: 0, memoryMB: 8192 }] }] }] }], running };
    },
  };
}

describe('what a person reads', () => {
  test('a reservation on a topology-less inventory: local time and "in N", no epoch seconds, no IB islands', async () => {
    const until = Date.now() / 1000 + 12 * 60;
    const { placeJob } = createPlacementActivities([busyLocal(() => until)]);
    const { decision, summary } = await placeJob({ job: job() });
    expect(decision.kind).toBe('reserve');
    expect(summary).toMatch(/^reserved 1 node\(s\) on local\/local from \d{1,2}:\d{2}(\s?[AP]M)? \(in 12 min\): /);
    expect(summary).not.toMatch(EPOCH);
    expect(summary).not.toMatch(/IB island/);
    const start = await createPlacementActivities([busyLocal(() => 0)]).placeJob({ job: job() });
    expect(start.decision.kind).toBe('start');
    expect(start.summary).toMatch(/^start now on 1 node\(s\) of local\/local\/local/);
    expect(start.summary).not.toMatch(/IB island/);
    // The deadline reasons speak in durations too.
    const late = await createPlacementActivities([busyLocal(() => until)]).placeJob({ job: job({ deadline: Date.now() / 1000 + 900 }) });
    expect(late.decision.kind).toBe('reject');
    expect(late.summary).toMatch(/would end \d+ min after its deadline/);
    expect(late.summary).not.toMatch(EPOCH);
  });

  test('a Slurm site with IB islands still says how many the job spans', () => {
    const inv = slurmInventory('zurich', 'alps', [{ name: 'n1', cpus: 8, memoryMB: 8000, allocCpus: 0, allocMemoryMB: 0, gpus: 0, allocGpus: 0, partitions: ['normal'], state: ['idle'], features: ['ib:leaf1'] }]);
    const d = decide({ sites: inv.sites }, [], job({ count: 1 }), 0, policy());
    expect(d.explanation).toMatch(/1 IB island\(s\)/);
  });
});

describe('who may be preempted', () => {
  const node = { name: 'n1', cpus: 8, memoryMB: 8000, allocCpus: 8, allocMemoryMB: 1024, gpus: 0, allocGpus: 0, partitions: ['normal'], state: ['allocated'], features: [] };
  const running = (name: string, comment: string | undefined) => ({ jobId: name === 'tandem-low-train-1' ? '11' : '12', name, state: 'RUNNING', comment, nodes: 'n1', nodeCount: 1, tres: 'cpu=4,mem=512M,node=1', startTime: Date.now() / 1000 - 60, timeLimitMinutes: 60 });
  const high = job({ id: 'tandem-high-train-1', count: 1, per: { cpus: 4, gpus: 0, memoryMB: 256 }, priority: 500 });

  test('a labelled lower-priority checkpointable Tandem job is the victim; a job Tandem did not submit never is', () => {
    const low = encodeJobLabels({ run: 'low run/1', stage: 'train', priority: 10, checkpointable: true });
    expect(decodeJobLabels(low)).toEqual({ run: 'low run/1', stage: 'train', priority: 10, checkpointable: true });
    // Someone else's job that copies Tandem's name prefix, but not its label, at lower priority still.
    const inv = slurmInventory('zurich', 'alps', [node], [running('tandem-low-train-1', low), running('tandem-lookalike', 'my own comment')]);
    expect(inv.running.map((w) => [w.job.id, w.tandem?.run])).toEqual([['tandem-low-train-1', 'low run/1'], ['zurich:n1:in-use', undefined]]);
    const d = decide({ sites: inv.sites }, markPreemptible(inv.running, high, 'high'), high, Date.now() / 1000, policy());
    expect(d).toMatchObject({ kind: 'preempt', victims: ['tandem-low-train-1'] });
    // Without the labelled job the only way in would be the foreign one: the job waits instead.
    const alone = slurmInventory('zurich', 'alps', [{ ...node, allocCpus: 8 }], [running('tandem-lookalike', undefined)]);
    expect(decide({ sites: alone.sites }, markPreemptible(alone.running, high, 'high'), high, Date.now() / 1000, policy()).kind).toBe('reserve');
    // Nor a Tandem job that is not checkpointable, of equal or higher priority, or of the same run.
    for (const [labels, run] of [[{ run: 'low', stage: 'preprocess', priority: 10, checkpointable: false }, 'high'], [{ run: 'low', stage: 'train', priority: 500, checkpointable: true }, 'high'], [{ run: 'high', stage: 'train', priority: 10, checkpointable: true }, 'high']] as const) {
      const inv2 = slurmInventory('zurich', 'alps', [node], [running('tandem-low-train-1', encodeJobLabels(labels)), running('tandem-lookalike', undefined)]);
      expect(decide({ sites: inv2.sites }, markPreemptible(inv2.running, high, run), high, Date.now() / 1000, policy()).kind).toBe('reserve');
    }
  });
});

describe('a reservation is waited for', () => {
  test('the job is not submitted before the reservation time, then it is placed afresh and runs', async () => {
    const home = tempDir('reserve');
    // Busy for 8 s from the first look: a short reservation offset; the pipeline's tuning is the default.
    let until = 0;
    const source = busyLocal(() => (until ||= Date.now() / 1000 + 8));
    const w = await startWorker({ taskQueue: uniqueQueue('reserve'), home, activities: tandemActivities({ home, inventorySources: [source] }) });
    try {
      const h = await w.tandem.launch(spec({ stages: { preprocess: { runtime: 'auto' }, train: { steps: 4, checkpointEvery: 2 } } }), { id: `reserve-${Date.now()}` });
      await h.result();
      const timeline = await h.timeline();
      const submitted = timeline.find((e) => e.kind === 'job-submitted' && e.stage === 'preprocess')!;
      expect(Date.parse(submitted.at) / 1000).toBeGreaterThanOrEqual(until);
      const placements = timeline.filter((e) => e.kind === 'placement' && e.stage === 'preprocess');
      expect(placements[0]!.message).toMatch(/^reserved 1 node\(s\) on local\/local from .* \(in \d+ s\)/);
      expect(placements.at(-1)!.message).toMatch(/^start now/);
      for (const p of placements) expect(p.message).not.toMatch(EPOCH);
    } finally {
      await w.stop();
    }
  }, 120_000);
});
