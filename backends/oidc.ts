// OIDC client-credentials tokens (RFC 6749 §4.4), the one client of a token endpoint: FirecREST's
// bearer tokens (backends/slurm/auth.ts) and the Temporal frontend's API key (sdk/oidc-token.ts) both
// come from here. Tokens are fetched, cached and refreshed ahead of expiry (60 s before, or half the
// lifetime for short-lived tokens), one fetch shared by concurrent callers. The client secret and the
// tokens never appear in errors or logs: a refused grant is reported by status and OAuth error code only.
import got from 'got';
import { DEFAULTS } from '../config/defaults.js';

export interface ClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
}

export interface TokenSourceOptions {
  /** Refresh this long before expiry (default 60 s), capped at half a token's lifetime. */
  refreshMarginMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

/**
 * Why a token could not be had: `unreachable` (no answer: network, timeout), `redirect` (a 3xx, never
 * followed because the request carries the secret), `refused` (any other non-200 answer, or no token).
 */
export class TokenEndpointError extends Error {
  constructor(
    readonly reason: 'unreachable' | 'redirect' | 'refused',
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TokenEndpointError';
  }

  /** Worth asking again later: no answer, 408, 429 or 5xx. */
  get transient(): boolean {
    return this.reason === 'unreachable' || this.status === 408 || this.status === 429 || (this.status ?? 0) >= 500;
  }
}

export interface CachedToken {
  token: string;
  expiresAt: number;
  refreshAt: number;
}

export class OidcTokenSource {
  private cached: CachedToken | undefined;
  private inflight: Promise<CachedToken> | undefined;
  protected readonly now: () => number;
  /** Tokens fetched so far (tests and the benchmark report it). */
  fetches = 0;

  constructor(
    private readonly creds: ClientCredentials,
    private readonly opts: TokenSourceOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** A token that is not within its refresh margin. */
  async token(): Promise<string> {
    return (await this.fresh()).token;
  }

  /** The token with its expiry and refresh time (sdk/oidc-token.ts schedules its refresh by it). */
  async fresh(): Promise<CachedToken> {
    const c = this.cached;
    if (c && this.now() < c.refreshAt) return c;
    return this.fetch();
  }

  /** Drops the cached token (after a 401) so the next call fetches a new one. */
  invalidate(token?: string): void {
    if (!token || this.cached?.token === token) this.cached = undefined;
  }

  /** The error a failed grant throws; subclasses map it onto their own classification. */
  protected fail(e: TokenEndpointError): Error {
    return e;
  }

  private fetch(): Promise<CachedToken> {
    this.inflight ??= this.request().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async request(): Promise<CachedToken> {
    const started = this.now();
    let res;
    try {
      res = await got.post(this.creds.tokenUrl, {
        form: { grant_type: 'client_credentials', ...(this.creds.scope ? { scope: this.creds.scope } : {}) },
        // RFC 6749 §2.3.1: client_secret_basic.
        username: this.creds.clientId,
        password: this.creds.clientSecret,
        retry: { limit: 0 },
        // Never followed: a redirected (307/308) grant would re-send the client secret to the new
        // location; a 3xx is refused below like any other non-200 answer.
        followRedirect: false,
        throwHttpErrors: false,
        timeout: { request: this.opts.timeoutMs ?? DEFAULTS.tokenTimeoutMs },
        responseType: 'json',
      });
    } catch (e) {
      throw this.fail(new TokenEndpointError('unreachable', `token endpoint unreachable (${(e as { code?: string }).code ?? 'ERROR'})`));
    }
    const body = res.body as { access_token?: string; expires_in?: number; error?: string };
    if (res.statusCode !== 200 || !body?.access_token) {
      // Only the OAuth error code: the body of a failed token request is not echoed.
      if (res.statusCode >= 300 && res.statusCode < 400) throw this.fail(new TokenEndpointError('redirect', `token endpoint answered ${res.statusCode} (a redirect); redirects are not followed because the request carries the client secret: set tokenUrl to the final URL`, res.statusCode));
      const code = typeof body?.error === 'string' && /^[\w.-]{1,64}$/.test(body.error) ? ` ${body.error}` : '';
      throw this.fail(new TokenEndpointError('refused', `token endpoint refused the client-credentials grant (${res.statusCode}${code})`, res.statusCode));
    }
    this.fetches++;
    const lifetimeMs = Math.max(1, Number(body.expires_in ?? 300)) * 1000;
    const margin = Math.min(this.opts.refreshMarginMs ?? 60_000, lifetimeMs / 2);
    const cached = { token: body.access_token, expiresAt: started + lifetimeMs, refreshAt: started + lifetimeMs - margin };
    this.cached = cached;
    return cached;
  }
}
