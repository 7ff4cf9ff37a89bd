// The codec server's authentication (codec/server.ts, docs/security.md) against a real OIDC issuer on
// 127.0.0.1 (test/scale/oidc-issuer.ts: an RS256 key pair, its JWKS and discovery document, a
// client-credentials token endpoint signing Temporal-style `permissions` claims): the Web UI's
// forwarded access token decodes its own tenant's payloads only; no token, a token of another issuer,
// an expired one, an unsigned one, another tenant's token and a rebinding Host header are all refused.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import { SignJWT, UnsecuredJWT, generateKeyPair } from 'jose';
import { AesGcmCodec } from '../../codec/index.js';
import { payloadsFromJson, payloadsToJson, startCodecServer, type CodecServer } from '../../codec/server.js';
import { startOidcIssuer, type OidcIssuer } from '../scale/oidc-issuer.js';

const UI = 'http://localhost:8080';
const A = { id: 'acme-1', key: randomBytes(32) };
const B = { id: 'beta-1', key: randomBytes(32) };
const OPERATOR = 'the-operator-static-token';
let idp: OidcIssuer;
let server: CodecServer;

beforeAll(async () => {
  idp = await startOidcIssuer({
    alice: { secret: 'alice-secret', permissions: ['acme:read'] },
    bob: { secret: 'bob-secret', permissions: ['beta:write'] },
    nobody: { secret: 'nobody-secret', permissions: ['gamma:read'] },
  });
  // The JWKS URL comes from the issuer's discovery document.
  server = await startCodecServer({ keys: { keys: [A, B] }, origins: [UI], auth: { token: OPERATOR, oidc: { issuer: idp.issuer, tenantKeys: { acme: [A.id], beta: [B.id] } } } });
});
afterAll(async () => {
  await server?.close();
  await idp?.close();
});

async function token(client: string): Promise<string> {
  const r = await fetch(idp.tokenUrl, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client, client_secret: `${client}-secret` }) });
  return ((await r.json()) as { access_token: string }).access_token;
}
const encrypted = async (key: typeof A, value: unknown) => payloadsToJson(await new AesGcmCodec({ keys: [key] }).encode([defaultPayloadConverter.toPayload(value)!]));
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: UI, ...headers }, body: JSON.stringify(body) });
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
async function refused(r: Response, status: number, message: RegExp) {
  expect(r.status).toBe(status);
  expect(((await r.json()) as { error: string }).error).toMatch(message);
}

test('a tenant\'s forwarded access token decodes its own payloads, and encodes with its own key', async () => {
  const alice = await token('alice');
  const r = await post('/decode', await encrypted(A, { secret: 'acme-data' }), { ...bearer(alice), 'X-Namespace': 'acme' });
  expect(r.status).toBe(200);
  expect(r.headers.get('access-control-allow-origin')).toBe(UI);
  expect(defaultPayloadConverter.fromPayload(payloadsFromJson(await r.json())[0]!)).toEqual({ secret: 'acme-data' });
  const enc = await post('/encode', payloadsToJson([defaultPayloadConverter.toPayload('x')!]), bearer(alice));
  const [p] = payloadsFromJson(await enc.json());
  expect(Buffer.from(p!.metadata!['encryption-key-id']!).toString()).toBe(A.id);
  // The operator's static token reads every tenant's.
  expect((await post('/decode', await encrypted(B, 1), bearer(OPERATOR))).status).toBe(200);
});

test('no token, a garbage token and a token of another issuer\'s key are 401', async () => {
  const body = await encrypted(A, 1);
  await refused(await post('/decode', body), 401, /bearer token is required/);
  await refused(await post('/decode', body, bearer('not.a.jwt')), 401, /not valid/);
  const { privateKey } = await generateKeyPair('RS256');
  const forged = await new SignJWT({ permissions: ['acme:read'] }).setProtectedHeader({ alg: 'RS256', kid: 'whatever' }).setIssuer(idp.issuer).setIssuedAt().setExpirationTime('5m').sign(privateKey);
  await refused(await post('/decode', body, bearer(forged)), 401, /not valid/);
});

test('an unsigned token (alg none), an expired token and a token of another issuer are 401', async () => {
  const body = await encrypted(A, 1);
  const unsigned = new UnsecuredJWT({ permissions: ['acme:read'] }).setIssuer(idp.issuer).setIssuedAt().setExpirationTime('5m').encode();
  await refused(await post('/decode', body, bearer(unsigned)), 401, /not valid/);
  const other = await startOidcIssuer({ alice: { secret: 'alice-secret', permissions: ['acme:read'] } });
  try {
    const r = await fetch(other.tokenUrl, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'alice', client_secret: 'alice-secret' }) });
    await refused(await post('/decode', body, bearer(((await r.json()) as { access_token: string }).access_token)), 401, /not valid/);
  } finally {
    await other.close();
  }
  const short = await startOidcIssuer({ alice: { secret: 'alice-secret', permissions: ['acme:read'], lifetimeS: -120 } });
  const s2 = await startCodecServer({ keys: { keys: [A] }, origins: [UI], auth: { oidc: { issuer: short.issuer, jwksUrl: short.jwksUrl, tenantKeys: { acme: [A.id] } } } });
  try {
    const r = await fetch(short.tokenUrl, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'alice', client_secret: 'alice-secret' }) });
    const expired = ((await r.json()) as { access_token: string }).access_token;
    const res = await fetch(`${s2.url}/decode`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...bearer(expired) }, body: JSON.stringify(body) });
    await refused(res, 401, /"exp" claim/);
  } finally {
    await s2.close();
    await short.close();
  }
});

test('another tenant\'s token cannot decode (403, naming the key id), nor can a tenant without keys', async () => {
  const bob = await token('bob');
  await refused(await post('/decode', await encrypted(A, 'acme-data'), bearer(bob)), 403, /encrypted with key id "acme-1", which beta may not use/);
  // Naming the other tenant's namespace does not widen what the token may use.
  await refused(await post('/decode', await encrypted(A, 'acme-data'), { ...bearer(bob), 'X-Namespace': 'acme' }), 403, /"acme-1"/);
  await refused(await post('/decode', await encrypted(A, 1), bearer(await token('nobody'))), 403, /names no tenant with keys here \(gamma\)/);
  await refused(await post('/encode', { payloads: [] }, bearer(await token('nobody'))), 403, /no tenant/);
});

test('a rebinding Host header is 421 even with a valid token; another Origin is 403', async () => {
  const alice = await token('alice');
  const status = await new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path: '/decode', method: 'POST', headers: { Host: `rebind.attacker.example:${server.port}`, 'Content-Type': 'application/json', ...bearer(alice) } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ payloads: [] }));
  });
  expect(status).toBe(421);
  await refused(await post('/decode', { payloads: [] }, { ...bearer(alice), Origin: 'http://attacker.example' }), 403, /origin http:\/\/attacker\.example is not allowed/);
});
