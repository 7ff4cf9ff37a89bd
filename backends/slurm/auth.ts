// OIDC client-credentials tokens for FirecREST: fetched from the token endpoint, cached, refreshed ahead
// of expiry (60 s before, or half the lifetime for short-lived tokens), one fetch shared by concurrent
// callers. The client secret and the tokens never appear in errors or logs.
import got from 'got';
import { SlurmApiError } from './errors.js';
import { DEFAULTS } from '../../config/defaults.js';

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

interface Cached {
  token: string;
  expiresAt: number;
  refreshAt: number;
}

export class ClientCredentialsTokenSource {
  private cached: Cached | undefined;
  private inflight: Promise<Cached> | undefined;
  private readonly now: () => number;
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
    const c = this.cached;
    if (c && this.now() < c.refreshAt) return c.token;
    return (await this.fetch()).token;
  }

  /** Drops the cached token (after a 401) so the next call fetches a new one. */
  invalidate(token?: string): void {
    if (!token || this.cached?.token === token) this.cached = undefined;
  }

  private fetch(): Promise<Cached> {
    this.inflight ??= this.request().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async request(): Promise<Cached> {
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
      throw new SlurmApiError('observation', `token endpoint unreachable (${(e as { code?: string }).code ?? 'ERROR'})`);
    }
    const body = res.body as { access_token?: string; expires_in?: number; error?: string };
    if (res.statusCode !== 200 || !body?.access_token) {
      // Only the OAuth error code: the body of a failed token request is not echoed.
      if (res.statusCode >= 300 && res.statusCode < 400) throw new SlurmApiError('invalid', `token endpoint answered ${res.statusCode} (a redirect); redirects are not followed because the request carries the client secret: set tokenUrl to the final URL`, res.statusCode);
      const kind = res.statusCode === 429 || res.statusCode >= 500 || res.statusCode === 408 ? 'observation' : 'invalid';
      throw new SlurmApiError(kind, `token endpoint refused the client-credentials grant (${res.statusCode}${body?.error ? ` ${body.error}` : ''})`, res.statusCode);
    }
    this.fetches++;
    const lifetimeMs = Math.max(1, Number(body.expires_in ?? 300)) * 1000;
    const margin = Math.min(this.opts.refreshMarginMs ?? 60_000, lifetimeMs / 2);
    const cached = { token: body.access_token, expiresAt: started + lifetimeMs, refreshAt: started + lifetimeMs - margin };
    this.cached = cached;
    return cached;
  }
}
