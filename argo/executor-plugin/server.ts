// Tandem as an Argo Workflows executor plugin: the HTTP server the agent pod's sidecar runs
// (`tandem argo executor-plugin serve`). One method, `POST /api/v1/template.execute`; everything else
// is 404, which tells Argo's agent never to call that method again (workflow/util/plugins/plugin.go).
// A `plugin: {tandem: {pipeline: …}}` template starts (once) a hybrid pipeline on Temporal and each
// call reports it; templates of other plugins get `{}` ("not mine"). 403 on a wrong bearer token.
// Temporal unreachable is not an HTTP error: Argo's agent retries a 503 only five times (≈ 31 s) and then
// fails the node for good, so the node stays Running with a requeue and a message saying so, until
// Temporal has been unreachable for that node longer than `unreachableLimitMs`; then it is Failed.
// Runs reported as not final are watched against their Argo workflow (./watch.ts): a stopped or
// deleted workflow cancels them. The protocol's shapes and the mapping live in ./protocol.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import type { TandemClient } from '../../sdk/client.js';
import type { PipelineSpec } from '../../contract/pipeline.js';
import type { PipelineResult, PipelineStatus } from '../../contract/status.js';
import { InputError } from '../../contract/input-error.js';
import { EXECUTE_PATH, goDuration, parseArgs, readTemplate, replyFor, type ExecuteTemplateArgs, type ExecuteTemplateReply, type RunObservation } from './protocol.js';
import type { WorkflowWatch } from './watch.js';
import { errorChain, isTransientGrpc } from '../../contract/error-chain.js';
import { DEFAULTS } from '../../config/defaults.js';
import { parseJsonLimited } from '../../contract/limits.js';

/** The agent's HTTP client gives up after 30 s; a call here (two describes, the query, the result) must
 *  answer within that even when each is slow. */
const TEMPORAL_CALL_MS = 6_000;
/** The status query waits for a worker to replay the run; without one it is reported, not waited for. */
const QUERY_MS = 5_000;
/** Bodies are one template; anything this large is not from Argo's agent. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Temporal could not be reached or did not answer in time: the agent should ask again. */
export class TransientError extends Error {}

/** How the server starts and observes runs; the Temporal implementation is `temporalRuns`. */
export interface PluginRuns {
  /** Starts the run with this id unless one exists (running or closed); never starts a second. */
  ensure(id: string, spec: PipelineSpec): Promise<void>;
  observe(id: string): Promise<RunObservation>;
  /** Cancels the run (its compensations run); a run that already closed is left as it is. */
  cancel(id: string): Promise<void>;
}

function isTransient(e: unknown): boolean {
  return isTransientGrpc(e) || errorChain(e).some((l) => l.error instanceof TransientError);
}

/** Runs on Temporal through the SDK: one Tandem workflow per plugin node. */
export function temporalRuns(connect: () => Promise<TandemClient>): PluginRuns {
  let client: Promise<TandemClient> | undefined;
  const tandem = async (): Promise<TandemClient> => {
    client ??= connect().catch((e: unknown) => {
      client = undefined; // try again on the next call
      throw new TransientError((e as Error).message);
    });
    return client;
  };
  const withDeadline = async <T>(t: TandemClient, fn: () => Promise<T>, ms = TEMPORAL_CALL_MS): Promise<T> => t.client.connection.withDeadline(Date.now() + ms, fn);
  return {
    async ensure(id, spec) {
      const t = await tandem();
      try {
        await withDeadline(t, () => t.client.workflow.getHandle(id).describe());
        return; // already there, running or closed: never a second run
      } catch (e) {
        if (!(e instanceof WorkflowNotFoundError)) throw e;
      }
      try {
        // `once`: a concurrent call (two agent workers, a restarted agent) that got here too finds the
        // same run (USE_EXISTING), and a run that closed meanwhile is not run again (REJECT_DUPLICATE).
        await withDeadline(t, () => t.launch(spec, { id, once: true }));
      } catch (e) {
        if (e instanceof WorkflowExecutionAlreadyStartedError) return;
        throw e;
      }
    },
    async observe(id) {
      const t = await tandem();
      const h = t.client.workflow.getHandle(id);
      const desc = await withDeadline(t, () => h.describe());
      const o: RunObservation = { workflowId: id, execution: desc.status.name };
      // The status query needs a worker (it replays the run); without one the node stays non-final.
      try {
        o.status = await withDeadline(t, () => h.query<PipelineStatus>('status'), QUERY_MS);
      } catch (e) {
        o.queryError = (e as Error).message;
      }
      if (o.execution === 'COMPLETED') o.result = await withDeadline(t, () => h.result() as Promise<PipelineResult>);
      else if (o.execution !== 'RUNNING') {
        o.failure = await withDeadline(t, () => h.result()).then(
          () => undefined,
          (e: unknown) => (e instanceof WorkflowFailedError && e.cause ? e.cause.message : (e as Error).message),
        );
      } else if (o.status?.stage === 'train') {
        // Training progress between status updates: the watching activity's heartbeat.
        const handle = await t.get(id).catch(() => undefined);
        o.live = (await handle?.liveProgress().catch(() => undefined))?.progress;
      }
      return o;
    },
    async cancel(id) {
      const t = await tandem();
      const h = t.client.workflow.getHandle(id);
      if ((await withDeadline(t, () => h.describe())).status.name !== 'RUNNING') return;
      await withDeadline(t, () => h.cancel());
    },
  };
}

/** What one server remembers between calls. */
export interface ExecuteState {
  /** How long Temporal may stay unreachable for one node before the node fails. */
  unreachableLimitMs: number;
  /** When Temporal was first found unreachable for a run id (cleared by the next answer). */
  outages: Map<string, number>;
  /** Tracks runs reported as not final, so a stopped or deleted Argo workflow cancels them. */
  watch?: Pick<WorkflowWatch, 'track' | 'untrack'>;
  now?: () => number;
}

