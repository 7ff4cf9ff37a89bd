// The Temporal frontend's API key from an OIDC client-credentials grant (docs/authorization.md): the
// first token is fetched before connecting, then a timer fetches the next one ahead of expiry
// (backends/oidc.ts: 60 s before, or half the lifetime of a short-lived token) and hands it to the
// connections — a Client `Connection` reads `current()` on every call, a worker's `NativeConnection`
// is given it with `setApiKey`. A failed refresh is retried (1 s, doubling, at most 30 s) while the
// current token lasts; it is reported as `lastError` and never carries the secret or a token.
import { OidcTokenSource, type ClientCredentials, type TokenSourceOptions } from '../backends/oidc.js';

export type { ClientCredentials } from '../backends/oidc.js';

const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export interface OidcApiKeyOptions extends TokenSourceOptions {
  /** Timer functions (tests inject a clock); default the global ones. */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

export class OidcApiKey {
  readonly source: OidcTokenSource;
  private token: string | undefined;
  private timer: unknown;
  private stopped = false;
  private retryMs = RETRY_FIRST_MS;
  private readonly listeners: Array<(token: string) => unknown> = [];
  private readonly setTimer: NonNullable<OidcApiKeyOptions['setTimer']>;
  private readonly clearTimer: NonNullable<OidcApiKeyOptions['clearTimer']>;
  private readonly now: () => number;
  /** Why the last refresh failed (its message names no secret), cleared by the next success. */
  lastError: Error | undefined;
  /** Tokens handed to the connections so far, the first included. */
  refreshes = 0;

  constructor(creds: ClientCredentials, opts: OidcApiKeyOptions = {}) {
    this.source = new OidcTokenSource(creds, opts);
    this.setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = opts.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
    this.now = opts.now ?? Date.now;
  }

  /** Fetches the first token (before any connection is made) and starts refreshing. */
  async start(): Promise<string> {
    const first = await this.source.fresh();
    this.token = first.token;
    this.refreshes++;
    this.schedule(first.refreshAt - this.now());
    return first.token;
  }

  /** The token to send now (Connection's `apiKey` function). */
  current(): string {
    if (this.token === undefined) throw new Error('OidcApiKey.current() before start()');
    return this.token;
  }

  /** Called with every new token (NativeConnection.setApiKey). */
  onRefresh(fn: (token: string) => unknown): void {
    this.listeners.push(fn);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    const t = this.setTimer(() => void this.refresh(), Math.max(0, ms)) as { unref?(): unknown };
    // A refresh timer alone never keeps a process alive.
    t.unref?.();
    this.timer = t;
  }

  private async refresh(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    try {
      const next = await this.source.fresh();
      if (this.stopped) return;
      this.token = next.token;
      this.refreshes++;
      this.lastError = undefined;
      this.retryMs = RETRY_FIRST_MS;
      for (const fn of this.listeners) await Promise.resolve(fn(next.token)).catch(() => undefined);
      this.schedule(next.refreshAt - this.now());
    } catch (e) {
      this.lastError = e as Error;
      this.schedule(this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    }
  }
}
