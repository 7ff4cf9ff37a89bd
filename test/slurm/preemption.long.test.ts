// Preemption on a real Slurm cluster (PATCHES.placementActions): a high-priority `auto` run that needs
// the room stops a low-priority Tandem training run's job, never a job someone else submitted to the
// cluster; the low run resumes from its checkpoint and both complete. Real Temporal dev server, real
// Slurm through slurmrestd, default tuning; placement sees only the Slurm site (not the local machine,
// which would otherwise offer the high run free room). The gang (multi-node) cases use the real
// inventory mapping with a scripted four-node site: the test bed's Slurm has a single node.
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createActivities } from '../../activities/index.js';
import { createPlacementActivities, type InventorySource } from '../../activities/placement.js';
import { slurmInventory, slurmrestdSource } from '../../activities/placement-sources.js';
import { runDirs } from '../../activities/run-store.js';
import { LocalServingBackend } from '../../backends/local-serving.js';
import { SlurmrestdJobBackend } from '../../backends/slurm/slurmrestd-backend.js';
import type { SiteJob, SlurmNode } from '../../backends/slurm/site-api.js';
import { decodeJobLabels, encodeJobLabels } from '../../contract/job-labels.js';
import type { TimelineEntry } from '../../contract/status.js';
import { spec, startWorker, temporalClient, uniqueQueue, waitFor } from '../helpers.js';
import { startCluster, type Cluster } from './cluster.js';

interface SqueueJob {
  id: string;
  name: string;
  state: string;
  comment: string;
  /** Epoch seconds. */
  start: string;
}

