// workers/keepalive.ts: an activity with a heartbeat timeout that does not heartbeat itself heartbeats
// every third of the timeout while it runs, repeating its last details; one that heartbeats itself, or
// ends sooner, or has no heartbeat timeout, or is local, gets none. Fake timers: no wall clock.
import { jest } from '@jest/globals';
import type { Context } from '@temporalio/activity';
import { keepAlive } from '../../../workers/keepalive.js';

type Next = (input: unknown) => Promise<unknown>;

function fakeContext(info: { heartbeatTimeoutMs?: number; isLocal?: boolean; heartbeatDetails?: unknown }) {
  const sent: unknown[] = [];
  const ctx = { info: { isLocal: false, heartbeatDetails: undefined, ...info }, heartbeat: (d?: unknown) => void sent.push(d ?? null) };
  return { ctx: ctx as unknown as Context, sent };
}

/** Runs `body` (given the context) through the interceptor while fake time advances by `forMs` in steps. */
async function run(ctx: Context, forMs: number, body: (ctx: Context) => void = () => undefined): Promise<void> {
  const execute = keepAlive(ctx).inbound!.execute!;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const next: Next = async () => {
    body(ctx);
    await done;
    return 'ok';
  };
  const result = execute({ args: [], headers: {} }, next as never);
  for (let t = 0; t < forMs; t += 500) await jest.advanceTimersByTimeAsync(500);
  finish();
  await expect(result).resolves.toBe('ok');
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('a short call that runs past a third of its heartbeat timeout heartbeats, with the details it started with', async () => {
  const { ctx, sent } = fakeContext({ heartbeatTimeoutMs: 9000, heartbeatDetails: { step: 3 } });
  await run(ctx, 10_000);
  expect(sent.length).toBeGreaterThanOrEqual(3);
  expect(sent.every((d) => JSON.stringify(d) === '{"step":3}')).toBe(true);
  // Stopped with the activity: no heartbeat after it ended.
  const after = sent.length;
  await jest.advanceTimersByTimeAsync(30_000);
  expect(sent).toHaveLength(after);
});

test('one that ends within a third of its timeout sends none', async () => {
  const { ctx, sent } = fakeContext({ heartbeatTimeoutMs: 20_000 });
  await run(ctx, 5000);
  expect(sent).toEqual([]);
});

test('an activity that heartbeats itself keeps its own details: the keep-alive repeats the latest', async () => {
  const { ctx, sent } = fakeContext({ heartbeatTimeoutMs: 3000 });
  await run(ctx, 4000, (c) => c.heartbeat({ state: 'RUNNING', progress: { step: 7 } }));
  expect(sent[0]).toEqual({ state: 'RUNNING', progress: { step: 7 } });
  expect(sent.length).toBeGreaterThan(1);
  expect(sent.every((d) => JSON.stringify(d) === JSON.stringify(sent[0]))).toBe(true);
});

test('no heartbeat timeout, or a local activity: nothing', async () => {
  for (const info of [{}, { heartbeatTimeoutMs: 3000, isLocal: true }]) {
    const { ctx, sent } = fakeContext(info);
    await run(ctx, 10_000);
    expect(sent).toEqual([]);
  }
});
