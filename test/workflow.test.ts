// hybridPipeline on the real Temporal dev server, with scripted activities.
import { WorkflowFailedError } from '@temporalio/client';
import { fakeActivities } from './fake-activities.js';
import { jobNameOf, spec, startWorker, uniqueQueue, waitFor } from './helpers.js';

describe('hybridPipeline (real server, mocked activities)', () => {
  test('happy path runs the four stages in order and reports status and timeline', async () => {
    const fake = fakeActivities();
    const w = await startWorker({ taskQueue: uniqueQueue('wf-happy'), activities: fake.acts });
    try {
      const h = await w.tandem.launch(spec(), { id: 'happy-1' });
      const result = await h.result();
      expect(result).toMatchObject({ pipeline: 'test', model: 'test', checkpoint: { step: 10 }, completion: 'positive (p=0.9)', trainingAttempts: 1 });
      const [pre, train] = [await jobNameOf(h.workflow, 'preprocess', 1), await jobNameOf(h.workflow, 'train', 1)];
      expect(pre).toMatch(/^tandem-happy-1-[0-9a-z]{13}-preprocess-1$/);
      expect(fake.calls).toEqual([
        `placeJob:${pre}`,
        `submitJob:${pre}`,
        `awaitJob:${pre}`,
        `placeJob:${train}`,
        `submitJob:${train}`,
        `awaitJob:${train}`,
        'catalogCheckpoint',
        'deployModel',
        'awaitReadiness',
      ]);
      const status = await h.status();
      expect(status.phase).toBe('completed');
      expect(Object.values(status.stages).map((s) => s.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
      const kinds = (await h.timeline()).map((e) => e.kind);
      expect(kinds[0]).toBe('pipeline-started');
      expect(kinds.at(-1)).toBe('pipeline-completed');
    } finally {
      await w.stop();
    }
  });

  test('a failure at deploy runs the compensations in reverse order and fails naming the stage', async () => {
    const fake = fakeActivities({ failGate: true });
    const w = await startWorker({ taskQueue: uniqueQueue('wf-deployfail'), activities: fake.acts });
    try {
      const h = await w.tandem.launch(spec(), { id: 'deployfail-1' });
      const err = await h.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(String((err as WorkflowFailedError).cause?.message)).toMatch(/stage deploy failed: .*failed gate "models"/);
      // Undo newest first: the deployment, then the catalog entry of the checkpoint it served.
      expect(fake.calls.slice(fake.calls.indexOf('awaitReadiness') + 1)).toEqual(['undeployModel', 'withdrawCheckpoint']);
      const status = await h.status();
      expect(status.phase).toBe('failed');
      expect(status.stages.deploy.status).toBe('failed');
      const comp = (await h.timeline()).filter((e) => e.kind === 'compensation').map((e) => e.message);
      expect(comp).toEqual([expect.stringMatching(/^tear down deployment/), expect.stringMatching(/^withdraw checkpoint step 10/)]);
    } finally {
      await w.stop();
    }
  });

  test('cancellation during training cancels the training job and closes as cancelled', async () => {
    const fake = fakeActivities({ blockOn: 'train' });
    const w = await startWorker({ taskQueue: uniqueQueue('wf-cancel'), activities: fake.acts });
    try {
      const h = await w.tandem.launch(spec(), { id: 'cancel-1', tuning: { heartbeatTimeoutMs: 2000 } });
      await fake.blocked;
      await h.cancel();
      const err = await h.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect((err as WorkflowFailedError).cause?.name).toBe('CancelledFailure');
      expect(fake.calls).toContain(`cancelJob:${await jobNameOf(h.workflow, 'train', 1)}`);
      expect(fake.calls).not.toContain('deployModel');
      const status = await h.status();
      expect(status.phase).toBe('cancelled');
      expect(status.stages.train.status).toBe('cancelled');
    } finally {
      await w.stop();
    }
  });

  test('a failed job is retried as a new job with the next deterministic name', async () => {
    const fake = fakeActivities({ jobStates: { train: ['FAILED', 'COMPLETED'] } });
    const w = await startWorker({ taskQueue: uniqueQueue('wf-retry'), activities: fake.acts });
    try {
      const h = await w.tandem.launch(spec(), { id: 'retry-1' });
      const result = await h.result();
      expect(result.trainingAttempts).toBe(2);
      expect(fake.calls.filter((c) => c.startsWith('submitJob:'))).toEqual([
        `submitJob:${await jobNameOf(h.workflow, 'preprocess', 1)}`,
        `submitJob:${await jobNameOf(h.workflow, 'train', 1)}`,
        `submitJob:${await jobNameOf(h.workflow, 'train', 2)}`,
      ]);
      const retry = (await h.timeline()).find((e) => e.kind === 'retry-scheduled');
      expect(retry?.message).toMatch(/job failure; attempt 2\/3/);
    } finally {
      await w.stop();
    }
  });

  test('the stage retry override bounds attempts; the error carries the job output tail', async () => {
    const fake = fakeActivities({ jobStates: { preprocess: ['NODE_FAIL', 'OUT_OF_MEMORY'] } });
    const w = await startWorker({ taskQueue: uniqueQueue('wf-giveup'), activities: fake.acts });
    try {
      const h = await w.tandem.launch(spec({ stages: { preprocess: { retry: { maxAttempts: 2, initialInterval: '50ms' } } } }), { id: 'giveup-1' });
      const err = (await h.result().catch((e: unknown) => e)) as WorkflowFailedError;
      expect(err.cause?.message).toContain(`stage preprocess failed: preprocess job ${await jobNameOf(h.workflow, 'preprocess', 2)} ended OUT_OF_MEMORY`);
      expect(err.cause?.message).toMatch(/Traceback: scripted failure/);
      const tl = await h.timeline();
      expect(tl.find((e) => e.kind === 'retry-scheduled')?.message).toMatch(/^infrastructure failure/);
      expect(fake.calls.filter((c) => c.startsWith('submitJob:') && c.endsWith('-train-1'))).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  test('placement rejecting a job fails its stage before anything is submitted', async () => {
    const fake = fakeActivities({ rejectPlacement: 'train' });
    const w = await startWorker({ taskQueue: uniqueQueue('wf-reject'), activities: fake.acts });
    try {
      const h = await w.tandem.launch(spec(), { id: 'reject-1' });
      const err = (await h.result().catch((e: unknown) => e)) as WorkflowFailedError;
      expect(err.cause?.message).toMatch(/stage train failed: no configured site can run the train stage: needs 8 GPUs per node; the largest node has 0/);
      expect(fake.calls.some((c) => c.startsWith('submitJob:') && c.includes('-train-'))).toBe(false);
      const placement = (await h.timeline()).filter((e) => e.kind === 'placement').map((e) => e.message);
      expect(placement).toEqual([expect.stringMatching(/fits on local\/host\/local/), expect.stringMatching(/^needs 8 GPUs per node; the largest node has 0/)]);
    } finally {
      await w.stop();
    }
  });

  test('an invalid spec is rejected by the SDK before any workflow starts', async () => {
    const fake = fakeActivities();
    const w = await startWorker({ taskQueue: uniqueQueue('wf-invalid'), activities: fake.acts });
    try {
      await expect(w.tandem.launch({ name: 'Bad Name', qos: 'platinum' } as never, { id: 'invalid-1' })).rejects.toThrow(/name: must be lower-case[\s\S]*qos: Invalid option/);
      await expect(w.tandem.get('invalid-1')).rejects.toThrow(/no pipeline run with id "invalid-1"/);
      await waitFor('no calls', () => fake.calls.length === 0 || undefined, 500).catch(() => undefined);
      expect(fake.calls).toEqual([]);
    } finally {
      await w.stop();
    }
  });
});
