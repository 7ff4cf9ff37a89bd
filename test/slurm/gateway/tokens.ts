// A small OIDC token endpoint (client-credentials grant) issuing short-lived HS256 JWTs, and their
// verification on the gateway side. Like FirecREST, the gateway refuses tokens about to expire.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const b64 = (v: Buffer | string) => Buffer.from(v).toString('base64url');

export interface TokenIssuerOptions {
  clientId: string;
  clientSecret: string;
  /** Token lifetime in seconds. */
  lifetimeS: number;
  /** The gateway rejects tokens with less than this left (FirecREST: 30 s). */
  minRemainingS: number;
  now?: () => number;
}

export class TokenIssuer {
  private readonly key = randomBytes(32);
  issued = 0;
  constructor(readonly opts: TokenIssuerOptions) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** Handles a token request; returns [status, body]. */
  grant(authorization: string | undefined, form: URLSearchParams): [number, Record<string, unknown>] {
    if (form.get('grant_type') !== 'client_credentials') return [400, { error: 'unsupported_grant_type' }];
    let id = form.get('client_id') ?? undefined;
    let secret = form.get('client_secret') ?? undefined;
    if (authorization?.startsWith('Basic ')) {
      const [u, p] = Buffer.from(authorization.slice(6), 'base64').toString().split(':');
      id = decodeURIComponent(u ?? '');
      secret = decodeURIComponent(p ?? '');
    }
    if (id !== this.opts.clientId || !secret || !safeEqual(secret, this.opts.clientSecret)) return [401, { error: 'invalid_client' }];
    const iat = Math.floor(this.now() / 1000);
    const header = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const payload = b64(JSON.stringify({ sub: `service-account-${id}`, preferred_username: id, azp: id, iat, exp: iat + this.opts.lifetimeS, jti: randomBytes(8).toString('hex') }));
    const sig = b64(createHmac('sha256', this.key).update(`${header}.${payload}`).digest());
    this.issued++;
    return [200, { access_token: `${header}.${payload}.${sig}`, token_type: 'Bearer', expires_in: this.opts.lifetimeS }];
  }

  /** The token's username, or the reason it is refused. */
  verify(authorization: string | undefined): { user: string } | { error: string } {
    if (!authorization?.startsWith('Bearer ')) return { error: 'missing bearer token' };
    const [h, p, s] = authorization.slice(7).split('.');
    if (!h || !p || !s) return { error: 'malformed token' };
    const expected = b64(createHmac('sha256', this.key).update(`${h}.${p}`).digest());
    if (!safeEqual(s, expected)) return { error: 'bad signature' };
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { exp: number; preferred_username: string };
    const left = claims.exp - this.now() / 1000;
    if (left <= 0) return { error: 'token expired' };
    if (left < this.opts.minRemainingS) return { error: `token expires in ${left.toFixed(1)} s (minimum ${this.opts.minRemainingS} s)` };
    return { user: claims.preferred_username };
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