export function executeState(unreachableLimitMs: number, watch?: ExecuteState['watch']): ExecuteState {
  return { unreachableLimitMs, outages: new Map(), watch };
}

const FINAL = new Set(['Succeeded', 'Failed', 'Error']);

function track(state: ExecuteState, args: ExecuteTemplateArgs, id: string, reply: ExecuteTemplateReply): void {
  if (!state.watch) return;
  if (reply.node && FINAL.has(reply.node.phase)) return state.watch.untrack(id);
  const m = args.workflow.metadata;
  state.watch.track(id, { namespace: m.namespace ?? 'default', workflow: m.name, uid: m.uid, template: args.template.name, inputs: args.template.inputs?.parameters ?? [] });
}

/** "45s", "2m", "2m30s". */
function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
}

/** Answers one template.execute call. Bad input becomes a Failed node, never an HTTP error. */
export async function executeTemplate(body: unknown, runs: PluginRuns, state: ExecuteState = executeState(DEFAULTS.pluginUnreachableLimitMs)): Promise<{ status: number; reply: ExecuteTemplateReply | { error: string } }> {
  const args = parseArgs(body);
  if ('error' in args) return { status: 400, reply: args };
  const t = readTemplate(args);
  if (t.kind === 'foreign') return { status: 200, reply: {} };
  if (t.kind === 'invalid') return { status: 200, reply: { node: { phase: 'Failed', message: t.message } } };
  const now = state.now ?? Date.now;
  try {
    await runs.ensure(t.workflowId, t.spec);
    const reply = replyFor(await runs.observe(t.workflowId), t.requeueMs);
    state.outages.delete(t.workflowId);
    track(state, args, t.workflowId, reply);
    return { status: 200, reply };
  } catch (e) {
    if (isTransient(e)) {
      // Running with a requeue, not 503: the agent gives up on a 503 after ≈ 31 s and fails the node.
      const since = state.outages.get(t.workflowId) ?? now();
      const down = now() - since;
      const why = `Temporal is not reachable: ${(e as Error).message}`;
      if (down >= state.unreachableLimitMs) {
        // Still tracked: Argo stops asking about a Failed node, so the watch is what cancels the Tandem
        // run (every node of its workflow finished) once Temporal answers again.
        state.outages.delete(t.workflowId);
        return { status: 200, reply: { node: { phase: 'Failed', message: `Tandem run ${t.workflowId}: ${why} (for ${seconds(down)}, over the plugin's limit of ${seconds(state.unreachableLimitMs)})` } } };
      }
      state.outages.set(t.workflowId, since);
      track(state, args, t.workflowId, {});
      const reply: ExecuteTemplateReply = { node: { phase: 'Running', message: `Tandem run ${t.workflowId}: ${why} (for ${seconds(down)}; the node fails after ${seconds(state.unreachableLimitMs)}); asking again in ${goDuration(t.requeueMs)}` }, requeue: goDuration(t.requeueMs) };
      return { status: 200, reply };
    }
    // Refused by the SDK before anything started (an id, a deadline in the past, failover without Slurm).
    if (e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError) throw e; // a bug here: 500
    if (e instanceof InputError || !(e as { code?: unknown }).code) return { status: 200, reply: { node: { phase: 'Failed', message: (e as Error).message } } };
    throw e;
  }
}

const digest = (s: string) => createHash('sha256').update(s).digest();
/** Constant-time token check: equal-length digests, so neither content nor length leaks by timing. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const given = header?.startsWith('Bearer ') ? header.slice(7) : '';
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(c);
  }
  return parseJsonLimited(Buffer.concat(chunks).toString('utf8'));
}

export interface ExecutorPluginServerOptions {
  /** The agent's bearer token (Argo mounts it at /var/run/argo/token); read per request so a rotated file applies. */
  token: () => string;
  runs: PluginRuns;
  /** How long Temporal may be unreachable for one node before it fails (default DEFAULTS.pluginUnreachableLimitMs). */
  unreachableLimitMs?: number;
  /** Watches the runs' Argo workflows (cancels a run whose workflow was stopped or deleted). */
  watch?: WorkflowWatch;
  log?: (line: string) => void;
}

export function createExecutorPluginServer(opts: ExecutorPluginServerOptions): Server {
  const log = opts.log ?? (() => undefined);
  const state = executeState(opts.unreachableLimitMs ?? DEFAULTS.pluginUnreachableLimitMs, opts.watch);
  return createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'POST' || path !== EXECUTE_PATH) return send(res, 404, { error: `no method ${req.method} ${path}` });
      if (!tokenMatches(req.headers.authorization, opts.token())) return send(res, 403, { error: 'invalid bearer token' });
      let body: unknown;
      try {
        body = await readBody(req);
      } catch (e) {
        return send(res, 400, { error: `invalid request body: ${(e as Error).message}` });
      }
      const { status, reply } = await executeTemplate(body, opts.runs, state);
      const node = 'node' in reply ? reply.node : undefined;
      log(`${status} ${node ? `${node.phase}${node.progress ? ` ${node.progress}` : ''}: ${node.message ?? ''}` : JSON.stringify(reply)}`);
      send(res, status, reply);
    })().catch((e: unknown) => {
      log(`500 ${(e as Error).stack ?? String(e)}`);
      if (!res.headersSent) send(res, 500, { error: (e as Error).message });
    });
  });
}

/** Listens and resolves with the bound port (0 picks a free one). */
export async function listen(server: Server, port: number, host = '0.0.0.0'): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
