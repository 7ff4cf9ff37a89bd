// What a vLLM pod answers, per its container args (--model, --served-model-name) and the pod's
// fake.tandem.dev/vllm annotation: "ok", "dead" (/health 503: the engine died), "wrong-model"
// (/v1/models lists another id) or "bad-completion" (completions answer 500). It listens only after
// its boot delay, so probes are refused while "loading weights", as with the real server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type VllmBehaviour = 'ok' | 'dead' | 'wrong-model' | 'bad-completion';

export interface FakeVllm {
  port: number;
  close(): void;
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

export async function startFakeVllm(args: string[], behaviour: VllmBehaviour, podName: string): Promise<FakeVllm> {
  const weights = flag(args, '--model') ?? 'unknown';
  const served = flag(args, '--served-model-name') ?? weights;
  const listed = behaviour === 'wrong-model' ? `${served}-other` : served;
  const server: Server = createServer((req, res) => {
    const json = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(behaviour === 'dead' ? 503 : 200);
      return res.end();
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      return json(200, { object: 'list', data: [{ id: listed, object: 'model', owned_by: 'vllm', root: weights, max_model_len: 4096 }] });
    }
    if (req.method === 'POST' && req.url === '/v1/completions') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        let model: string | undefined;
        try {
          model = (JSON.parse(body) as { model?: string }).model;
        } catch {
          return json(400, { object: 'error', message: 'invalid JSON', type: 'BadRequestError', code: 400 });
        }
        if (model !== listed) return json(404, { object: 'error', message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', code: 404 });
        if (behaviour === 'bad-completion') return json(500, { object: 'error', message: 'EngineCore encountered an issue', type: 'InternalServerError', code: 500 });
        json(200, { id: `cmpl-${podName}`, object: 'text_completion', model: listed, choices: [{ index: 0, text: ` hello from ${served} (${weights}) on ${podName}`, finish_reason: 'length' }], usage: { prompt_tokens: 4, completion_tokens: 8, total_tokens: 12 } });
      });
      return;
    }
    json(404, { detail: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
