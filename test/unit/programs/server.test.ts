// The built-in model server (programs/openai-server.ts) over real HTTP on loopback, in-process, with a
// model trained for a few hundred steps: every endpoint, vLLM's response and error shapes, server-sent
// events, seed reproducibility, and the Prometheus metrics moving with the traffic.
import type { AddressInfo } from 'node:net';
import { ModelServer } from '../../../programs/openai-server.js';
import { MAX_MODEL_LEN } from '../../../programs/openai-protocol.js';
import { trainedModel } from './fixtures.js';

const MODEL = 'tandem/test-charlm';
let app: ModelServer;
let url: string;

beforeAll(async () => {
  trainedModel(); // trained up front: training blocks the event loop, which would drop kept-alive connections
  app = new ModelServer({ modelId: MODEL, root: '/ck/step-00000300' });
  await new Promise<void>((r) => app.server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => app.server.close(r)));

const post = async (path: string, body: unknown) => {
  const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};
const json = async (path: string, body: unknown) => {
  const r = await post(path, body);
  return { status: r.status, body: JSON.parse(r.text) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
};
/** Parses a server-sent event stream: the JSON chunks, and whether it ended with [DONE]. */
function sse(text: string): { chunks: Record<string, any>[]; done: boolean } { // eslint-disable-line @typescript-eslint/no-explicit-any
  const events = text.split('\n\n').filter(Boolean);
  expect(events.every((e) => e.startsWith('data: '))).toBe(true);
  const done = events.at(-1) === 'data: [DONE]';
  return { chunks: events.slice(0, done ? -1 : undefined).map((e) => JSON.parse(e.slice(6))), done };
}
async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`model_name="${MODEL}"`));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}

test('before the weights are loaded: /health and the API answer 503, /metrics answers', async () => {
  expect((await fetch(`${url}/health`)).status).toBe(503);
  const r = await json('/v1/completions', { prompt: 'x' });
  expect(r).toEqual({ status: 503, body: { error: { message: 'the model is still loading', type: 'ServiceUnavailableError', param: null, code: 503 } } });
  expect((await fetch(`${url}/metrics`)).status).toBe(200);
  app.load(trainedModel());
  expect((await fetch(`${url}/health`)).status).toBe(200);
});

test('/v1/models lists the model in vLLM\'s shape', async () => {
  const body = (await (await fetch(`${url}/v1/models`)).json()) as Record<string, unknown>;
  expect(body).toEqual({
    object: 'list',
    data: [{ id: MODEL, object: 'model', created: expect.any(Number), owned_by: 'tandem', root: '/ck/step-00000300', parent: null, max_model_len: MAX_MODEL_LEN, permission: [expect.objectContaining({ object: 'model_permission', allow_sampling: true, organization: '*' })] }],
  });
});

test('a completion: text_completion with usage counted in characters; max_tokens defaults to 16', async () => {
  const r = await json('/v1/completions', { model: MODEL, prompt: 'It is a truth', max_tokens: 30, seed: 1 });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ id: expect.stringMatching(/^cmpl-[0-9a-f]{32}$/), object: 'text_completion', model: MODEL, usage: { prompt_tokens: 13, completion_tokens: 30, total_tokens: 43 } });
  expect(r.body.choices).toEqual([{ index: 0, text: expect.any(String), logprobs: null, finish_reason: 'length', stop_reason: null, prompt_logprobs: null }]);
  expect(Array.from(r.body.choices[0].text as string)).toHaveLength(30);
  const d = await json('/v1/completions', { prompt: 'Elizabeth' });
  expect(d.body.usage.completion_tokens).toBe(16);
});

test('seed makes sampling reproducible; temperature 0 is greedy whatever the seed', async () => {
  const ask = async (o: object) => (await json('/v1/completions', { prompt: 'Mr. Bennet', max_tokens: 50, ...o })).body.choices[0].text as string;
  expect(await ask({ seed: 7 })).toBe(await ask({ seed: 7 }));
  expect(await ask({ seed: 7 })).not.toBe(await ask({ seed: 8 }));
  expect(await ask({ temperature: 0, seed: 1 })).toBe(await ask({ temperature: 0, seed: 2 }));
});

test('n, several prompts, echo and stop', async () => {
  const r = await json('/v1/completions', { prompt: ['Jane', 'Lydia'], n: 2, max_tokens: 10, seed: 3, echo: true });
  expect(r.body.choices.map((c: { index: number }) => c.index)).toEqual([0, 1, 2, 3]);
  expect(r.body.choices[1].text).toMatch(/^Jane/);
  expect(r.body.choices[2].text).toMatch(/^Lydia/);
  expect(r.body.usage).toEqual({ prompt_tokens: 9, completion_tokens: 40, total_tokens: 49, prompt_tokens_details: null });
  const free = (await json('/v1/completions', { prompt: 'Elizabeth', max_tokens: 100, temperature: 0 })).body.choices[0].text as string;
  const stop = free.slice(5, 8);
  const s = await json('/v1/completions', { prompt: 'Elizabeth', max_tokens: 100, temperature: 0, stop });
  expect(s.body.choices[0]).toMatchObject({ text: free.slice(0, free.indexOf(stop)), finish_reason: 'stop', stop_reason: stop });
});

