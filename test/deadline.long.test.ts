// spec.deadline inside the workflow: at the deadline its timer cancels the running stage and the
// saga runs — the training job is cancelled for real (real local runtime), its quota hold released
// (real quota activities and ledger) — and the run fails with DeadlineExceeded, not the server's
// execution timeout (which is only a backstop after DEADLINE_COMPENSATION_MARGIN_MS).
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { fakeActivities } from './fake-activities.js';
import { LocalJobBackend } from '../backends/local-jobs.js';
import { isAlive } from '../backends/proc.js';
import { ledgerId } from '../activities/quota.js';
import { parseQuotasFile } from '../contract/quotas.js';
import { holdsQuery } from '../workflows/ledger.js';
import { tandemActivities } from '../workers/worker.js';
import { spec, startWorker, tempDir, temporalClient, uniqueQueue, waitFor, workflowBundle } from './helpers.js';

describe('deadline inside the workflow (real server, real local runtime)', () => {
  test('at the deadline the training job is cancelled, its quota hold released and the run fails with DeadlineExceeded', async () => {
    const home = tempDir('deadline');
    const taskQueue = uniqueQueue('deadline');
    const quotas = parseQuotasFile('quotas:\n  local:\n    default: {cpus: 8}\n');
    const w = await startWorker({ taskQueue, home, activities: tandemActivities({ home, quotas }) });
    const { client, close } = await temporalClient();
    try {
      const id = uniqueQueue('deadline-run');
      // Training would take well over an hour; the deadline comes long before. The local runtime is
      // named (not auto): placement would refuse a job whose walltime ends after the deadline.
      const deadline = new Date(Date.now() + 40_000).toISOString();
      const stages = { preprocess: { runtime: 'local' as const }, train: { runtime: 'local' as const, steps: 100_000, checkpointEvery: 1000, stepDelayMs: 50 } };
      const h = await w.tandem.launch(spec({ deadline, stages }), { id });
      const jobs = new LocalJobBackend(home);
      const job = await waitFor('the train job to be submitted', async () => (await h.status()).stages.train.jobId, 60_000);
      await waitFor('training to run', async () => ((await jobs.status(job).catch(() => undefined))?.progress?.step ?? 0) > 0 || undefined, 60_000);
      const pid = jobs.pid(job)!;
      expect(isAlive(pid, undefined)).toBe(true);
      const ledger = client.workflow.getHandle(ledgerId(taskQueue, 'local'));
      expect((await ledger.query(holdsQuery))[`${id}/train`]).toMatchObject({ tenant: 'default', cpus: 1, holder: id });

      const err = await h.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('DeadlineExceeded');
      const summary = `deadline ${deadline} reached during train; cancelled train job ${job}; released quota hold ${id}/train at local`;
      expect(cause!.message).toBe(summary);
      // The run failed by itself; the server did not time it out.
      expect((await h.workflow.describe()).status.name).toBe('FAILED');

      expect(isAlive(pid, undefined)).toBe(false);
      expect((await jobs.status(job)).state).toBe('CANCELLED');
      expect((await ledger.query(holdsQuery))[`${id}/train`]).toBeUndefined();

      const status = await h.status();
      expect(status).toMatchObject({ phase: 'failed', error: summary, stages: { train: { status: 'failed', error: `deadline ${deadline} reached during train` }, checkpoint: { status: 'pending' } } });
      const tl = await h.timeline();
      expect(tl.find((e) => e.kind === 'deadline')).toMatchObject({ stage: 'train', message: `deadline ${deadline} reached during train; stopping the run and compensating` });
      expect(tl.filter((e) => e.kind === 'compensation').map((e) => e.message)).toEqual([`cancel train job ${job}`, "release train's quota hold at local"]);
      expect(tl.at(-1)).toMatchObject({ kind: 'pipeline-failed', stage: 'train', message: summary });
    } finally {
      await close();
      await w.stop();
    }
  });

  test('both ways a run meets its deadline replay deterministically: stopped by it, and done before it (scripted jobs)', async () => {
    // The fakes (test/fake-activities.ts) stand in for the jobs: this checks the workflow's commands.
    const fake = fakeActivities({ blockOn: 'train', blockOnce: true });
    const w = await startWorker({ taskQueue: uniqueQueue('deadline-replay'), activities: fake.acts });
    try {
      const stopped = await w.tandem.launch(spec({ deadline: new Date(Date.now() + 5000).toISOString() }), { id: uniqueQueue('deadline-stopped') });
      const err = await stopped.result().catch((e: unknown) => e);
      expect(((err as WorkflowFailedError).cause as ApplicationFailure).type).toBe('DeadlineExceeded');
      expect(fake.calls.filter((c) => c.startsWith('cancelJob:'))).toHaveLength(1);
      const done = await w.tandem.launch(spec({ deadline: new Date(Date.now() + 3_600_000).toISOString() }), { id: uniqueQueue('deadline-done') });
      expect((await done.result()).trainingAttempts).toBe(1);
      for (const h of [stopped, done]) {
        await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, await h.workflow.fetchHistory(), h.workflow.workflowId)).resolves.toBeUndefined();
      }
    } finally {
      await w.stop();
    }
  });
});
