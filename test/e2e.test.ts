// The demo pipeline end to end on the embedded local runtime: real processes, real checkpoints, a
// real model server, on the real Temporal server.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { runDirs } from '../activities/run-store.js';
import { LocalJobBackend } from '../backends/local-jobs.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { isAlive } from '../backends/proc.js';
import { latestValidCheckpoint } from '../backends/checkpoints.js';
import { loadPipelineSpec } from '../sdk/client.js';
import { DEMO_SPEC } from '../cli/dev.js';
import { jobNameOf, spec, startWorker, tempDir, uniqueQueue, waitFor } from './helpers.js';

const tuning = { pollMaxMs: 500, heartbeatTimeoutMs: 5000 };

describe('local runtime end to end', () => {
  test('the demo pipeline trains, checkpoints, deploys and answers a completion', async () => {
    const home = tempDir('e2e');
    const w = await startWorker({ taskQueue: uniqueQueue('e2e-demo'), home });
    const demo = await loadPipelineSpec(DEMO_SPEC);
    demo.stages.train.stepDelayMs = 0;
    try {
      const h = await w.tandem.launch(demo, { id: 'e2e-demo', tuning });
      const events = [];
      for await (const ev of h.progress(100)) events.push(ev);
      const result = await h.result();
      expect(result).toMatchObject({ pipeline: 'demo', model: 'tandem/demo-charlm', checkpoint: { step: 2000 }, trainingAttempts: 1 });
      // The smoke completion is text the model generated: characters of its vocabulary, not empty.
      const vocab = new Set((JSON.parse(readFileSync(join(result.checkpoint.path, 'weights.json'), 'utf8')) as { config: { vocab: string[] } }).config.vocab);
      expect(result.completion.length).toBeGreaterThan(0);
      expect([...result.completion].every((ch) => vocab.has(ch))).toBe(true);
      expect(events.at(-1)).toMatchObject({ type: 'done', status: { phase: 'completed' } });

      // The served model is the catalogued checkpoint, and it answers outside the workflow too.
      const models = (await (await fetch(`${result.endpoint}/v1/models`)).json()) as { data: { id: string; root: string }[] };
      expect(models.data).toEqual([expect.objectContaining({ id: 'tandem/demo-charlm', root: result.checkpoint.path, max_model_len: expect.any(Number) })]);
      const complete = async () => (await (await fetch(`${result.endpoint}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'Mr. Darcy', max_tokens: 40, seed: 3 }) })).json()) as { choices: { text: string }[] };
      const [a, b] = [await complete(), await complete()];
      expect(a.choices[0]!.text).toHaveLength(40);
      expect(b.choices[0]!.text).toBe(a.choices[0]!.text); // same seed, same text
      const dirs = runDirs(home, 'e2e-demo');
      const { latest } = await latestValidCheckpoint(dirs.checkpoints);
      expect(latest?.step).toBe(2000);
      expect(JSON.parse(readFileSync(dirs.catalog, 'utf8'))).toEqual([expect.objectContaining({ step: 2000, path: latest!.path, removed: expect.any(Array) })]);
      // It really learned: held-out loss well below a uniform guess over the vocabulary (ln V nats).
      const m = latest!.manifest.metrics!;
      expect(m.validLoss).toBeLessThan(0.6 * Math.log(m.vocabSize!));
      expect(readFileSync(join(dirs.checkpoints, 'lineage.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    } finally {
      for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
      await w.stop();
    }
    // Real 2,000-step training, a real model server and a real completion: 28 s on a quiet machine,
    // more than jest's 120 s default on CI's loaded 2 cores (stop 38).
  }, 300_000);

  test('cancelling during training stops the training process and records the compensation', async () => {
    const home = tempDir('e2e');
    const w = await startWorker({ taskQueue: uniqueQueue('e2e-cancel'), home });
    try {
      const h = await w.tandem.launch(spec({ stages: { train: { steps: 2000, checkpointEvery: 50, stepDelayMs: 20 } } }), { id: 'e2e-cancel', tuning });
      const jobs = new LocalJobBackend(home);
      const job = await jobNameOf(h.workflow, 'train', 1);
      await waitFor('training to run', async () => ((await jobs.status(job).catch(() => undefined))?.progress?.step ?? 0) > 5 || undefined);
      const pid = jobs.pid(job)!;
      expect(isAlive(pid, undefined)).toBe(true);
      await h.cancel();
      await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      expect(isAlive(pid, undefined)).toBe(false);
      expect((await jobs.status(job)).state).toBe('CANCELLED');
      const status = await h.status();
      expect(status).toMatchObject({ phase: 'cancelled', stages: { train: { status: 'cancelled' }, deploy: { status: 'pending' } } });
      expect((await h.timeline()).filter((e) => e.kind === 'compensation').map((e) => e.message)).toEqual([`cancel train job ${job}`]);
    } finally {
      await w.stop();
    }
  });

  test('a deployment that never gets healthy fails its gate, is torn down, and the checkpoint is withdrawn', async () => {
    const home = tempDir('e2e');
    const w = await startWorker({ taskQueue: uniqueQueue('e2e-gate'), home });
    // A "server" that announces an endpoint nobody listens on, like a vLLM engine that never boots.
    const broken = ['/bin/sh', '-c', 'printf \'{"url":"http://127.0.0.1:9"}\' > "$TANDEM_ENDPOINT_FILE"; exec sleep 60'];
    try {
      const h = await w.tandem.launch(spec({ stages: { train: { steps: 20, checkpointEvery: 10 }, deploy: { command: broken, readinessTimeout: '2s' } } }), { id: 'e2e-gate', tuning });
      const err = (await h.result().catch((e: unknown) => e)) as WorkflowFailedError;
      expect(err.cause?.message).toMatch(/stage deploy failed: deployment .* not ready after 2s: failed gate "health"/);
      const serving = new LocalServingBackend(home);
      expect(serving.list()).toEqual([]); // torn down: no process, no state left
      expect(JSON.parse(readFileSync(runDirs(home, 'e2e-gate').catalog, 'utf8'))).toEqual([]);
      expect(existsSync(join(runDirs(home, 'e2e-gate').checkpoints, 'step-00000020'))).toBe(true); // the data itself is kept
    } finally {
      await w.stop();
    }
  });
});
