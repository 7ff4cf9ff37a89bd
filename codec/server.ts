// The codec server (`tandem codec-server`): lets the Temporal Web UI and `temporal … --codec-endpoint`
// show decrypted payloads to the operators allowed to see them, without those tools ever holding a key.
// Temporal's remote-codec protocol: POST <endpoint>/decode and /encode with `{payloads: [{metadata:
// {key: base64}, data: base64}]}` (protobuf's JSON form of Payloads), answered in the same shape.
// Browsers call it cross-origin from the Web UI, so CORS preflights are answered for the configured
// origins (with the X-Namespace header the UI sends); a request from any other Origin is refused (403).
// Binds loopback only: put a TLS-terminating proxy in front to serve anyone else (`hosts`).
//
// Authenticated by default (issue #27, docs/security.md): a caller shows either the static operator
// token (every key) or the access token the Web UI forwards (`codec.passAccessToken`): a JWT of the
// configured OIDC issuer, verified against its JWKS (jose: signature, issuer, audience, expiry), whose
// tenant claim names the tenants it speaks for; each tenant may use only its own key ids — to decode a
// payload encrypted with another tenant's key is a 403, and it encodes with the newest of its own keys.
// No authentication only when asked for explicitly (`auth.none`) and only while every Host it answers
// is loopback. The Host header must name this server (421 otherwise: a rebound DNS name is refused).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { AesGcmCodec, ENCODING_ENCRYPTED, METADATA_KEY_ID } from './aes-gcm.js';
import type { CodecKeys } from './keys.js';
import { parseJsonLimited } from '../contract/limits.js';
import { isLoopbackHost, LOOPBACK_HOSTS } from '../contract/endpoint-url.js';

/** The Web UI's forwarded access token, checked against the issuer's keys. */
export interface CodecServerOidc {
  /** The issuer URL (the token's `iss`). */
  issuer: string;
  /** The JWKS URL; default: the issuer's discovery document's `jwks_uri`. */
  jwksUrl?: string;
  /** The token's `aud` must hold it, when set. */
  audience?: string;
  /**
   * The claim naming the caller's tenants: a string or a list of strings; a value `<tenant>:<role>`
   * (Temporal's `permissions` claim, "<namespace>:<role>") counts as its tenant. Default `permissions`.
   */
  claim?: string;
  /** Tenant (or namespace) → the key ids it may use. A tenant not listed may use none. */
  tenantKeys: Record<string, string[]>;
}

export interface CodecServerAuth {
  /** The operator's static bearer token: every key. */
  token?: string;
  oidc?: CodecServerOidc;
  /** No authentication: refused unless every allowed Host is loopback. */
  none?: boolean;
}

export interface CodecServerOptions {
  /** The keyring (the workers' keys). */
  keys: CodecKeys;
  /** Origins CORS answers (the Web UI's); others get no CORS headers, and their requests a 403. */
  origins: string[];
  auth: CodecServerAuth;
  /** One line per answered request (`POST /decode 200 tenants=a`), for an access log. */
  log?: (line: string) => void;
  /** Host names (host[:port]) answered besides 127.0.0.1, localhost and [::1] on the bound port (a proxy's). */
  hosts?: string[];
  /** 0: any free port. */
  port?: number;
  /** Largest request body accepted (bytes). */
  maxBodyBytes?: number;
}

export interface CodecServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const ALLOWED_HEADERS = 'Content-Type, X-Namespace, Authorization';
/** JWS algorithms accepted (never `none` or HMAC with a public key: jose refuses those anyway). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const DEFAULT_MAX_BODY = 8 * 1024 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
function b64(v: unknown, where: string): Uint8Array {
  if (typeof v !== 'string' || !BASE64.test(v)) throw new HttpError(400, `${where} must be a base64 string`);
  return Buffer.from(v, 'base64');
}

/** Protobuf JSON → Payload, checked (a request is untrusted input). */
export function payloadsFromJson(body: unknown): Payload[] {
  const list = (body as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(list)) throw new HttpError(400, 'the body must be {"payloads": [...]}');
  return list.map((p: unknown, i) => {
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new HttpError(400, `payloads[${i}] must be an object`);
    const { metadata = {}, data = '' } = p as JsonPayload;
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) throw new HttpError(400, `payloads[${i}].metadata must be an object`);
    return { metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, b64(v, `payloads[${i}].metadata.${k}`)])), data: b64(data, `payloads[${i}].data`) };
  });
}

