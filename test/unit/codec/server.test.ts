// The codec server (codec/server.ts) over real HTTP on loopback: Temporal's remote-codec protocol,
// CORS for the Web UI (preflight with X-Namespace), bearer auth, Host and Origin checks, and bad
// requests refused clearly. The OIDC path (a JWKS on 127.0.0.1, signed tokens): test/security/codec-auth.test.ts.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmCodec } from '../../../codec/index.js';
import { payloadsFromJson, payloadsToJson, startCodecServer, tokenMatches, type CodecServer } from '../../../codec/server.js';

const UI = 'http://localhost:8233';
const TOKEN = 'a-long-enough-operator-token';
const keys = { keys: [{ id: 'k1', key: randomBytes(32) }] };
let server: CodecServer;
let open: CodecServer;

beforeAll(async () => {
  server = await startCodecServer({ keys, origins: [UI], auth: { token: TOKEN } });
  open = await startCodecServer({ keys, origins: [UI], auth: { none: true } });
});
afterAll(async () => {
  await server.close();
  await open.close();
});

const post = (s: CodecServer, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${s.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
const auth = { Authorization: `Bearer ${TOKEN}` };

test('binds loopback only', () => {
  expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
});

test('/encode then /decode round-trips Temporal JSON payloads', async () => {
  const value = { spec: { env: { TOKEN: 'plaintext-secret' } } };
  const body = payloadsToJson([defaultPayloadConverter.toPayload(value)!]);
  const enc = await post(server, '/encode', body, { ...auth, 'X-Namespace': 'default' });
  expect(enc.status).toBe(200);
  const encoded = (await enc.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
  expect(Buffer.from(encoded.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
  expect(Buffer.from(encoded.payloads[0]!.data, 'base64').toString('latin1')).not.toContain('plaintext-secret');
  const dec = await post(server, '/decode', encoded, auth);
  expect(dec.status).toBe(200);
  const [p] = payloadsFromJson(await dec.json());
  expect(defaultPayloadConverter.fromPayload(p!)).toEqual(value);
});

test('CORS: the Web UI origin gets its preflight (X-Namespace allowed) and its answers; others do not', async () => {
  const pre = await fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { Origin: UI, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-namespace' } });
  expect(pre.status).toBe(204);
  expect(pre.headers.get('access-control-allow-origin')).toBe(UI);
  expect(pre.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/);
  expect(pre.headers.get('access-control-allow-methods')).toMatch(/POST/);
  const ok = await post(server, '/decode', { payloads: [] }, { ...auth, Origin: UI });
  expect(ok.headers.get('access-control-allow-origin')).toBe(UI);
  const evil = await fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { Origin: 'http://evil.localhost', 'Access-Control-Request-Method': 'POST' } });
  expect(evil.status).toBe(403);
  expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  // Not only its preflight: a simple POST from another origin (text/plain, no preflight) is refused too.
  const evilPost = await post(server, '/decode', { payloads: [] }, { ...auth, Origin: 'http://evil.localhost' });
  expect(evilPost.status).toBe(403);
  expect(evilPost.headers.get('access-control-allow-origin')).toBeNull();
  expect((await post(open, '/encode', { payloads: [] }, { Origin: 'http://evil.localhost', 'Content-Type': 'text/plain' })).status).toBe(403);
});

test('Host: only this server\'s loopback names on its port (421 for a rebound DNS name)', async () => {
  const withHost = (s: CodecServer, host: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: s.port, path: '/decode', method: 'POST', setHost: false, headers: { ...(host ? { Host: host } : {}), 'Content-Type': 'application/json', ...auth } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end('{"payloads":[]}');
    });
  expect(await withHost(server, `127.0.0.1:${server.port}`)).toBe(200);
  expect(await withHost(server, `localhost:${server.port}`)).toBe(200);
  expect(await withHost(server, `evil.example:${server.port}`)).toBe(421);
  expect(await withHost(open, `evil.example:${open.port}`)).toBe(421);
  expect(await withHost(server, `127.0.0.1:${server.port + 1}`)).toBe(421);
  expect([400, 421]).toContain(await withHost(server, '')); // HTTP/1.1 without Host: Node's own 400
});

test('no authentication only when asked for, and only on loopback', async () => {
  await expect(startCodecServer({ keys, origins: [UI], auth: {} })).rejects.toThrow(/needs authentication/);
  await expect(startCodecServer({ keys, origins: [UI], auth: { none: true }, hosts: ['codec.example.org'] })).rejects.toThrow(/loopback only.*codec\.example\.org/);
});

test('bearer auth: missing or wrong tokens get 401; without a token configured, none is needed', async () => {
  expect((await post(server, '/decode', { payloads: [] })).status).toBe(401);
  expect((await post(server, '/decode', { payloads: [] }, { Authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
  expect((await post(server, '/decode', { payloads: [] }, { Authorization: TOKEN })).status).toBe(401);
  expect((await post(open, '/decode', { payloads: [] })).status).toBe(200);
  expect(tokenMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
  expect(tokenMatches(undefined, TOKEN)).toBe(false);
});

test('bad requests are refused with a reason; codec errors name the key id', async () => {
  const bad = async (body: unknown, status: number, message: RegExp) => {
    const r = await post(open, '/decode', body);
    expect(r.status).toBe(status);
    expect(((await r.json()) as { error: string }).error).toMatch(message);
  };
  await bad('{not json', 400, /not JSON/);
  await bad({ nope: 1 }, 400, /\{"payloads": \[\.\.\.\]\}/);
  await bad({ payloads: [{ metadata: { encoding: 'not base64!' } }] }, 400, /payloads\[0\]\.metadata\.encoding must be a base64 string/);
  await bad({ payloads: [null] }, 400, /payloads\[0\] must be an object/);
  await bad('['.repeat(100) + ']'.repeat(100), 400, /nest deeper than 16/);
  const other = new AesGcmCodec({ keys: [{ id: 'elsewhere', key: randomBytes(32) }] });
  await bad(payloadsToJson(await other.encode([defaultPayloadConverter.toPayload(1)!])), 422, /key id "elsewhere"/);
  expect((await fetch(`${open.url}/decode`)).status).toBe(405);
  expect((await post(open, '/other', {})).status).toBe(404);
  const big = await startCodecServer({ keys, origins: [], auth: { none: true }, maxBodyBytes: 100 });
  try {
    expect((await post(big, '/decode', { payloads: [], pad: 'x'.repeat(200) })).status).toBe(413);
  } finally {
    await big.close();
  }
});
