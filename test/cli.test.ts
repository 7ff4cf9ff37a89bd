// The `tandem` CLI as users run it: a separate process, exit codes, short errors.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeActivities } from './fake-activities.js';
import { address, startWorker, tempDir, uniqueQueue } from './helpers.js';

// Asynchronous on purpose: a synchronous spawn would starve the in-process test worker.
function node(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), ...env }, timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}
const tandem = (args: string[], env: Record<string, string> = {}) => node(['bin/tandem.js', ...args], env);

describe('tandem CLI', () => {
  test('validate accepts the demo spec and rejects a bad one naming field and line (exit 2)', async () => {
    expect(await tandem(['validate', 'templates/examples/demo-pipeline.yaml'])).toMatchObject({ code: 0, out: expect.stringMatching(/valid pipeline "demo"/) });
    const bad = join(tempDir('cli'), 'bad.yaml');
    writeFileSync(bad, 'name: demo\nstages:\n  train:\n    steps: -1\n');
    const r = await tandem(['validate', bad]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/stages\.train\.steps \(line 4\): Too small/);
    expect((await tandem(['validate', '/nonexistent.yaml'])).err).toMatch(/cannot read spec \/nonexistent\.yaml: no such file/);
  });

  test('validate reads a spec from a pipe once (it used to read it twice: the second read was empty)', async () => {
    const piped = await new Promise<{ code: number; out: string; err: string }>((resolve) =>
      execFile('bash', ['-c', `"$0" bin/tandem.js validate <(cat templates/examples/demo-pipeline.yaml)`, process.execPath], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 60_000 }, (error, out, err) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err }),
      ),
    );
    expect(piped).toMatchObject({ code: 0, out: expect.stringMatching(/^\/dev\/fd\/\d+: valid pipeline "demo"/) });
  });

  test('run --json follows a pipeline to the end; status and status --timeline read it back', async () => {
    const queue = uniqueQueue('cli');
    const w = await startWorker({ taskQueue: queue, activities: fakeActivities().acts });
    try {
      const spec = join(tempDir('cli'), 'p.json');
      writeFileSync(spec, JSON.stringify({ name: 'cli-run', retry: { initialInterval: '100ms' } }));
      const run = await tandem(['run', spec, '--json', '--id', 'cli-run-1', '--task-queue', queue]);
      expect(run).toMatchObject({ code: 0, err: '' });
      const events = run.out.trim().split('\n').map((l) => JSON.parse(l) as { type: string; entry?: { kind: string } });
      expect(events[0]).toMatchObject({ type: 'timeline', entry: { kind: 'pipeline-started' } });
      expect(events.at(-1)).toMatchObject({ type: 'done', status: { phase: 'completed' } });
      const st = await tandem(['status', 'cli-run-1', '--json']);
      expect(st.code).toBe(0);
      expect(JSON.parse(st.out)).toMatchObject({ workflowId: 'cli-run-1', phase: 'completed', result: { completion: 'positive (p=0.9)' } });
      const tl = await tandem(['status', 'cli-run-1', '--timeline']);
      expect(tl.out.split('\n')[0]).toMatch(/pipeline\s+pipeline cli-run for tenant default/);
      expect((await tandem(['status', 'cli-run-1'])).out).toMatch(/^cli-run-1 {2}pipeline=cli-run tenant=default phase=completed/);
    } finally {
      await w.stop();
    }
  });

  test('unknown runs and an unreachable server give short errors that say what to do', async () => {
    expect(await tandem(['status', 'no-such-run'])).toMatchObject({ code: 2, err: 'tandem: no pipeline run with id "no-such-run" in namespace default\n' });
    const r = await tandem(['status', 'x'], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot reach the Temporal server at 127\.0\.0\.1:1 .*Start one with `npm run tandem -- dev`/);
  });
});