test('stream: server-sent text_completion chunks, then usage, then [DONE]; the same text as without streaming', async () => {
  const req = { prompt: 'Mr. Darcy', max_tokens: 40, seed: 11 };
  const whole = (await json('/v1/completions', req)).body.choices[0].text as string;
  const r = await post('/v1/completions', { ...req, stream: true, stream_options: { include_usage: true } });
  expect(r.type).toMatch(/^text\/event-stream/);
  const { chunks, done } = sse(r.text);
  expect(done).toBe(true);
  expect(chunks.every((c) => c.object === 'text_completion' && c.model === MODEL && c.id === chunks[0]!.id)).toBe(true);
  const texts = chunks.slice(0, -1).flatMap((c) => c.choices.map((x: { text: string }) => x.text));
  expect(texts.join('')).toBe(whole);
  expect(chunks.at(-2)!.choices[0]).toMatchObject({ finish_reason: 'length' });
  expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 40, total_tokens: 49 } });
});

test('chat completions, whole and streamed (chat.completion.chunk deltas, the role first)', async () => {
  const req = { model: MODEL, messages: [{ role: 'system', content: 'A novel.' }, { role: 'user', content: [{ type: 'text', text: 'Mr. Darcy' }] }], max_tokens: 24, seed: 5 };
  const r = await json('/v1/chat/completions', req);
  expect(r.body).toMatchObject({ id: expect.stringMatching(/^chatcmpl-/), object: 'chat.completion', usage: { prompt_tokens: 'A novel.\n\nMr. Darcy\n\n'.length, completion_tokens: 24 } });
  expect(r.body.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: expect.any(String) }, finish_reason: 'length' });
  const { chunks, done } = sse((await post('/v1/chat/completions', { ...req, stream: true })).text);
  expect(done).toBe(true);
  expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
  expect(chunks[0]!.choices[0].delta).toEqual({ role: 'assistant', content: '' });
  expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(r.body.choices[0].message.content);
  expect(chunks.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' });
});

test('errors in the OpenAI shape, naming the field', async () => {
  const cases: [string, unknown, number, string | null, RegExp][] = [
    ['/v1/completions', { prompt: 'x', temperature: -1 }, 400, 'temperature', /non-negative/],
    ['/v1/completions', { prompt: 'x', max_tokens: 0 }, 400, 'max_tokens', /from 1 to/],
    ['/v1/completions', { prompt: 'x', top_p: 2 }, 400, 'top_p', /\(0, 1\]/],
    ['/v1/completions', { prompt: 'x', n: 1.5 }, 400, 'n', /integer/],
    ['/v1/completions', { prompt: 'x', stop: [1] }, 400, 'stop', /strings/],
    ['/v1/completions', { max_tokens: 3 }, 400, 'prompt', /required/],
    ['/v1/completions', { prompt: 'x', logprobs: 2 }, 400, 'logprobs', /not supported/],
    ['/v1/completions', { prompt: 'x', max_tokens: MAX_MODEL_LEN }, 400, 'max_tokens', /maximum context length is 2048 tokens/],
    ['/v1/completions', '{"prompt": ', 400, null, /not valid JSON/],
    ['/v1/completions', { prompt: 'x', model: 'gpt-4' }, 404, 'model', /The model `gpt-4` does not exist/],
    ['/v1/chat/completions', { messages: [] }, 400, 'messages', /non-empty/],
    ['/v1/chat/completions', { messages: [{ role: 'wizard', content: 'hi' }] }, 400, 'messages[0].role', /must be one of/],
  ];
  for (const [path, body, status, param, message] of cases) {
    const r = await json(path, body);
    expect({ status: r.status, param: r.body.error?.param, type: r.body.error?.type, code: r.body.error?.code }).toEqual({ status, param, type: status === 404 ? 'NotFoundError' : 'BadRequestError', code: status });
    expect(r.body.error.message).toMatch(message);
  }
  expect(await json('/v1/nothing', {})).toEqual({ status: 404, body: { detail: 'Not Found' } });
  expect((await fetch(`${url}/v1/completions`)).status).toBe(405);
});

test('/metrics: vLLM metric names, moving with the requests', async () => {
  const text = await (await fetch(`${url}/metrics`)).text();
  for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total', 'vllm:request_success_total', 'vllm:e2e_request_latency_seconds', 'vllm:time_to_first_token_seconds', 'vllm:inter_token_latency_seconds']) {
    expect(text).toContain(`# TYPE ${name} `);
  }
  expect(text).toMatch(/^vllm:e2e_request_latency_seconds_bucket\{le="0\.3",model_name="tandem\/test-charlm"\} \d+$/m);
  const before = { prompt: await metric('vllm:prompt_tokens_total'), gen: await metric('vllm:generation_tokens_total'), e2e: await metric('vllm:e2e_request_latency_seconds_count'), ttft: await metric('vllm:time_to_first_token_seconds_count') };
  await json('/v1/completions', { prompt: 'Kitty', max_tokens: 12, n: 2 });
  expect(await metric('vllm:prompt_tokens_total')).toBe(before.prompt + 5);
  expect(await metric('vllm:generation_tokens_total')).toBe(before.gen + 24);
  expect(await metric('vllm:e2e_request_latency_seconds_count')).toBe(before.e2e + 1);
  expect(await metric('vllm:time_to_first_token_seconds_count')).toBe(before.ttft + 1);
  expect(await metric('vllm:num_requests_running')).toBe(0);
});
