// Structured JSON logs on a real worker (issue [observe] item 3): a `tandem worker` process
// (workers/main.ts) with TANDEM_LOG_FORMAT=json at DEBUG, configured with canary secrets (a slurmrestd
// token and a FirecREST client secret in its environment, which the logger must redact wherever they
// appear). One pipeline that completes, and one whose preprocess job prints the canary to stderr and
// fails, so the canary reaches the worker's failure reports. Every line must be one JSON object led by
// time, level and msg; the SDK's, the workflows' and the activities' lines carry the run's workflow
// id and run id, and the activities' lines the stage, site and attempt; the canary appears nowhere.
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { TandemClient } from '../sdk/client.js';
import { address, spec, tempDir, uniqueQueue } from './helpers.js';
import { startWorkerProcess, type WorkerProcess } from './observe/worker-process.js';

type Line = Record<string, unknown> & { time: string; level: string; msg: string };

describe('JSON logs of a real worker', () => {
  const canary = `log-canary-${randomBytes(6).toString('hex')}`;
  let worker: WorkerProcess | undefined;
  afterAll(() => worker?.stop());

  test('every line is JSON with the run, stage, site and attempt; secrets never', async () => {
    const taskQueue = uniqueQueue('observe-log');
    worker = await startWorkerProcess({
      TANDEM_TASK_QUEUE: taskQueue,
      TANDEM_HOME: tempDir('observe-log'),
      TANDEM_LOG_FORMAT: 'json',
      TANDEM_LOG_LEVEL: 'debug',
      TANDEM_SLURMRESTD_TOKEN: `${canary}-jwt`,
      TANDEM_FIRECREST_CLIENT_SECRET: `${canary}-fc`,
    });
    const tandem = await TandemClient.connect({ address: address(), taskQueue });
    let ok: { id: string; runId: string };
    let failed: { id: string; runId: string };
    try {
      const h = await tandem.launch(spec({ name: 'logged', stages: { train: { steps: 20 } } }));
      await h.result();
      ok = { id: h.id, runId: (await h.workflow.describe()).runId };
      // The job has the canary only because the spec gives it (a job never sees the worker's secrets).
      const leaking = spec({ name: 'leaking', retry: { initialInterval: '100ms', maxAttempts: 1 }, stages: { preprocess: { runtime: 'local', command: ['sh', '-c', 'echo "token is $LEAK" >&2; exit 3'], env: { LEAK: `${canary}-jwt` } } } });
      const f = await tandem.launch(leaking);
      await expect(f.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      failed = { id: f.id, runId: (await f.workflow.describe()).runId };
    } finally {
      await tandem.close();
    }
    const stopped = worker;
    expect(await stopped.stop()).toBe(0);
    worker = undefined;
    const text = stopped.stderr();

    const lines = text.split('\n').filter((l) => l.trim() !== '');
    const parsed: Line[] = lines.map((l) => {
      try {
        return JSON.parse(l) as Line;
      } catch {
        throw new Error(`not a JSON log line: ${l}`);
      }
    });
    for (const l of parsed) {
      expect(Object.keys(l).slice(0, 3)).toEqual(['time', 'level', 'msg']);
      expect(new Date(l.time).toISOString()).toBe(l.time);
      expect(['trace', 'debug', 'info', 'warn', 'error']).toContain(l.level);
    }
    const ofRun = (r: { id: string; runId: string }) => parsed.filter((l) => l.workflowId === r.id);
    const mine = ofRun(ok!);
    expect(mine.length).toBeGreaterThan(5);
    for (const l of mine) expect(l.runId).toBe(ok!.runId);
    // The SDK's activity lines, through the activity interceptor (observe/interceptor.ts): stage, site
    // (placement chose the local machine) and attempt lead the rest. The interceptor learns them from
    // the input, so from the activity's execution on: "Activity started" precedes it.
    const completed = (type: string) => mine.filter((l) => l.activityType === type && l.msg === 'Activity completed');
    const submits = completed('submitJob');
    expect(submits).toHaveLength(2);
    expect(completed('awaitJob').map((l) => l.stage).sort()).toEqual(['preprocess', 'train']);
    expect(new Set(submits.map((l) => l.stage))).toEqual(new Set(['preprocess', 'train']));
    for (const l of submits) {
      expect(l).toMatchObject({ site: 'local', attempt: 1, jobAttempt: 1 });
      expect(Object.keys(l).slice(0, 8)).toEqual(['time', 'level', 'msg', 'workflowId', 'runId', 'stage', 'site', 'attempt']);
    }
    // The workflow's own lines (Temporal's logger sink) carry the run too.
    expect(mine.some((l) => l.msg === 'Workflow completed' && l.workflowType === 'hybridPipeline')).toBe(true);

    // The failed run's report reached the log, its canary replaced; the task token is never logged.
    const theirs = ofRun(failed!);
    const report = theirs.find((l) => l.msg === 'Workflow failed');
    expect(report).toMatchObject({ level: 'warn', runId: failed!.runId, error: { message: expect.stringContaining('token is [redacted]') } });
    expect(text).not.toContain(canary);
    expect(parsed.some((l) => 'taskToken' in l)).toBe(false);
  }, 180_000);
});
