// A small OpenID Connect issuer on 127.0.0.1 for the authorization suite: an RS256 key pair (jose), its
// public half at /jwks.json (what the Temporal server's JWT key provider fetches), the discovery
// document at /.well-known/openid-configuration, and a client-credentials token endpoint at /token
// (client_secret_basic or client_secret_post) that signs a short-lived JWT carrying the client's
// `permissions` claim, the claim Temporal's default claim mapper reads ("<namespace>:<role>"). Each
// client has its own token lifetime, so one suite can test refresh with 5 s tokens.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';

export interface IssuerClient {
  secret: string;
  /** Temporal permissions, e.g. ["tenant-a:write"], ["temporal-system:admin"]. */
  permissions: string[];
  /** Token lifetime in seconds (default 300). */
  lifetimeS?: number;
}

export interface OidcIssuer {
  issuer: string;
  tokenUrl: string;
  jwksUrl: string;
  /** Tokens issued so far, per client id. */
  issued: Record<string, number>;
  /** Token requests refused so far (a wrong secret, an unknown client). */
  refused: number;
  close(): Promise<void>;
}

export async function startOidcIssuer(clients: Record<string, IssuerClient>): Promise<OidcIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const kid = randomBytes(8).toString('hex');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const issued: Record<string, number> = {};
  const state = { refused: 0 };
  let issuer = '';
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const path = new URL(req.url ?? '/', issuer).pathname;
    if (req.method === 'GET' && path === '/jwks.json') return send(200, { keys: [jwk] });
    if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
      return send(200, { issuer, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks.json`, grant_types_supported: ['client_credentials'], token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'], id_token_signing_alg_values_supported: ['RS256'] });
    }
    if (req.method === 'POST' && path === '/token') {
      readBody(req)
        .then(async (body) => {
          const [status, out] = await grant(req.headers.authorization, new URLSearchParams(body));
          send(status, out);
        })
        .catch(() => send(500, { error: 'server_error' }));
      return;
    }
    send(404, { error: 'not_found' });
  });

  async function grant(authorization: string | undefined, form: URLSearchParams): Promise<[number, Record<string, unknown>]> {
    if (form.get('grant_type') !== 'client_credentials') return [400, { error: 'unsupported_grant_type' }];
    let id = form.get('client_id') ?? '';
    let secret = form.get('client_secret') ?? '';
    if (authorization?.startsWith('Basic ')) {
      const decoded = Buffer.from(authorization.slice(6), 'base64').toString();
      const colon = decoded.indexOf(':');
      id = decodeURIComponent(decoded.slice(0, colon));
      secret = decodeURIComponent(decoded.slice(colon + 1));
    }
    const client = Object.hasOwn(clients, id) ? clients[id] : undefined;
    if (!client || !safeEqual(secret, client.secret)) {
      state.refused++;
      return [401, { error: 'invalid_client' }];
    }
    const lifetimeS = client.lifetimeS ?? 300;
    const token = await sign(privateKey, kid, issuer, id, client.permissions, lifetimeS);
    issued[id] = (issued[id] ?? 0) + 1;
    return [200, { access_token: token, token_type: 'Bearer', expires_in: lifetimeS }];
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    tokenUrl: `${issuer}/token`,
    jwksUrl: `${issuer}/jwks.json`,
    issued,
    get refused() {
      return state.refused;
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function sign(key: CryptoKey, kid: string, issuer: string, clientId: string, permissions: string[], lifetimeS: number): Promise<string> {
  return new SignJWT({ permissions, azp: clientId })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
    .setIssuer(issuer)
    .setSubject(`service-account-${clientId}`)
    .setIssuedAt()
    .setExpirationTime(`${lifetimeS}s`)
    .setJti(randomBytes(8).toString('hex'))
    .sign(key);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
