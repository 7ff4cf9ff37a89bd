// Credentials never follow a redirect: the slurmrestd client (X-SLURM-USER-TOKEN), the FirecREST
// client (bearer token) and the OIDC token client (client secret) all refuse a 3xx, so an API or token
// endpoint that points elsewhere cannot collect them. Real loopback HTTP servers on two ports (two
// origins): the first redirects everything to the second, which records what reached it.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SlurmrestdClient } from '../../../backends/slurm/slurmrestd-client.js';
import { FirecrestClient } from '../../../backends/slurm/firecrest-client.js';
import { ClientCredentialsTokenSource } from '../../../backends/slurm/auth.js';
import { SlurmApiError } from '../../../backends/slurm/errors.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

function listen(handler: (req: Seen, res: import('node:http').ServerResponse) => void): Promise<{ server: Server; origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(r);
      handler(r, res);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen })));
}

let collector: Awaited<ReturnType<typeof listen>>;
let redirector: Awaited<ReturnType<typeof listen>>;
const TOKEN = 'sl-jwt-do-not-leak';
const SECRET = 'client-secret-do-not-leak';
const BEARER = 'bearer-do-not-leak';

beforeAll(async () => {
  collector = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"access_token":"stolen","expires_in":300,"meta":{},"errors":[],"warnings":[]}');
  });
  redirector = await listen((req, res) => {
    // The OIDC token endpoint of the FirecREST case answers here; everything else goes elsewhere.
    if (req.url === '/token-ok') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: BEARER, expires_in: 300 }));
      return;
    }
    res.writeHead(307, { location: `${collector.origin}${req.url}` });
    res.end();
  });
});

afterAll(async () => {
  await Promise.all([collector, redirector].map((s) => new Promise((r) => s.server.close(r))));
});

beforeEach(() => {
  collector.seen.length = 0;
  redirector.seen.length = 0;
});

const leaked = (secret: string) => collector.seen.some((r) => JSON.stringify(r.headers).includes(secret) || r.body.includes(secret));
const noRetry = { attempts: 1, initialMs: 1, maxMs: 1 };

test('slurmrestd: a redirect to another origin is refused and the token header never reaches it', async () => {
  const client = new SlurmrestdClient({ baseUrl: redirector.origin, user: 'alice', token: TOKEN, backoff: noRetry });
  const err = await client.ping().then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SlurmApiError);
  expect(err).toMatchObject({ kind: 'invalid', status: 307 });
  expect((err as Error).message).toMatch(/→ 307.*redirect, not followed because requests carry credentials/);
  expect((err as Error).message).not.toContain(TOKEN);
  expect(redirector.seen[0]!.headers['x-slurm-user-token']).toBe(TOKEN); // it was sent to the configured API …
  expect(collector.seen).toEqual([]); // … and nowhere else
  expect(leaked(TOKEN)).toBe(false);
  // A POST (submit) is refused the same way, never re-sent.
  await expect(client.cancel('42')).rejects.toMatchObject({ kind: 'invalid', status: 307 });
  expect(collector.seen).toEqual([]);
});

test('FirecREST: the bearer token does not follow a redirect of an API call', async () => {
  const client = new FirecrestClient({ baseUrl: redirector.origin, credentials: { tokenUrl: `${redirector.origin}/token-ok`, clientId: 'tandem', clientSecret: SECRET }, backoff: noRetry });
  await expect(client.systems()).rejects.toMatchObject({ kind: 'invalid', status: 307, message: expect.stringMatching(/GET \/status\/systems → 307/) });
  expect(redirector.seen.map((r) => r.url)).toEqual(['/token-ok', '/status/systems']);
  expect(redirector.seen[1]!.headers.authorization).toBe(`Bearer ${BEARER}`);
  expect(collector.seen).toEqual([]);
  expect(leaked(BEARER) || leaked(SECRET)).toBe(false);
});

test('OIDC token client: a redirected client-credentials grant is refused; the secret stays with the configured endpoint', async () => {
  const tokens = new ClientCredentialsTokenSource({ tokenUrl: `${redirector.origin}/token`, clientId: 'tandem', clientSecret: SECRET });
  const err = await tokens.token().then(() => undefined, (e: unknown) => e);
  expect(err).toMatchObject({ kind: 'invalid', status: 307 });
  expect((err as Error).message).toMatch(/token endpoint answered 307 \(a redirect\); redirects are not followed/);
  expect((err as Error).message).not.toContain(SECRET);
  expect(collector.seen).toEqual([]);
  expect(leaked(SECRET)).toBe(false);
  expect(tokens.fetches).toBe(0);
});
