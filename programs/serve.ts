// Built-in model server for the local runtime: a small OpenAI-compatible API (/health, /v1/models,
// /v1/completions) serving a trained checkpoint, shaped like vLLM's so the same readiness gates apply.
// Environment: TANDEM_CHECKPOINT (a checkpoint directory), TANDEM_MODEL_ID, TANDEM_ENDPOINT_FILE,
// TANDEM_PORT (0 = any free port), TANDEM_BOOT_DELAY_MS.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireEnv, numberEnv, writeJsonAtomic } from './env.js';
import { featurize, predict, type Weights } from './model.js';
import type { CheckpointManifest } from '../backends/checkpoints.js';

const checkpoint = requireEnv('TANDEM_CHECKPOINT');
const modelId = requireEnv('TANDEM_MODEL_ID');
const endpointFile = requireEnv('TANDEM_ENDPOINT_FILE');
const bootDelay = numberEnv('TANDEM_BOOT_DELAY_MS', 0);
const created = Math.floor(Date.now() / 1000);

let weights: Weights | undefined;
let manifest: CheckpointManifest | undefined;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
}

const server = createServer((req, res) => {
  void (async () => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/health') return weights ? send(res, 200, {}) : send(res, 503, { error: 'loading' });
    if (!weights || !manifest) return send(res, 503, { error: { message: 'model is loading', type: 'unavailable' } });
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      return send(res, 200, { object: 'list', data: [{ id: modelId, object: 'model', created, owned_by: 'tandem', root: checkpoint, step: manifest.step }] });
    }
    if (req.method === 'POST' && url.pathname === '/v1/completions') {
      const body = (await readBody(req)) as { model?: string; prompt?: string | string[] };
      if (body.model !== undefined && body.model !== modelId) {
        return send(res, 404, { error: { message: `The model \`${body.model}\` does not exist.`, type: 'NotFoundError', code: 404 } });
      }
      const prompts = Array.isArray(body.prompt) ? body.prompt : [body.prompt ?? ''];
      const choices = prompts.map((prompt, index) => {
        const p = predict(weights!, featurize(prompt, weights!.w.length));
        return { index, text: ` ${p >= 0.5 ? 'positive' : 'negative'} (p=${p.toFixed(3)}, ${modelId} @ step ${manifest!.step})`, logprobs: null, finish_reason: 'stop' };
      });
      const tokens = prompts.reduce((s, p) => s + p.split(/\s+/).filter(Boolean).length, 0);
      return send(res, 200, { id: `cmpl-${Date.now().toString(36)}`, object: 'text_completion', created: Math.floor(Date.now() / 1000), model: modelId, choices, usage: { prompt_tokens: tokens, completion_tokens: 8 * prompts.length, total_tokens: tokens + 8 * prompts.length } });
    }
    send(res, 404, { error: { message: `no route ${req.method} ${url.pathname}`, type: 'NotFoundError' } });
  })().catch((e: unknown) => send(res, 400, { error: { message: (e as Error).message, type: 'BadRequestError' } }));
});

server.listen(numberEnv('TANDEM_PORT', 0), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  writeJsonAtomic(endpointFile, { url: `http://127.0.0.1:${port}`, pid: process.pid });
  // Like vLLM, the server answers /health with 503 until the weights are loaded.
  setTimeout(() => {
    manifest = JSON.parse(readFileSync(join(checkpoint, 'manifest.json'), 'utf8')) as CheckpointManifest;
    weights = JSON.parse(readFileSync(join(checkpoint, 'weights.json'), 'utf8')) as Weights;
    console.log(`serve: ${modelId} from ${checkpoint} (step ${manifest.step}) on port ${port}`);
  }, bootDelay);
});

for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => server.close(() => process.exit(0)));
