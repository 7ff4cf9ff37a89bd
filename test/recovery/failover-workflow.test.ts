// The failover path of hybridPipeline on the real dev server with scripted recovery activities: what
// the workflow decides on each kind of trouble (the real-site versions are in failover.long.test.ts).
import { WorkflowFailedError } from '@temporalio/client';
import { fakeActivities, type FakeScript } from '../fake-activities.js';
import { spec, startWorker, temporalClient, uniqueQueue } from '../helpers.js';
import type { FailoverTuning } from '../../contract/tuning.js';
import { parseQuotasFile } from '../../contract/quotas.js';

const slurmSpec = () => spec({ stages: { preprocess: { runtime: 'local' }, train: { runtime: 'slurm' }, deploy: { runtime: 'local' } } });

async function run(script: FakeScript, failover: FailoverTuning = {}) {
  const fake = fakeActivities(script);
  const w = await startWorker({ taskQueue: uniqueQueue('fo-wf'), activities: fake.acts });
  try {
    const h = await w.tandem.launch(slurmSpec(), { id: uniqueQueue('fo-wf'), tuning: { failover: { sites: ['zurich', 'lugano'], ...failover } } });
    const outcome = await h.result().then(
      (r) => ({ ok: true as const, r }),
      (e: unknown) => ({ ok: false as const, e: e as WorkflowFailedError }),
    );
    return { outcome, calls: fake.calls, timeline: await h.timeline() };
  } finally {
    await w.stop();
  }
}

const train = (calls: string[]) => calls.filter((c) => /^(chooseSite|submitAt|watchAt|fenceJob|fenceWhenReachable)/.test(c));

describe('failover decisions (real server, scripted sites)', () => {
  test('NODE_FAIL: the old job is fenced with its lease revoked before another site is chosen', async () => {
    const { outcome, calls, timeline } = await run({ jobStates: { train: ['NODE_FAIL', 'COMPLETED'] } });
    expect(outcome.ok).toBe(true);
    // Job ids count every job of the fake (preprocess is job 1).
    expect(train(calls)).toEqual(['chooseSite:', expect.stringMatching(/^submitAt:zurich:.*-train-1$/), 'watchAt:zurich:2', 'fenceJob:zurich:2:revoke', 'chooseSite:zurich', expect.stringMatching(/^submitAt:lugano:.*-train-2$/), 'watchAt:lugano:3']);
    expect(timeline.filter((e) => e.kind === 'fence').map((e) => e.message)).toEqual(['cancelled job 2 at zurich; lease revoked']);
    expect(timeline.filter((e) => e.kind === 'failover')).toHaveLength(1);
  });

  test('a job that stopped itself because its lease was not renewed is resubmitted at the same (answering) site, not failed over', async () => {
    const { outcome, calls, timeline } = await run({ trainWatch: ['self-fenced'] });
    expect(outcome.ok).toBe(true);
    expect(train(calls).filter((c) => c.startsWith('submitAt:'))).toEqual([expect.stringMatching(/^submitAt:zurich:.*-train-1$/), expect.stringMatching(/^submitAt:zurich:.*-train-2$/)]);
    expect(calls.filter((c) => c.startsWith('chooseSite:'))).toEqual(['chooseSite:']);
    expect(timeline.some((e) => e.kind === 'failover')).toBe(false);
    expect(timeline.find((e) => e.kind === 'fence')?.message).toMatch(/stopped itself: its lease was not renewed while zurich answered; resubmitting at zurich \(1\/3\)/);
  });

  test('an unreachable site whose cancel fails is fenced in the background once it answers', async () => {
    const { outcome, calls, timeline } = await run({ trainWatch: ['unreachable'], fenceFails: true });
    expect(outcome.ok).toBe(true);
    // Not revoked here: an unreachable site's lease simply expires (nobody renews it).
    expect(train(calls).slice(2, 4)).toEqual(['watchAt:zurich:2', 'fenceJob:zurich:2']);
    // The background fence and the search for another site start together.
    expect(train(calls).slice(4, 6).sort()).toEqual(['chooseSite:zurich', 'fenceWhenReachable:2']);
    expect(calls.filter((c) => c.startsWith('submitAt:lugano:'))).toHaveLength(1);
    expect(timeline.filter((e) => e.kind === 'fence').map((e) => e.message)).toEqual(expect.arrayContaining([expect.stringMatching(/did not answer \(scripted\); its lease stops the job/)]));
  });

  test('a quota hold follows the job: booked at zurich, moved to lugano on failover, released at the end', async () => {
    const quotas = parseQuotasFile('quotas:\n  "*":\n    default: {cpus: 4}\n');
    const { outcome, timeline } = await run({ jobStates: { train: ['NODE_FAIL', 'COMPLETED'] }, quotas });
    expect(outcome.ok).toBe(true);
    const holds = timeline.filter((e) => e.kind === 'quota' && e.stage === 'train').map((e) => e.message.replace(/ \(.*\)$/, ''));
    expect(holds).toEqual([
      "holding 1 CPU, 1024 MB of tenant default's quota at zurich",
      "released train's quota hold at zurich",
      "holding 1 CPU, 1024 MB of tenant default's quota at lugano",
      "released train's quota hold at lugano",
    ]);
  });

  test('failovers are bounded', async () => {
    const { outcome, calls } = await run({ jobStates: { train: ['NODE_FAIL', 'BOOT_FAIL', 'COMPLETED'] } }, { maxFailovers: 1 });
    expect(outcome.ok).toBe(false);
    expect(String(!outcome.ok && outcome.e.cause?.message)).toMatch(/stage train failed: train: job 3 ended BOOT_FAIL at lugano \(scripted\); gave up after 1 failover$/);
    expect(calls.filter((c) => c.startsWith('submitAt:'))).toHaveLength(2);
  });

  test('a lease that does not end inside the grace window is refused: by the SDK, and by the workflow before anything is submitted', async () => {
    const fake = fakeActivities();
    const w = await startWorker({ taskQueue: uniqueQueue('fo-lease'), activities: fake.acts });
    const { client, close } = await temporalClient();
    try {
      const failover = { sites: ['zurich', 'lugano'], graceMs: 8000, leaseTtlMs: 6000 };
      await expect(w.tandem.launch(slurmSpec(), { tuning: { failover } })).rejects.toThrow(/the failover lease \(6000 ms\) must end at least 3000 ms inside the grace window \(8000 ms\)/);
      // Straight through the client, past the SDK's check.
      const h = await client.workflow.start('hybridPipeline', { taskQueue: w.worker.options.taskQueue, workflowId: uniqueQueue('fo-lease'), args: [{ spec: slurmSpec(), tuning: { failover } }] });
      const err = await h.result().catch((e: unknown) => e as WorkflowFailedError);
      expect(String(err.cause?.message)).toMatch(/stage train failed: the failover lease \(6000 ms\)/);
      expect(fake.calls.some((c) => c.startsWith('submitAt:'))).toBe(false);
    } finally {
      await close();
      await w.stop();
    }
  });
});
