// Operators' verbs: list, show, replay, retry in place, resume, export — on the real dev server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { timelineSvg } from '../cli/timeline-svg.js';
import { Runs, RunError } from '../sdk/runs.js';
import { runDirs } from '../activities/run-store.js';
import { historyFromFile, replayHistory, explainDivergence } from '../workers/replay.js';
import { formatRunReport } from '../cli/runs.js';
import { fakeActivities } from './fake-activities.js';
import { jobNameOf, spec, startWorker, tempDir, uniqueQueue, waitFor, workflowBundle } from './helpers.js';

describe('tandem runs', () => {
  test('retry after a deploy failure re-runs from just before deploy; training ran once', async () => {
    const fake = fakeActivities({ failGate: 1 });
    const w = await startWorker({ taskQueue: uniqueQueue('runs-retry'), activities: fake.acts });
    try {
      const h = await w.tandem.launch(spec({ tenant: 'ops-a' }), { id: 'runs-retry-1' });
      await expect(h.result()).rejects.toThrow();
      const train1 = await jobNameOf(h.workflow, 'train', 1);
      const runs = new Runs(w.tandem);
      const before = await runs.show('runs-retry-1');
      expect(before.stages.map((s) => [s.name, s.status])).toEqual([['preprocess', 'completed'], ['train', 'completed'], ['checkpoint', 'compensated'], ['deploy', 'failed']]);
      expect(before.activities.filter((a) => a.compensation).map((a) => a.type)).toEqual(['undeployModel', 'withdrawCheckpoint']);

      const res = await runs.retry('runs-retry-1');
      // The saga withdrew the checkpoint from the catalog, so cataloguing is redone; training is not.
      expect(res).toMatchObject({ requested: 'deploy', from: 'checkpoint' });
      const result = await w.tandem.client.workflow.getHandle('runs-retry-1').result();
      expect(result).toMatchObject({ completion: 'positive (p=0.9)' });
      expect(fake.calls.filter((c) => c.startsWith('submitJob:') && c.includes('-train-'))).toEqual([`submitJob:${train1}`]);
      expect(fake.calls.filter((c) => c === 'awaitReadiness')).toHaveLength(2);
      const after = await runs.show('runs-retry-1');
      expect(after.runId).toBe(res.runId);
      expect(after.status).toBe('Completed');

      // Visibility: the failed first run and the completed retry, filtered by tenant and status.
      const listed = await waitFor('visibility', async () => {
        const l = await runs.list({ tenant: 'ops-a', since: '1h' });
        return l.length >= 2 ? l : undefined;
      });
      expect(listed.map((r) => r.status).sort()).toEqual(['COMPLETED', 'FAILED']);
      const failed = await runs.list({ tenant: 'ops-a', status: 'failed' });
      expect(failed).toEqual([expect.objectContaining({ id: 'runs-retry-1', stage: 'deploy', tenant: 'ops-a', type: 'hybridPipeline' })]);
      expect(await runs.list({ tenant: 'nobody' })).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  test('retry --node re-runs from the chosen stage; bad requests get clear errors', async () => {
    const fake = fakeActivities();
    const w = await startWorker({ taskQueue: uniqueQueue('runs-node'), activities: fake.acts });
    const runs = new Runs(w.tandem);
    try {
      const h = await w.tandem.launch(spec(), { id: 'runs-node-1' });
      await h.result();
      const first = [await jobNameOf(h.workflow, 'preprocess', 1), await jobNameOf(h.workflow, 'train', 1)];
      await expect(runs.retry('runs-node-1')).rejects.toThrow(/completed successfully; nothing failed to retry \(use --node/);
      await expect(runs.retry('runs-node-1', { node: 'training' })).rejects.toThrow(/--node must be one of preprocess, train, checkpoint, deploy/);
      await expect(runs.retry('no-such-run')).rejects.toThrow(new RunError('no run with id "no-such-run" in namespace default (see `tandem runs list`)'));
      await expect(runs.resume('runs-node-1')).rejects.toThrow(/completed successfully; there is nothing to resume/);
      const res = await runs.retry('runs-node-1', { node: 'train' });
      expect(res.from).toBe('train');
      await w.tandem.client.workflow.getHandle('runs-node-1').result();
      // The reset run is a new lineage: its train job has a new name instead of adopting the first one.
      const retried = await jobNameOf(h.workflow, 'train', 1);
      expect(retried).not.toBe(first[1]);
      expect(fake.calls.filter((c) => c.startsWith('submitJob:'))).toEqual([...first, retried].map((n) => `submitJob:${n}`));

      const blocked = fakeActivities({ blockOn: 'train' });
      const w2 = await startWorker({ taskQueue: uniqueQueue('runs-running'), activities: blocked.acts });
      try {
        const h2 = await w2.tandem.launch(spec(), { id: 'runs-running-1' });
        await blocked.blocked;
        await expect(runs.retry('runs-running-1')).rejects.toThrow(/is still running; retry applies to closed runs/);
        await h2.cancel();
        await h2.result().catch(() => undefined);
      } finally {
        await w2.stop();
      }
    } finally {
      await w.stop();
    }
  });

  test('resume after a training failure reuses preprocessing and restores training from its checkpoint', async () => {
    const home = tempDir('runs-resume');
    const w = await startWorker({ taskQueue: uniqueQueue('runs-resume'), home });
    const runs = new Runs(w.tandem);
    try {
      const failing = spec({ retry: { maxAttempts: 1 }, stages: { train: { steps: 60, checkpointEvery: 10, env: { TANDEM_FAIL_AT_STEP: '35' } }, deploy: { readinessTimeout: '30s' } } });
      const h = await w.tandem.launch(failing, { id: 'runs-resume-1', tuning: { pollMaxMs: 300 } });
      await expect(h.result()).rejects.toThrow();
      const train1 = await jobNameOf(h.workflow, 'train', 1);
      const shown = await runs.show('runs-resume-1');
      expect(shown.stages[1]).toMatchObject({ name: 'train', status: 'failed', jobs: [expect.objectContaining({ state: 'FAILED' })] });
      expect(formatRunReport(shown)).toMatch(new RegExp(`train\\s+failed\\s+1\\s+local:${train1}=FAILED`));
      // The same report as a picture (`runs show --svg`): a bar per activity of the real run.
      expect(timelineSvg(shown).match(/data-event="\d+"/g)!.length).toBe(shown.activities.filter((a) => a.scheduledAt).length);

      const fixed = { ...failing, stages: { ...failing.stages, train: { ...failing.stages.train, env: {} } } };
      // Another tenant may not resume it (its data and checkpoints), neither through `runs resume`
      // nor by handing the SDK its run key; nothing starts.
      await expect(runs.resume('runs-resume-1', { spec: { ...fixed, tenant: 'intruder' }, newId: 'runs-resume-x' })).rejects.toThrow(/belongs to tenant "default"/);
      await expect(w.tandem.launch({ ...fixed, tenant: 'intruder' }, { id: 'runs-resume-y', resume: { from: 'runs-resume-1', runKey: 'runs-resume-1', reuse: ['preprocess'] } })).rejects.toThrow(/run runs-resume-1 belongs to tenant default, not intruder/);
      const resumed = await runs.resume('runs-resume-1', { spec: fixed, newId: 'runs-resume-2' });
      const result = await resumed.result();
      expect(result.checkpoint.step).toBe(60);
      const lineage = readFileSync(join(runDirs(home, 'runs-resume-1').checkpoints, 'lineage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { job: string; resumedFromStep: number });
      expect(lineage).toEqual([
        expect.objectContaining({ job: train1, resumedFromStep: 0 }),
        expect.objectContaining({ job: await jobNameOf(resumed.workflow, 'train', 1), resumedFromStep: 30 }),
      ]);
      const report = await runs.show('runs-resume-2');
      expect(report.input?.resume).toEqual({ from: 'runs-resume-1', runKey: 'runs-resume-1', reuse: ['preprocess'] });
      expect(report.stages.map((s) => s.status)).toEqual(['reused', 'completed', 'completed', 'completed']);
      expect(report.activities.some((a) => a.type === 'submitJob' && a.stage === 'preprocess')).toBe(false);
      expect((await resumed.status()).resumedFrom).toBe('runs-resume-1');
    } finally {
      const { LocalServingBackend } = await import('../backends/local-serving.js');
      for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
      await w.stop();
    }
  });

  test('replay verdicts: an exported run replays; a changed workflow diverges, explained in plain words', async () => {
    const fake = fakeActivities();
    const w = await startWorker({ taskQueue: uniqueQueue('runs-replay'), activities: fake.acts });
    let exported: string;
    try {
      const h = await w.tandem.launch(spec(), { id: 'runs-replay-1' });
      await h.result();
      exported = await new Runs(w.tandem).export('runs-replay-1');
    } finally {
      // Replay in a process with no live worker for the same bundle, as `tandem runs replay` does.
      await w.stop();
    }
    {
      const history = historyFromFile(JSON.parse(exported));
      expect(await replayHistory(history, { workflowBundle: await workflowBundle() })).toEqual({ deterministic: true, workflowType: 'hybridPipeline', events: history.events!.length });
      const changed = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./fixtures/changed-pipeline.ts', import.meta.url)), logger: new DefaultLogger('ERROR') });
      const verdict = await replayHistory(history, { workflowBundle: changed });
      expect(verdict).toMatchObject({ deterministic: false, explanation: 'the recorded run took the patched("tandem-lean-history") path here, but the current code does not call patched("tandem-lean-history") at this point' });
    }
  });

  test('divergence messages are explained', () => {
    expect(explainDivergence("[TMPRL1100] Nondeterminism error: Activity type of scheduled event 'submitJob' does not match activity type of activity command 'withdrawCheckpoint'\", source: \"\"")).toEqual({ explanation: 'the recorded run scheduled activity "submitJob" at this point, but the current code schedules "withdrawCheckpoint" instead' });
    expect(explainDivergence('[TMPRL1100] Nondeterminism error: No command scheduled for event HistoryEvent(id: 12, ActivityTaskScheduled)')).toEqual({ explanation: 'the recorded run has event 12 (ActivityTaskScheduled) that the current code no longer produces', eventId: 12 });
  });
});