export function payloadsToJson(payloads: Payload[]): { payloads: JsonPayload[] } {
  return {
    payloads: payloads.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
      data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
    })),
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();
/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  return timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && !!m;
}

async function readBody(req: IncomingMessage, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > max) throw new HttpError(413, `the body is larger than ${max} bytes`);
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Who a request speaks for: every key (the operator), or the key ids of some tenants. */
type Scope = { all: true } | { all: false; tenants: string[]; keyIds: string[] };

/** The tenants a token's claim names: a string or strings; `<tenant>:<role>` counts as `<tenant>`. */
export function tenantsOf(claim: unknown): string[] {
  const values = typeof claim === 'string' ? claim.split(/[\s,]+/) : Array.isArray(claim) ? claim.filter((v): v is string => typeof v === 'string') : [];
  return [...new Set(values.map((v) => v.split(':')[0]!.trim()).filter(Boolean))];
}


async function discoverJwks(issuer: string): Promise<string> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let doc: { issuer?: unknown; jwks_uri?: unknown };
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
    if (!res.ok) throw new Error(`answered ${res.status}`);
    doc = parseJsonLimited(await res.text(), 16, 1024 * 1024) as typeof doc;
  } catch (e) {
    throw new Error(`the OIDC issuer's discovery document ${url} could not be read: ${(e as Error).message}`);
  }
  if (doc.issuer !== issuer) throw new Error(`the discovery document ${url} names issuer ${JSON.stringify(doc.issuer)}, not ${issuer}`);
  if (typeof doc.jwks_uri !== 'string' || !URL.canParse(doc.jwks_uri)) throw new Error(`the discovery document ${url} has no jwks_uri`);
  return doc.jwks_uri;
}

