// The built-in model server's HTTP side, shaped like vLLM's OpenAI-compatible server so that the same
// clients, readiness gates and dashboards work against it: GET /health (503 until the model is
// loaded), GET /v1/models, POST /v1/completions, POST /v1/chat/completions (both with stream: true as
// server-sent events ending in `data: [DONE]`), GET /metrics (Prometheus, vLLM's metric names).
// Separate from programs/serve.ts (the job program) so that it is tested in-process.
import { randomInt, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { generate, type Generation } from './generate.js';
import type { CharModel } from './model.js';
import { ApiError, MAX_MODEL_LEN, parseChat, parseCompletion, type SamplingRequest } from './openai-protocol.js';
import { Rng } from './rng.js';
import { ServingMetrics } from './serving-metrics.js';
import { parseJsonLimited } from '../contract/limits.js';

export interface ModelServerOptions {
  modelId: string;
  /** Where the weights come from (the checkpoint directory), shown as the model's `root`. */
  root: string;
}

const MAX_BODY = 1 << 20;
/** Generation yields to the event loop this often, so concurrent requests and /metrics interleave. */
const TOKENS_PER_TURN = 16;

const uuid = () => randomUUID().replace(/-/g, '');
const now = () => Math.floor(Date.now() / 1000);
const tokensOf = (s: string) => Array.from(s).length;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(400, `the request body is larger than ${MAX_BODY} bytes`);
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return parseJsonLimited(text);
  } catch (e) {
    throw new ApiError(400, `the request body is not valid JSON: ${(e as Error).message}`);
  }
}

/** One sequence to generate: its choice index and its prompt. */
interface Sequence {
  index: number;
  prompt: string;
}

export class ModelServer {
  readonly server: Server;
  readonly metrics: ServingMetrics;
  private model: CharModel | undefined;
  private readonly created = now();

  constructor(readonly options: ModelServerOptions) {
    this.metrics = new ServingMetrics(options.modelId, MAX_MODEL_LEN);
    this.server = createServer((req, res) => {
      this.route(req, res).catch((e: unknown) => {
        const err = e instanceof ApiError ? e : new ApiError(500, (e as Error).message, null, 'InternalServerError');
        if (res.headersSent) res.end();
        else sendJson(res, err.status, err.body());
      });
    });
  }

  /** The weights are in: /health turns 200 and the API answers. */
  load(model: CharModel): void {
    this.model = model;
  }

  get loaded(): boolean {
    return this.model !== undefined;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const routes: Record<string, Record<string, () => Promise<void> | void>> = {
      '/health': { GET: () => this.health(res) },
      '/metrics': { GET: () => this.scrape(res) },
      '/v1/models': { GET: () => this.models(res) },
      '/v1/completions': { POST: async () => this.completions(res, parseCompletion(await readJson(req))) },
      '/v1/chat/completions': { POST: async () => this.chat(res, parseChat(await readJson(req))) },
    };
    const route = routes[path];
    // FastAPI's answers for an unknown path or method, as vLLM gives them.
    if (!route) return sendJson(res, 404, { detail: 'Not Found' });
    const handler = route[req.method ?? 'GET'];
    if (!handler) return sendJson(res, 405, { detail: 'Method Not Allowed' });
    if (path.startsWith('/v1/') && !this.model) throw new ApiError(503, 'the model is still loading');
    await handler();
  }

  private health(res: ServerResponse): void {
    res.writeHead(this.model ? 200 : 503, { 'content-length': '0' });
    res.end();
  }

  private async scrape(res: ServerResponse): Promise<void> {
    const text = await this.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': this.metrics.registry.contentType });
    res.end(text);
  }

  private models(res: ServerResponse): void {
    const { modelId, root } = this.options;
    const permission = { id: `modelperm-${uuid()}`, object: 'model_permission', created: now(), allow_create_engine: false, allow_sampling: true, allow_logprobs: true, allow_search_indices: false, allow_view: true, allow_fine_tuning: false, organization: '*', group: null, is_blocking: false };
    sendJson(res, 200, { object: 'list', data: [{ id: modelId, object: 'model', created: this.created, owned_by: 'tandem', root, parent: null, max_model_len: MAX_MODEL_LEN, permission: [permission] }] });
  }

  private checkModel(model: string | undefined): void {
    if (model !== undefined && model !== this.options.modelId) throw new ApiError(404, `The model \`${model}\` does not exist.`, 'model');
  }

