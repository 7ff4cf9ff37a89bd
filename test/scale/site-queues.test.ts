// A queue per site (tuning.siteQueues, workflows/pipeline/site-queues.ts) on the run's dev server, with
// scripted activities: which activity runs on which worker. The main worker and the site worker record
// their calls apart, so a call on the wrong queue shows up on the wrong list. The real thing (Postgres,
// mTLS, a real Slurm site, a worker SIGKILLed) is two-workers.scale.test.ts.
import type { temporal } from '@temporalio/proto';
import { WorkflowFailedError } from '@temporalio/client';
import { PATCHES } from '../../workflows/pipeline/patches.js';
import { createTandemWorker } from '../../workers/worker.js';
import { fakeActivities } from '../fake-activities.js';
import { address, jobNameOf, spec, startWorker, tempDir, uniqueQueue, workflowBundle } from '../helpers.js';

type Event = temporal.api.history.v1.IHistoryEvent;

/** A run's worker and a site worker, each with its own scripted activities. */
async function twoQueues(name: string, siteScript: Parameters<typeof fakeActivities>[0] = {}) {
  const main = fakeActivities();
  const site = fakeActivities(siteScript);
  const siteQueue = uniqueQueue(`${name}-site`);
  const w = await startWorker({ taskQueue: uniqueQueue(name), activities: main.acts });
  const s = await createTandemWorker({ address: address(), taskQueue: siteQueue, home: tempDir('site'), activities: site.acts, workflowBundle: await workflowBundle() });
  const running = s.worker.run();
  return {
    main,
    site,
    siteQueue,
    tandem: w.tandem,
    async stop() {
      await w.stop();
      s.worker.shutdown();
      await running;
      await s.connection.close();
    },
  };
}

const patchIds = (events: Event[]) =>
  events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch').map((e) => Buffer.from(e.markerRecordedEventAttributes!.details!['patch-data']!.payloads![0]!.data!).toString('utf8'));
/** The activity types of the local activities a history recorded (their markers). */
const localActivities = (events: Event[]) =>
  events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').map((e) => (JSON.parse(Buffer.from(e.markerRecordedEventAttributes!.details!.data!.payloads![0]!.data!).toString('utf8')) as { activity_type: string }).activity_type);
const hasSiteQueuePatch = (events: Event[]) => patchIds(events).some((d) => d.includes(PATCHES.siteQueues));

test('a stage pinned to a site runtime: its submit, watch and checkpoint run on the site queue; the rest on the run queue', async () => {
  const q = await twoQueues('sq-pinned');
  try {
    const h = await q.tandem.launch(spec({ stages: { preprocess: { runtime: 'local' }, train: { runtime: 'slurm' }, deploy: { runtime: 'local' } } }), { id: uniqueQueue('sq-pinned'), tuning: { siteQueues: { slurm: q.siteQueue } } });
    await h.result();
    const [pre, train] = [await jobNameOf(h.workflow, 'preprocess', 1), await jobNameOf(h.workflow, 'train', 1)];
    expect(q.site.calls).toEqual([`submitJob:${train}`, `awaitJob:${train}`, 'catalogCheckpoint']);
    expect(q.main.calls).toEqual([`submitJob:${pre}`, `awaitJob:${pre}`, 'deployModel', 'awaitReadiness']);
    const submitted = (await h.timeline()).filter((e) => e.kind === 'job-submitted' && (e.stage === 'preprocess' || e.stage === 'train')).map((e) => e.message);
    expect(submitted).toEqual([expect.not.stringContaining('site queue'), expect.stringContaining(`(site queue ${q.siteQueue})`)]);
    const events = ((await h.workflow.fetchHistory()).events ?? []) as Event[];
    // PATCHES.leanHistory's one marker covers PATCHES.siteQueues (LEAN_COVERS): no marker of its own.
    expect(hasSiteQueuePatch(events)).toBe(false);
    expect(patchIds(events).filter((d) => d.includes(PATCHES.leanHistory))).toHaveLength(1);
    // Quota admission asks the site's workers (they know which site runtime "slurm" means); not recorded by the fake.
    // On the run's own queue it is a local activity of the workflow's worker (PATCHES.leanHistory).
    const admits = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'admitQuota').map((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name);
    expect(admits).toEqual([q.siteQueue]);
    expect(localActivities(events).filter((t) => t === 'admitQuota')).toHaveLength(1);
  } finally {
    await q.stop();
  }
});

test('a stage placed by runtime auto routes by the site placement chose', async () => {
  const q = await twoQueues('sq-placed');
  try {
    // The fake placement puts every job on site "local".
    const h = await q.tandem.launch(spec(), { id: uniqueQueue('sq-placed'), tuning: { siteQueues: { local: q.siteQueue } } });
    await h.result();
    const [pre, train] = [await jobNameOf(h.workflow, 'preprocess', 1), await jobNameOf(h.workflow, 'train', 1)];
    expect(q.main.calls).toEqual([`placeJob:${pre}`, `placeJob:${train}`, 'deployModel', 'awaitReadiness']);
    expect(q.site.calls).toEqual([`submitJob:${pre}`, `awaitJob:${pre}`, `submitJob:${train}`, `awaitJob:${train}`, 'catalogCheckpoint']);
  } finally {
    await q.stop();
  }
});

test('cancelled mid-training, the undo cancels the job on the site queue', async () => {
  const q = await twoQueues('sq-cancel', { blockOn: 'train' });
  try {
    const h = await q.tandem.launch(spec({ stages: { train: { runtime: 'slurm' } } }), { id: uniqueQueue('sq-cancel'), tuning: { heartbeatTimeoutMs: 2000, siteQueues: { slurm: q.siteQueue } } });
    await q.site.blocked;
    await h.cancel();
    expect(await h.result().catch((e: unknown) => e)).toBeInstanceOf(WorkflowFailedError);
    const train = await jobNameOf(h.workflow, 'train', 1);
    expect(q.site.calls).toEqual([`submitJob:${train}`, `awaitJob:${train}`, `cancelJob:${train}`]);
    expect(q.main.calls.some((c) => c.startsWith('cancelJob'))).toBe(false);
  } finally {
    await q.stop();
  }
});

test('without site queues (or naming no site the run uses) nothing moves and no patch marker is recorded', async () => {
  const q = await twoQueues('sq-none');
  try {
    for (const tuning of [undefined, { siteQueues: { kubernetes: q.siteQueue } }]) {
      const h = await q.tandem.launch(spec({ stages: { train: { runtime: 'slurm' } } }), { id: uniqueQueue('sq-none'), tuning });
      await h.result();
      const events = ((await h.workflow.fetchHistory()).events ?? []) as Event[];
      const queues = new Set(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name));
      expect([...queues]).toEqual([(await h.workflow.describe()).taskQueue]);
      expect(hasSiteQueuePatch(events)).toBe(false);
    }
    expect(q.site.calls).toEqual([]);
  } finally {
    await q.stop();
  }
});
