// Run ownership on the worker (activities/run-owner.ts): a pipeline started directly with
// client.workflow.start (no SDK, so no resume check) that names another tenant's run key is refused
// by the worker before it touches that run's data or checkpoints; the owner's own resume still works.
import { readdirSync, readFileSync } from 'node:fs';
import { WorkflowFailedError } from '@temporalio/client';
import { runDirs } from '../activities/run-store.js';
import { spec, startWorker, tempDir, uniqueQueue } from './helpers.js';

const causes = (e: unknown): string => {
  const out: string[] = [];
  for (let c = e as { message?: string; cause?: unknown; type?: string } | undefined; c; c = c.cause as typeof c) out.push(`${c.type ?? ''} ${c.message ?? ''}`);
  return out.join(' <- ');
};

test("a direct start that resumes another tenant's run key is refused and leaves the victim's checkpoints as they were", async () => {
  const home = tempDir('run-owner');
  const w = await startWorker({ taskQueue: uniqueQueue('run-owner'), home });
  try {
    const victim = spec({ tenant: 'acme', stages: { train: { steps: 20, checkpointEvery: 10 } } });
    const h = await w.tandem.launch(victim, { id: 'owner-victim', tuning: { pollMaxMs: 300 } });
    await h.result();
    const dirs = runDirs(home, 'owner-victim');
    expect(JSON.parse(readFileSync(`${dirs.root}/owner.json`, 'utf8'))).toEqual({ tenant: 'acme', workflowId: 'owner-victim' });
    const before = readdirSync(dirs.checkpoints).sort();

    // Straight to the server, as any client of the namespace could: tenant mallory, acme's run key.
    const hostile = spec({ tenant: 'mallory', stages: { train: { steps: 30, checkpointEvery: 10 } } });
    // Retraining on its data, or reusing both stages to catalogue and serve its checkpoint: both refused.
    for (const reuse of [[], ['preprocess', 'train']]) {
      const started = await w.tandem.client.workflow.start('hybridPipeline', {
        taskQueue: w.tandem.taskQueue,
        workflowId: `owner-thief-${reuse.length}`,
        args: [{ spec: hostile, tuning: { pollMaxMs: 300 }, resume: { from: 'owner-victim', runKey: 'owner-victim', reuse } }],
      });
      const err = await started.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(causes(err)).toMatch(/TenantPolicyDenied .*run key "owner-victim" belongs to tenant "acme" \(run owner-victim\); a run of tenant "mallory" may not use its data or checkpoints/);
      expect(readdirSync(dirs.checkpoints).sort()).toEqual(before);
    }

    // The owner itself may resume its run key.
    const again = await w.tandem.launch(spec({ tenant: 'acme', stages: { train: { steps: 30, checkpointEvery: 10 } } }), { id: 'owner-resume', resume: { from: 'owner-victim', runKey: 'owner-victim', reuse: ['preprocess'] }, tuning: { pollMaxMs: 300 } });
    expect((await again.result()).checkpoint.step).toBe(30);
  } finally {
    await w.stop();
  }
}, 120_000);