  private completions(res: ServerResponse, r: ReturnType<typeof parseCompletion>): Promise<void> {
    this.checkModel(r.model);
    const seqs = r.prompts.flatMap((prompt, p) => Array.from({ length: r.n }, (_, i) => ({ index: p * r.n + i, prompt })));
    const promptTokens = r.prompts.reduce((s, p) => s + tokensOf(p), 0);
    const head = { id: `cmpl-${uuid()}`, object: 'text_completion', created: now(), model: this.options.modelId };
    return this.run(res, r, seqs, promptTokens, {
      chunk: (index, text) => ({ ...head, choices: [{ index, text, logprobs: null, finish_reason: null, stop_reason: null }] }),
      start: (s) => (r.echo ? { ...head, choices: [{ index: s.index, text: s.prompt, logprobs: null, finish_reason: null, stop_reason: null }] } : undefined),
      end: (index, g) => ({ ...head, choices: [{ index, text: '', logprobs: null, finish_reason: g.finishReason, stop_reason: g.stopReason }] }),
      usage: (usage) => ({ ...head, choices: [], usage }),
      whole: (done, usage) => ({ ...head, choices: done.map(({ s, g }) => ({ index: s.index, text: (r.echo ? s.prompt : '') + g.text, logprobs: null, finish_reason: g.finishReason, stop_reason: g.stopReason, prompt_logprobs: null })), usage }),
    });
  }

  private chat(res: ServerResponse, r: ReturnType<typeof parseChat>): Promise<void> {
    this.checkModel(r.model);
    const seqs = Array.from({ length: r.n }, (_, index) => ({ index, prompt: r.prompt }));
    const head = { id: `chatcmpl-${uuid()}`, object: 'chat.completion.chunk', created: now(), model: this.options.modelId };
    return this.run(res, r, seqs, tokensOf(r.prompt), {
      start: (s) => ({ ...head, choices: [{ index: s.index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] }),
      chunk: (index, content) => ({ ...head, choices: [{ index, delta: { content }, logprobs: null, finish_reason: null }] }),
      end: (index, g) => ({ ...head, choices: [{ index, delta: {}, logprobs: null, finish_reason: g.finishReason, stop_reason: g.stopReason }] }),
      usage: (usage) => ({ ...head, choices: [], usage }),
      whole: (done, usage) => ({
        ...head,
        object: 'chat.completion',
        choices: done.map(({ s, g }) => ({ index: s.index, message: { role: 'assistant', content: g.text, tool_calls: [] }, logprobs: null, finish_reason: g.finishReason, stop_reason: g.stopReason })),
        usage,
      }),
    });
  }

  /**
   * Generates every sequence of a request, in order, from one RNG (seeded by the request's `seed`,
   * so the same request gives the same text), streaming chunks or answering once at the end.
   */
  private async run(res: ServerResponse, r: SamplingRequest, seqs: Sequence[], promptTokens: number, shape: Shape): Promise<void> {
    const model = this.model!;
    const rng = new Rng(r.seed === undefined ? randomInt(2 ** 32) : Number(BigInt.asUintN(32, BigInt(r.seed))));
    const timer = this.metrics.request({ n: r.n, maxTokens: r.maxTokens });
    let closed = false;
    res.on('close', () => {
      closed = !res.writableFinished;
    });
    const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    try {
      if (r.stream) res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const done: { s: Sequence; g: Generation }[] = [];
      let turn = 0;
      for (const s of seqs) {
        timer.sequence();
        const first = r.stream ? shape.start(s) : undefined;
        if (first) send(first);
        const gen = generate(model, s.prompt, r, rng);
        for (;;) {
          const step = gen.next();
          if (step.done) {
            done.push({ s, g: step.value });
            if (r.stream) send(shape.end(s.index, step.value));
            break;
          }
          timer.token();
          if (r.stream && step.value) send(shape.chunk(s.index, step.value));
          if (++turn % TOKENS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
          if (closed) return timer.abort(); // the client went away: stop generating for it
        }
      }
      const completion = done.reduce((n, d) => n + d.g.tokens, 0);
      const usage = { prompt_tokens: promptTokens, total_tokens: promptTokens + completion, completion_tokens: completion, prompt_tokens_details: null };
      timer.finish({ promptTokens, generationTokens: completion, finishReasons: done.map((d) => d.g.finishReason) });
      if (!r.stream) return sendJson(res, 200, shape.whole(done, usage));
      if (r.includeUsage) send(shape.usage(usage));
      res.end('data: [DONE]\n\n');
    } finally {
      timer.abort(); // no-op once finished
    }
  }
}

interface Shape {
  start(s: Sequence): unknown;
  chunk(index: number, text: string): unknown;
  end(index: number, g: Generation): unknown;
  usage(usage: unknown): unknown;
  whole(done: { s: Sequence; g: Generation }[], usage: unknown): unknown;
}
