// The request side of vLLM's OpenAI-compatible API, for the built-in server: what /v1/completions and
// /v1/chat/completions accept, checked field by field, and errors in vLLM's shape
// ({"error": {"message", "type", "param", "code"}}) naming the field at fault. Fields this server does
// not implement are refused by name rather than silently ignored when they would change the answer.
import type { GenerateParams } from './generate.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly type = status === 404 ? 'NotFoundError' : status === 503 ? 'ServiceUnavailableError' : 'BadRequestError',
  ) {
    super(message);
  }

  body(): { error: { message: string; type: string; param: string | null; code: number } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.status } };
  }
}

/** Prompt plus completion, in tokens (characters), that one request may span. */
export const MAX_MODEL_LEN = 2048;
/** vLLM's default max_tokens for /v1/completions. */
export const DEFAULT_COMPLETION_TOKENS = 16;
export const MAX_N = 16;

export interface SamplingRequest extends GenerateParams {
  n: number;
  seed: number | undefined;
  stream: boolean;
  includeUsage: boolean;
}

export interface CompletionRequest extends SamplingRequest {
  model: string | undefined;
  prompts: string[];
  echo: boolean;
}

export interface ChatRequest extends SamplingRequest {
  model: string | undefined;
  /** The messages rendered by the chat template (each message's text, then a blank line). */
  prompt: string;
}

type Body = Record<string, unknown>;

const bad = (param: string, message: string) => new ApiError(400, `${param}: ${message}`, param);
const isSet = (v: unknown) => v !== undefined && v !== null;

function int(body: Body, name: string, min: number, max: number): number | undefined {
  const v = body[name];
  if (!isSet(v)) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw bad(name, `must be an integer, got ${JSON.stringify(v)}`);
  if (v < min || v > max) throw bad(name, `must be from ${min} to ${max}, got ${v}`);
  return v;
}

function num(body: Body, name: string, ok: (v: number) => boolean, rule: string): number | undefined {
  const v = body[name];
  if (!isSet(v)) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) throw bad(name, `${rule}, got ${JSON.stringify(v)}`);
  return v;
}

function bool(body: Body, name: string): boolean | undefined {
  const v = body[name];
  if (!isSet(v)) return undefined;
  if (typeof v !== 'boolean') throw bad(name, `must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function stops(body: Body): string[] {
  const v = body.stop;
  if (!isSet(v)) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string')) throw bad('stop', 'must be a string or a list of strings');
  return (list as string[]).filter((s) => s.length > 0);
}

function unsupported(body: Body, names: string[]): void {
  for (const n of names) if (isSet(body[n]) && body[n] !== false && body[n] !== 0) throw bad(n, 'is not supported by this server');
}

function sampling(body: Body, promptTokens: number, defaultMax: number, maxName = 'max_tokens'): SamplingRequest {
  const maxTokens = int(body, maxName, 1, MAX_MODEL_LEN) ?? Math.max(1, defaultMax);
  if (promptTokens + maxTokens > MAX_MODEL_LEN) {
    throw new ApiError(400, `This model's maximum context length is ${MAX_MODEL_LEN} tokens. However, you requested ${promptTokens + maxTokens} tokens (${promptTokens} in the prompt, ${maxTokens} in the completion). Please reduce the length of the prompt or completion.`, maxName);
  }
  const so = body.stream_options;
  if (isSet(so) && (typeof so !== 'object' || Array.isArray(so))) throw bad('stream_options', 'must be an object');
  const stream = bool(body, 'stream') ?? false;
  if (isSet(so) && !stream) throw bad('stream_options', 'is only allowed when stream is true');
  const includeUsage = isSet(so) ? bool(so as Body, 'include_usage') ?? true : false;
  return {
    maxTokens,
    temperature: num(body, 'temperature', (v) => v >= 0, 'must be a non-negative number') ?? 1,
    topP: num(body, 'top_p', (v) => v > 0 && v <= 1, 'must be in (0, 1]') ?? 1,
    stop: stops(body),
    n: int(body, 'n', 1, MAX_N) ?? 1,
    seed: int(body, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    stream,
    includeUsage,
  };
}

function object(body: unknown): Body {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError(400, 'the request body must be a JSON object');
  return body as Body;
}

function modelField(body: Body): string | undefined {
  const m = body.model;
  if (!isSet(m)) return undefined;
  if (typeof m !== 'string') throw bad('model', 'must be a string');
  return m;
}

export function parseCompletion(raw: unknown): CompletionRequest {
  const body = object(raw);
  const p = body.prompt;
  if (!isSet(p)) throw bad('prompt', 'is required');
  const prompts = typeof p === 'string' ? [p] : p;
  if (!Array.isArray(prompts) || prompts.length === 0 || prompts.some((x) => typeof x !== 'string')) throw bad('prompt', 'must be a string or a non-empty list of strings');
  unsupported(body, ['logprobs', 'suffix', 'best_of', 'logit_bias']);
  const longest = Math.max(...(prompts as string[]).map((s) => Array.from(s).length));
  return { model: modelField(body), prompts: prompts as string[], echo: bool(body, 'echo') ?? false, ...sampling(body, longest, DEFAULT_COMPLETION_TOKENS) };
}

/** The chat template: the text of each message followed by a blank line (the corpus's paragraph break). */
export function renderChat(messages: { role: string; content: string }[]): string {
  return messages.map((m) => `${m.content}\n\n`).join('');
}

export function parseChat(raw: unknown): ChatRequest {
  const body = object(raw);
  const msgs = body.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) throw bad('messages', 'must be a non-empty list of messages');
  const messages = msgs.map((m: unknown, i) => {
    if (m === null || typeof m !== 'object') throw bad(`messages[${i}]`, 'must be an object with role and content');
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || !['system', 'user', 'assistant', 'developer', 'tool'].includes(role)) throw bad(`messages[${i}].role`, `must be one of system, user, assistant, developer, tool; got ${JSON.stringify(role)}`);
    if (typeof content === 'string') return { role, content };
    // The OpenAI content-part form: only text parts mean something to a character model.
    if (Array.isArray(content) && content.every((c) => c && typeof c === 'object' && (c as Body).type === 'text' && typeof (c as Body).text === 'string')) {
      return { role, content: content.map((c) => (c as { text: string }).text).join('') };
    }
    throw bad(`messages[${i}].content`, 'must be a string or a list of text parts');
  });
  unsupported(body, ['logprobs', 'top_logprobs', 'tools', 'logit_bias', 'response_format']);
  const prompt = renderChat(messages);
  const promptTokens = Array.from(prompt).length;
  const maxName = isSet(body.max_completion_tokens) ? 'max_completion_tokens' : 'max_tokens';
  // Like vLLM, a chat completion may use what the context leaves when max_tokens is not given.
  return { model: modelField(body), prompt, ...sampling(body, promptTokens, MAX_MODEL_LEN - promptTokens, maxName) };
}