export async function startCodecServer(o: CodecServerOptions): Promise<CodecServer> {
  const { auth } = o;
  if (!auth.token && !auth.oidc && !auth.none) throw new Error('the codec server needs authentication: a static token, an OIDC issuer, or no authentication asked for explicitly');
  if (auth.none && (o.hosts ?? []).some((h) => !isLoopbackHost(h))) throw new Error(`no authentication is for loopback only, but the codec server would answer ${o.hosts!.filter((h) => !isLoopbackHost(h)).join(', ')}`);
  const known = new Set(o.keys.keys.map((k) => k.id));
  for (const [tenant, ids] of Object.entries(auth.oidc?.tenantKeys ?? {})) {
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length) throw new Error(`tenant ${tenant} is given key id(s) ${unknown.join(', ')}, which the keyring does not hold`);
  }
  const jwks: JWTVerifyGetKey | undefined = auth.oidc ? createRemoteJWKSet(new URL(auth.oidc.jwksUrl ?? (await discoverJwks(auth.oidc.issuer))), { timeoutDuration: 10_000 }) : undefined;
  const claim = auth.oidc?.claim ?? 'permissions';
  const tenantKeys = new Map(Object.entries(auth.oidc?.tenantKeys ?? {}));
  const origins = new Set(o.origins);
  const max = o.maxBodyBytes ?? DEFAULT_MAX_BODY;
  // One codec per set of key ids, in keyring order (the newest of a tenant's keys encrypts).
  const codecs = new Map<string, AesGcmCodec>();
  const codecFor = (scope: Scope) => {
    const keys = scope.all ? o.keys.keys : o.keys.keys.filter((k) => scope.keyIds.includes(k.id));
    const id = keys.map((k) => k.id).join('\n');
    if (!codecs.has(id)) codecs.set(id, new AesGcmCodec({ keys }));
    return codecs.get(id)!;
  };

  async function authenticate(req: IncomingMessage): Promise<Scope> {
    const header = req.headers.authorization;
    const bearer = /^Bearer ([^\s]+)$/.exec(header ?? '')?.[1];
    if (auth.none && header === undefined) return { all: true };
    if (auth.token !== undefined && tokenMatches(header, auth.token)) return { all: true };
    if (!bearer || !jwks) throw new HttpError(401, 'a valid bearer token is required');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(bearer, jwks, { issuer: auth.oidc!.issuer, audience: auth.oidc!.audience, algorithms: ALGORITHMS, clockTolerance: 30 }));
    } catch (e) {
      throw new HttpError(401, `the bearer token is not valid: ${(e as Error).message}`);
    }
    let tenants = tenantsOf(payload[claim]);
    // The Web UI names the namespace it shows: when it is one of the token's tenants, only its keys.
    const ns = req.headers['x-namespace'];
    if (typeof ns === 'string' && tenants.includes(ns)) tenants = [ns];
    const keyIds = [...new Set(tenants.flatMap((t) => tenantKeys.get(t) ?? []))];
    if (!keyIds.length) throw new HttpError(403, `the token's ${claim} claim names no tenant with keys here (${tenants.join(', ') || 'none'})`);
    return { all: false, tenants, keyIds };
  }

  const send = (res: ServerResponse, status: number, body?: unknown) => {
    res.statusCode = status;
    o.log?.(`${res.req.method ?? '?'} ${res.req.url ?? '/'} ${status}${res.req.headers.origin ? ` origin=${res.req.headers.origin}` : ''}`);
    if (body === undefined) return void res.end();
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(body));
  };
  let port = 0;
  const server = createServer((req, res) => {
    void (async () => {
      // DNS rebinding: a page of evil.example resolved to 127.0.0.1 still sends Host: evil.example.
      const host = (req.headers.host ?? '').toLowerCase();
      const hostOk = LOOPBACK_HOSTS.some((h) => host === `${h}:${port}`) || (o.hosts ?? []).some((h) => h.toLowerCase() === host);
      if (!hostOk) return send(res, 421, { error: `this server does not answer for Host ${JSON.stringify(req.headers.host ?? '')}` });
      const origin = req.headers.origin;
      const allowed = origin !== undefined && origins.has(origin);
      res.setHeader('Vary', 'Origin');
      // A browser always sends Origin cross-origin; a page of another origin is refused outright (no
      // CORS headers would stop only its reading the answer, not a forged encode or decode).
      if (origin !== undefined && !allowed) return send(res, 403, { error: `origin ${origin} is not allowed` });
      if (allowed) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Allow-Credentials', 'true');
      }
      const path = new URL(req.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
      if (req.method === 'OPTIONS') {
        if (!allowed) return send(res, 403, { error: 'origin (none) is not allowed' });
        res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
        res.setHeader('Access-Control-Max-Age', '600');
        return send(res, 204);
      }
      if (path !== '/encode' && path !== '/decode') return send(res, 404, { error: 'POST /encode or /decode' });
      if (req.method !== 'POST') {
        res.setHeader('Allow', 'POST, OPTIONS');
        return send(res, 405, { error: 'POST only' });
      }
      let scope: Scope;
      try {
        scope = await authenticate(req);
      } catch (e) {
        if (e instanceof HttpError && e.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
        throw e;
      }
      let body: unknown;
      try {
        body = parseJsonLimited(await readBody(req, max), 16, max);
      } catch (e) {
        throw e instanceof HttpError ? e : new HttpError(400, `the body is not JSON: ${(e as Error).message}`);
      }
      const payloads = payloadsFromJson(body);
      if (path === '/decode' && !scope.all) {
        for (const [i, p] of payloads.entries()) {
          if (Buffer.from(p.metadata?.[METADATA_ENCODING_KEY] ?? []).toString() !== ENCODING_ENCRYPTED) continue;
          const id = Buffer.from(p.metadata?.[METADATA_KEY_ID] ?? []).toString();
          if (!scope.keyIds.includes(id)) throw new HttpError(403, `payloads[${i}] is encrypted with key id ${JSON.stringify(id)}, which ${scope.tenants.join(', ')} may not use`);
        }
      }
      const codec = codecFor(scope);
      const out = path === '/encode' ? await codec.encode(payloads) : await codec.decode(payloads);
      send(res, 200, payloadsToJson(out));
    })().catch((e: unknown) => {
      // Codec errors name the key id at most, never a key; anything else is not echoed.
      const status = e instanceof HttpError ? e.status : (e as Error).name === 'CodecError' ? 422 : 500;
      if (!res.headersSent) send(res, status, { error: status === 500 ? 'internal error' : (e as Error).message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
