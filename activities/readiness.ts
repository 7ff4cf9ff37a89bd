// Readiness gates for a model endpoint, in vLLM's order: /health answers 200 (refused or 503 while
// the engine boots), /v1/models lists the expected id, then a smoke completion returns text.
import type { Context } from '@temporalio/activity';
import { failure } from '../contract/failures.js';
import type { ReadinessInput, ReadinessResult } from './types.js';
import { observeGate } from '../observe/activity-metrics.js';
import { parseJsonLimited } from '../contract/limits.js';

type Gate = 'health' | 'models' | 'completion';

async function fetchJson(url: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
  // Never a redirect: the gate dials the endpoint it was given (a local one only on the loopback),
  // not wherever the server sends it (a metadata service, a private address).
  const res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(5000) });
  if (res.status >= 300 && res.status < 400) return { status: res.status, body: 'a redirect, which gates do not follow' };
  const text = await res.text();
  let body: unknown = text;
  try {
    body = parseJsonLimited(text);
  } catch {
    /* not JSON: keep the text for the error message */
  }
  return { status: res.status, body };
}

export async function checkReadiness({ deployment, prompt, timeoutMs }: ReadinessInput, ctx: Pick<Context, 'heartbeat' | 'sleep'>): Promise<ReadinessResult> {
  const deadline = Date.now() + timeoutMs;
  let gate: Gate = 'health';
  let last = 'no answer yet';
  let models: string[] = [];
  for (;;) {
    try {
      if (gate === 'health') {
        const r = await fetchJson(`${deployment.endpoint}/health`);
        last = `/health answered ${r.status}${r.status >= 300 && r.status < 400 ? ' (a redirect, which gates do not follow)' : ''}`;
        if (r.status === 200) {
          observeGate('health', true);
          gate = 'models';
        }
      }
      if (gate === 'models') {
        const r = await fetchJson(`${deployment.endpoint}/v1/models`);
        models = ((r.body as { data?: { id: string }[] }).data ?? []).map((m) => m.id);
        last = `/v1/models answered ${r.status} listing [${models.join(', ')}]`;
        if (r.status === 200 && models.includes(deployment.model)) {
          observeGate('models', true);
          gate = 'completion';
        }
      }
      if (gate === 'completion') {
        const r = await fetchJson(`${deployment.endpoint}/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: deployment.model, prompt, max_tokens: 16 }),
        });
        const text = (r.body as { choices?: { text?: string }[] }).choices?.[0]?.text;
        if (r.status === 200 && typeof text === 'string' && text.trim().length > 0) {
          observeGate('completion', true);
          return { completion: text.trim(), models };
        }
        last = `smoke completion answered ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`;
      }
    } catch (e) {
      last = `${gate} check: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`;
    }
    ctx.heartbeat({ gate, last });
    if (Date.now() > deadline) {
      observeGate(gate, false);
      throw failure('GateFailed', `deployment ${deployment.name} not ready after ${Math.round(timeoutMs / 1000)}s: failed gate "${gate}" (${last})`);
    }
    await ctx.sleep(250);
  }
}
