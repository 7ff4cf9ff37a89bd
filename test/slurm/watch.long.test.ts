// Watching a job at the time scale of a real queue, with DEFAULT tuning (heartbeat timeout 30 s, poll
// backoff up to 64 s, the default failover lease of 30 s): a real Slurm job held pending for 3 minutes,
// then training for about 2 minutes. The watch activity must see it through in its first attempt (no
// heartbeat timeout, no overlapping attempts) and the job must be submitted once. Two pipelines run at
// once on one real cluster: one watched by awaitJob, one under a failover lease watched by watchAt.
// Minutes long, so not part of `npm test`: `npm run test:long` (jest.config.js, .ci/run).
import { chmodSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { temporal } from '@temporalio/proto';
import { createActivities } from '../../activities/index.js';
import { createRecoveryActivities } from '../../activities/recovery.js';
import { LocalServingBackend } from '../../backends/local-serving.js';
import type { TimelineEntry } from '../../contract/status.js';
import type { PipelineHandle } from '../../sdk/client.js';
import { spec, startWorker, temporalClient, uniqueQueue, waitFor } from '../helpers.js';
import { startSite, type TestSite } from '../recovery/sites.js';

const HOLD_MS = 3 * 60_000;
const SITE = 'wlong';
// About 2 minutes of training on the partition that the test keeps closed until both jobs are held.
const trainSpec = () => spec({ stages: { preprocess: { runtime: 'local', samples: 200 }, train: { runtime: 'slurm', steps: 120, checkpointEvery: 40, stepDelayMs: 1000, resources: { partition: 'long' } }, deploy: { runtime: 'local' } } });

let site: TestSite;
let oldUmask: number;

beforeAll(async () => {
  oldUmask = process.umask(0); // jobs run as the cluster's unprivileged user (see test/slurm/pipeline.long.test.ts)
  site = await startSite(SITE);
}, 120_000);

afterAll(async () => {
  process.umask(oldUmask);
  await site?.cluster.down();
});

const scontrol = (...args: string[]) => site.cluster.cli('scontrol', args);
const squeue = async (...args: string[]) => (await site.cluster.cli('squeue', ['-h', ...args])).trim();

interface WatchFacts {
  events: number;
  /** One entry per scheduled activity of this type: the attempt its (last) start recorded, and why an earlier one failed. */
  attempts: { attempt: number; lastFailure?: string }[];
  timedOut: number;
}

/** What the workflow's history says about one activity type. */
async function watchFacts(workflowId: string, activity: string): Promise<WatchFacts> {
  const { client, close } = await temporalClient();
  try {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const events = (history.events ?? []) as temporal.api.history.v1.IHistoryEvent[];
    const ofType = new Set(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity).map((e) => String(e.eventId)));
    const attempts = events
      .filter((e) => e.activityTaskStartedEventAttributes && ofType.has(String(e.activityTaskStartedEventAttributes.scheduledEventId)))
      .map((e) => ({ attempt: e.activityTaskStartedEventAttributes!.attempt ?? 0, lastFailure: e.activityTaskStartedEventAttributes!.lastFailure?.message ?? undefined }));
    const timedOut = events.filter((e) => e.activityTaskTimedOutEventAttributes && ofType.has(String(e.activityTaskTimedOutEventAttributes.scheduledEventId))).length;
    return { events: events.length, attempts, timedOut };
  } finally {
    await close();
  }
}

const trainSubmits = (tl: TimelineEntry[]) => tl.filter((e) => e.stage === 'train' && (e.kind === 'job-submitted' || e.kind === 'job-adopted'));

test('a job queued for 3 minutes, then running for 2, is watched in one attempt with default tuning: awaitJob and watchAt under a lease', async () => {
  const home = mkdtempSync(join(site.cluster.workDir, 'home-'));
  chmodSync(home, 0o777); // the non-failover run directories live at home, which the job user must reach
  const activities = { ...createActivities({ home, backends: { slurm: site.backend } }), ...createRecoveryActivities({ home, sites: [site.site] }) };
  const w = await startWorker({ taskQueue: uniqueQueue('watch-long'), home, activities });
  try {
    // A closed partition queues jobs without starting them, so that the holds below cannot come too late.
    await scontrol('update', 'PartitionName=long', 'State=DOWN');
    const plain = await w.tandem.launch(trainSpec(), { id: uniqueQueue('long-await') });
    const leased = await w.tandem.launch(trainSpec(), { id: uniqueQueue('long-lease'), tuning: { failover: { sites: [SITE] } } });
    const jobOf = (h: PipelineHandle) => waitFor(`${h.id}'s training job to be submitted`, async () => trainSubmits(await h.timeline())[0]?.jobId, 120_000, 200);
    const jobs = [await jobOf(plain), await jobOf(leased)];
    for (const id of jobs) await scontrol('hold', id);
    await scontrol('update', 'PartitionName=long', 'State=UP');
    await new Promise((r) => setTimeout(r, HOLD_MS));
    // Still queued all along: held by the administrator.
    for (const id of jobs) expect(await squeue('-j', id, '-o', '%T %r')).toBe('PENDING JobHeldAdmin');
    for (const id of jobs) await scontrol('release', id);

    const [plainResult, leasedResult] = await Promise.all([plain.result(), leased.result()]);
    expect(plainResult).toMatchObject({ checkpoint: { step: 120 }, trainingAttempts: 1 });
    expect(leasedResult).toMatchObject({ checkpoint: { step: 120 }, trainingAttempts: 1 });

    // One job each, submitted once, never adopted or resubmitted (no lease lapse either: it would self-fence).
    for (const h of [plain, leased]) expect(trainSubmits(await h.timeline()).map((e) => e.kind)).toEqual(['job-submitted']);
    expect((await squeue('-p', 'long', '-t', 'all', '-o', '%A')).split('\n').sort()).toEqual([...jobs].sort());

    const awaitJob = await watchFacts(plain.id, 'awaitJob');
    const watchAt = await watchFacts(leased.id, 'watchAt');
    console.log(`[watch.long] awaitJob run ${plain.id}: ${awaitJob.events} history events, attempts ${JSON.stringify(awaitJob.attempts)}; watchAt run ${leased.id}: ${watchAt.events} history events, attempts ${JSON.stringify(watchAt.attempts)}`);
    // preprocess (local) and train are each watched by awaitJob; the leased run's train by watchAt.
    expect(awaitJob.attempts).toEqual([{ attempt: 1 }, { attempt: 1 }]);
    expect(awaitJob.timedOut).toBe(0);
    expect(watchAt.attempts).toEqual([{ attempt: 1 }]);
    expect(watchAt.timedOut).toBe(0);
  } finally {
    await scontrol('update', 'PartitionName=long', 'State=UP').catch(() => undefined);
    await w.stop();
    const serving = new LocalServingBackend(home);
    for (const d of serving.list()) await serving.undeploy(d.name);
  }
}, 20 * 60_000);
