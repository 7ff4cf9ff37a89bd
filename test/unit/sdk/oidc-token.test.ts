// sdk/oidc-token.ts against a real loopback token endpoint, with the timers injected: the first token
// before any connection, the next one scheduled at its refresh time (half the lifetime of a short
// token) and handed to the listeners, a failed refresh retried with a doubling pause while the current
// token stays in use, and nothing scheduled after stop().
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OidcApiKey } from '../../../sdk/oidc-token.js';

let server: Server;
let url: string;
let answer: 'ok' | 'down' = 'ok';
let issued = 0;
const SECRET = 'unit-secret-do-not-leak';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const basic = Buffer.from(`tenant-a:${SECRET}`).toString('base64');
      if (answer === 'down') return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"temporarily_unavailable"}');
      if (req.headers.authorization !== `Basic ${basic}`) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
      issued++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `token-${issued}`, expires_in: 10 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
});
afterAll(() => new Promise((r) => server.close(r)));

function clock() {
  const timers: Array<{ fn: () => void; ms: number; cleared: boolean }> = [];
  return {
    timers,
    setTimer: (fn: () => void, ms: number) => {
      const t = { fn, ms, cleared: false };
      timers.push(t);
      return t;
    },
    clearTimer: (t: unknown) => void ((t as { cleared: boolean }).cleared = true),
    /** Runs the newest pending timer and waits for the refresh it starts to finish: every refresh,
     * good or failed, ends by scheduling the next one (a fixed pause lost that race under load). */
    async fire() {
      const t = timers.at(-1)!;
      const before = timers.length;
      t.fn();
      for (let waited = 0; timers.length === before; waited += 5) {
        if (waited > 60_000) throw new Error('the refresh never scheduled the next one');
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
}

test('refreshes at half the lifetime, retries a failed refresh with a doubling pause, and stops', async () => {
  answer = 'ok';
  const c = clock();
  let now = 1_000_000;
  const key = new OidcApiKey({ tokenUrl: url, clientId: 'tenant-a', clientSecret: SECRET }, { setTimer: c.setTimer, clearTimer: c.clearTimer, now: () => now });
  const seen: string[] = [];
  key.onRefresh((t) => seen.push(t));
  const first = await key.start();
  expect(first).toBe(key.current());
  // A 10 s token: refreshed 5 s before its expiry (the 60 s margin is capped at half the lifetime).
  expect(c.timers.at(-1)!.ms).toBe(5_000);

  now += 5_000;
  await c.fire();
  expect(seen).toEqual([key.current()]);
  expect(key.current()).not.toBe(first);

  answer = 'down';
  now += 5_000;
  await c.fire();
  expect(key.lastError?.message).toMatch(/token endpoint refused the client-credentials grant \(503 temporarily_unavailable\)/);
  expect(key.lastError?.message).not.toContain(SECRET);
  expect(c.timers.at(-1)!.ms).toBe(1_000);
  await c.fire();
  expect(c.timers.at(-1)!.ms).toBe(2_000);
  expect(key.current()).toBe(seen[0]); // the last good token stays in use meanwhile

  answer = 'ok';
  await c.fire();
  expect(key.lastError).toBeUndefined();
  expect(seen).toHaveLength(2);
  expect(key.refreshes).toBe(3);

  key.stop();
  expect(c.timers.at(-1)!.cleared).toBe(true);
});

test('a refused first grant fails start() with the status and OAuth code only', async () => {
  answer = 'ok';
  const key = new OidcApiKey({ tokenUrl: url, clientId: 'tenant-a', clientSecret: 'wrong-secret-do-not-leak' });
  const err = await key.start().then(() => undefined, (e: Error) => e);
  expect(err?.message).toBe('token endpoint refused the client-credentials grant (401 invalid_client)');
  expect(() => key.current()).toThrow(/before start/);
});
