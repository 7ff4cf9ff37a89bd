// `tandem runs replay --file` on malformed histories, as users run it (a separate process, exit codes):
// the history's shape is checked before the replayer starts (exit 2, naming what is wrong), an error the
// workflow code throws during the replay is a failed replay (exit 1), never "deterministic", and a
// replay that stalls is bounded in time. No Temporal server is involved: --file replays locally.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers.js';

function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    // Killed at the time limit: code -1, which no assertion below accepts.
    execFile(process.execPath, ['--import', 'tsx', ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 100_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out, err });
    });
  });
}
const tandem = (args: string[]) => run(['cli/main.ts', ...args]);

type Event = Record<string, unknown> & { eventId: string; eventType: string };
const recorded = (JSON.parse(readFileSync('test/histories/hybridPipeline-deadline.json', 'utf8')) as { events: Event[] }).events;
const dir = tempDir('replay-file');
const file = (name: string, value: unknown) => {
  const p = join(dir, name);
  writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value));
  return p;
};

describe('tandem runs replay --file', () => {
  test('malformed histories are refused before the replay, naming what is wrong (exit 2)', async () => {
    const swapped = recorded.map((e) => ({ ...e }));
    [swapped[3], swapped[6]] = [swapped[6]!, swapped[3]!];
    const cases: [string, unknown, RegExp][] = [
      ['array.json', [1, 2], /\(root\): a history must be an object with an "events" list/],
      ['no-events.json', { events: [] }, /events: is empty: there is nothing to replay/],
      ['out-of-order.json', { events: swapped }, /events\[3\]\.eventId: is "7", expected "4": events must be numbered from 1 in order/],
      ['bogus-type.json', { events: recorded.map((e, i) => (i === 4 ? { ...e, eventType: 'EVENT_TYPE_BOGUS' } : e)) }, /events\[4\]\.eventType: "EVENT_TYPE_BOGUS" is not a history event type/],
      ['no-attributes.json', { events: [{ eventId: '1', eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED' }] }, /events\[0\]\.workflowExecutionStartedEventAttributes: is missing/],
      // Only the started event: the replayer would wait for a workflow task for ever.
      ['started-only.json', { events: recorded.slice(0, 1) }, /events: has no completed workflow task: there are no recorded commands to compare the code against/],
      ['not-json.json', '{"events": [', /not-json\.json is not JSON/],
    ];
    for (const [name, value, message] of cases) {
      const r = await tandem(['runs', 'replay', '--file', file(name, value)]);
      expect({ name, code: r.code }).toEqual({ name, code: 2 });
      expect(r.err).toMatch(message);
      expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.out).not.toMatch(/deterministic/);
    }
  });

  test('an error the workflow code throws during the replay is a failed replay (exit 1), never "deterministic"', async () => {
    // A run exported while its second workflow task was in flight, with placeJob's result damaged: the
    // code throws a TypeError on that task, for which the history records no commands to compare.
    // placeJob's completion found by its scheduled event (the history's layout moves with the patches).
    const scheduled = recorded.find((e) => (e.activityTaskScheduledEventAttributes as { activityType?: { name?: string } } | undefined)?.activityType?.name === 'placeJob')!;
    const done = recorded.findIndex((e) => (e.activityTaskCompletedEventAttributes as { scheduledEventId?: string } | undefined)?.scheduledEventId === scheduled.eventId);
    const upTo = done + 3;
    const events = recorded.slice(0, upTo).map((e) => JSON.parse(JSON.stringify(e)) as Event);
    expect(events.map((e) => e.eventType.replace('EVENT_TYPE_', '')).slice(-3)).toEqual(['ACTIVITY_TASK_COMPLETED', 'WORKFLOW_TASK_SCHEDULED', 'WORKFLOW_TASK_STARTED']);
    (events[done]!.activityTaskCompletedEventAttributes as { result: { payloads: { data: string }[] } }).result.payloads[0]!.data = Buffer.from('null').toString('base64');
    const r = await tandem(['runs', 'replay', '--file', file('damaged-result.json', { events })]);
    expect(r.out).toMatch(/damaged-result\.json: replay FAILED — the workflow threw TypeError: .*null/);
    expect(r.out).not.toMatch(/: deterministic/);
    expect(r.code).toBe(1);
    // The same history undamaged is deterministic: the failure is the damage, not the truncation.
    const ok = await tandem(['runs', 'replay', '--file', file('in-flight.json', { events: recorded.slice(0, upTo) })]);
    expect(ok).toMatchObject({ code: 0, out: expect.stringMatching(new RegExp(`in-flight\\.json: deterministic — ${upTo} events of hybridPipeline`)) });
  });

  test('a replay that stalls fails when its time is up; a bad --timeout is refused first', async () => {
    const stalled = file('stalls.json', { events: recorded.slice(0, 1) });
    const r = await run(['test/fixtures/replay-stall.ts', stalled, '3000']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out.trim().split('\n').at(-1)!)).toMatchObject({ deterministic: false, failed: 'the replay did not finish within 3000 ms (a malformed or inconsistent history can stall the replayer)' });
    const bad = await tandem(['runs', 'replay', '--file', stalled, '--timeout', 'soon']);
    expect(bad).toMatchObject({ code: 2, err: expect.stringMatching(/--timeout "soon" is not a duration such as 90s or 5m/) });
  });
});