describe('preemption between runs on a real Slurm site', () => {
  let cluster: Cluster;
  let slurm: SlurmrestdJobBackend;
  let oldUmask: number;

  beforeAll(async () => {
    // Jobs run as the cluster's unprivileged user in run directories the worker (root) creates: on this
    // one-host bed they must be world-writable. Restored in afterAll.
    oldUmask = process.umask(0);
    cluster = await startCluster('preempt');
    slurm = new SlurmrestdJobBackend({ site: 'preempt', workDir: cluster.workDir, statusIntervalMs: 250, rest: { socketPath: cluster.restSocket } });
  }, 120_000);

  afterAll(async () => {
    process.umask(oldUmask);
    await cluster?.down();
  });

  /** Every job the cluster knows, whoever submitted it (squeue as root). */
  async function squeue(): Promise<SqueueJob[]> {
    const out = (await cluster.cli('squeue', ['-h', '-t', 'all', '-o', '%A|%j|%T|%k|%S'])).trim();
    return out ? out.split('\n').map((l) => { const [id, name, state, comment, start] = l.split('|'); return { id: id!, name: name!, state: state!, comment: comment!, start: String(Date.parse(start!) / 1000) }; }) : [];
  }
  const ofRun = (jobs: SqueueJob[], run: string, stage = 'train') => jobs.filter((j) => { const l = decodeJobLabels(j.comment); return l?.run === run && l.stage === stage; });

  test('a high-priority run preempts only the low-priority Tandem job; the foreign job runs on; the victim resumes from its checkpoint', async () => {
    const home = mkdtempSync(join(cluster.workDir, 'home-'));
    chmodSync(home, 0o777);
    // The node has 8 CPUs: the foreign job and the low run's training take 4 each, the high run needs 4.
    const foreignId = (await cluster.cli('sbatch', ['--parsable', '--job-name=someone-elses-sim', '--comment=not a tandem job', '--cpus-per-task=4', '--mem=512', '--chdir=/tmp', '--output=/dev/null', '--wrap=sleep 900'])).trim().split(';')[0]!;
    await waitFor('the foreign job to run', async () => ((await squeue()).find((j) => j.id === foreignId)?.state === 'RUNNING' ? true : undefined), 60_000, 250);
    const w = await startWorker({ taskQueue: uniqueQueue('preempt'), home, activities: createActivities({ home, backends: { slurm }, inventorySources: [slurmrestdSource(slurm)] }) });
    const suffix = Date.now().toString(36);
    const lowId = `preempt-low-${suffix}`;
    const highId = `preempt-high-${suffix}`;
    try {
      const low = await w.tandem.launch(
        spec({ name: 'low', priority: 10, stages: { preprocess: { runtime: 'local', samples: 200 }, train: { runtime: 'auto', steps: 200, checkpointEvery: 10, stepDelayMs: 150, resources: { cpusPerTask: 4, memoryMB: 512 } }, deploy: { runtime: 'local' } } }),
        { id: lowId },
      );
      // The victim must have a checkpoint to resume from: wait for its job to pass step 20 at Slurm.
      const victim = await waitFor('the low run to train at Slurm past step 20', async () => {
        const j = ofRun(await squeue(), lowId).find((x) => x.state === 'RUNNING');
        return j && ((await slurm.status(j.id)).progress?.step ?? 0) > 20 ? j : undefined;
      }, 90_000, 500);
      expect(decodeJobLabels(victim.comment)).toEqual({ run: lowId, stage: 'train', priority: 10, checkpointable: true });

      const high = await w.tandem.launch(
        // walltime 1m: the low run's re-placement waits for the high job's estimated end.
        spec({ name: 'high', priority: 500, stages: { preprocess: { runtime: 'local', samples: 200 }, train: { runtime: 'auto', steps: 20, checkpointEvery: 10, stepDelayMs: 100, resources: { cpusPerTask: 4, memoryMB: 512, walltime: '1m' } }, deploy: { runtime: 'local' } } }),
        { id: highId },
      );
      const highResult = await high.result();
      expect(highResult).toMatchObject({ checkpoint: { step: 20 } });
      const highTimeline = await high.timeline();
      // The preemptor's placement named its victim and said so in its timeline.
      const highPlacement = highTimeline.find((e) => e.kind === 'placement' && e.stage === 'train')!;
      expect(highPlacement.message).toMatch(new RegExp(`^preempt job ${victim.id} of run ${lowId} \\(priority 10\\) to start on `));
      const preempted = highTimeline.filter((e) => e.kind === 'preemption');
      expect(preempted).toEqual([expect.objectContaining({ stage: 'train', jobId: victim.id, message: `preempted job ${victim.id} of run ${lowId} (priority 10) to start` })]);
      // The victim is stopped only once the preemptor's job is queued at Slurm: the room goes to it.
      const { client, close } = await temporalClient();
      try {
        const scheduled = ((await client.workflow.getHandle(highId).fetchHistory()).events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n) => n === 'submitJob' || n === 'cancelJob');
        // preprocess's submitJob (local), then train's, then the victim's cancel.
        expect(scheduled).toEqual(['submitJob', 'submitJob', 'cancelJob']);
      } finally {
        await close();
      }

      const lowResult = await low.result();
      expect(lowResult).toMatchObject({ checkpoint: { step: 200 } });
      const lowTimeline = await low.timeline();
      if (process.env.TANDEM_TEST_VERBOSE) console.log(JSON.stringify({ high: highTimeline, low: lowTimeline }, null, 1));
      const notices = lowTimeline.filter((e) => e.kind === 'preemption');
      expect(notices).toEqual([expect.objectContaining({ stage: 'train', jobId: victim.id, message: `job ${victim.id} preempted by run ${highId} (priority 500); it resumes from its checkpoint` })]);
      const retry = lowTimeline.find((e) => e.kind === 'retry-scheduled' && e.stage === 'train')!;
      expect(retry).toMatchObject({ state: 'PREEMPTED', message: `preempted by run ${highId}; resubmitting, the job resumes from its latest checkpoint` });
      // The preemption is nobody's failure: no failure-counted retry, and the job was submitted again.
      expect(lowTimeline.filter((e: TimelineEntry) => e.kind === 'retry-scheduled' && e.state !== 'PREEMPTED')).toEqual([]);
      const lowSubmits = lowTimeline.filter((e) => e.kind === 'job-submitted' && e.stage === 'train');
      expect(lowSubmits).toHaveLength(2);

      // The second training resumed from a checkpoint of the first: in its final progress and its lineage log.
      const status = await low.status();
      expect(status.stages.train.progress).toMatchObject({ step: 200 });
      expect(status.stages.train.progress!.resumedFromStep).toBeGreaterThanOrEqual(20);
      const lineage = readFileSync(join(runDirs(home, lowId).checkpoints, 'lineage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { resumedFromStep: number });
      expect(lineage.map((s) => s.resumedFromStep > 0)).toEqual([false, true]);

      // At Slurm: the victim was cancelled, its replacement and the preemptor completed, and the job
      // Tandem did not submit still runs and was never anyone's victim.
      const jobs = await squeue();
      expect(jobs.find((j) => j.id === victim.id)!.state).toBe('CANCELLED');
      const [replacement] = ofRun(jobs, lowId).filter((j) => j.id !== victim.id);
      expect(replacement!.state).toBe('COMPLETED');
      const [preemptor] = ofRun(jobs, highId);
      expect(preemptor!.state).toBe('COMPLETED');
      // Queued ahead of the victim's resubmission, it started first.
      expect(Number(preemptor!.id)).toBeLessThan(Number(replacement!.id));
      expect(Number(preemptor!.start)).toBeLessThanOrEqual(Number(replacement!.start));
      expect(jobs.find((j) => j.id === foreignId)!.state).toBe('RUNNING');
      for (const e of [...highTimeline, ...lowTimeline]) expect(e.jobId).not.toBe(foreignId);
    } finally {
      await w.stop();
      await cluster.cli('scancel', [foreignId]).catch(() => undefined);
      const serving = new LocalServingBackend(home);
      for (const d of serving.list()) await serving.undeploy(d.name);
    }
  }, 240_000);
});

describe('a gang job starts on all its nodes or not at all (a scripted four-node Slurm site)', () => {
  const node = (name: string, allocCpus: number): SlurmNode => ({ name, cpus: 8, memoryMB: 16_000, allocCpus, allocMemoryMB: allocCpus ? 1024 : 0, gpus: 0, allocGpus: 0, partitions: ['normal'], state: [allocCpus ? 'allocated' : 'idle'], features: [] });
  const tandemJob = (jobId: string, on: string, run: string, priority: number): SiteJob => ({ jobId, name: `tandem-${run}-train-1`, state: 'RUNNING', comment: encodeJobLabels({ run, stage: 'train', priority, checkpointable: true }), nodes: on, nodeCount: 1, tres: 'cpu=8,mem=1G,node=1', startTime: Date.now() / 1000 - 60, timeLimitMinutes: 60 });
  const foreignJob = (jobId: string, on: string): SiteJob => ({ jobId, name: 'someone-elses-sim', state: 'RUNNING', comment: 'tandem;run=forged', nodes: on, nodeCount: 1, tres: 'cpu=8,mem=1G,node=1', startTime: Date.now() / 1000 - 60, timeLimitMinutes: 60 });
  const site = (nodes: SlurmNode[], jobs: SiteJob[]): InventorySource => ({ name: 'scripted-slurm', gather: async () => slurmInventory('gang', 'gang', nodes, jobs) });
  /** Three nodes of 8 CPUs each, one rank per node: a gang of three. */
  const gang = { id: 'tandem-gang-train-1', type: 'hpc-mpi' as const, tenant: 't', qos: 'silver' as const, priority: 500, submit: Date.now() / 1000, count: 3, maxPerNode: 1, per: { cpus: 8, gpus: 0, memoryMB: 1024 }, walltime: 600, checkpointable: true };

  test('two nodes free, the others busy with work nobody may preempt: it waits, it does not start on two', async () => {
    const { placeJob } = createPlacementActivities([site([node('n1', 0), node('n2', 0), node('n3', 8), node('n4', 8)], [foreignJob('71', 'n3'), foreignJob('72', 'n4')])]);
    const r = await placeJob({ job: gang, run: 'gang' });
    expect(r.decision.kind).toBe('reserve');
    expect(r.victims).toBeUndefined();
  });

  test('two nodes free, a lower-priority Tandem job on a third: that one job is preempted and the gang starts on three nodes', async () => {
    const { placeJob } = createPlacementActivities([site([node('n1', 0), node('n2', 0), node('n3', 8), node('n4', 8)], [tandemJob('81', 'n3', 'low', 10), foreignJob('72', 'n4')])]);
    const r = await placeJob({ job: gang, run: 'gang' });
    expect(r.decision).toMatchObject({ kind: 'preempt', victims: ['tandem-low-train-1'] });
    expect(r.decision.kind === 'preempt' && r.decision.placement.nodes.map((n) => n.node).sort()).toEqual(['n1', 'n2', 'n3']);
    expect(r.victims!.map((v) => v.ref.jobId)).toEqual(['81']);
  });

  test('one node free and one preemptible job: not enough even with it gone, so nothing is preempted', async () => {
    const { placeJob } = createPlacementActivities([site([node('n1', 0), node('n2', 8), node('n3', 8), node('n4', 8)], [tandemJob('81', 'n2', 'low', 10), foreignJob('72', 'n3'), foreignJob('73', 'n4')])]);
    const r = await placeJob({ job: gang, run: 'gang' });
    expect(r.decision.kind).toBe('reserve');
    expect(r.victims).toBeUndefined();
  });
});
