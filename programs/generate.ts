// Text generation from the character model: one character is one token. Sampling follows vLLM's
// parameters (temperature 0 = greedy, top_p nucleus, a seed for reproducible sampling, stop strings
// that end the text and are not part of it). The model has no end-of-text token, so a generation
// ends on a stop string or at max_tokens.
import { pickToken, type CharModel } from './model.js';
import type { Rng } from './rng.js';

export interface GenerateParams {
  maxTokens: number;
  temperature: number;
  topP: number;
  stop: string[];
}

export interface Generation {
  text: string;
  /** Tokens generated, including those of a stop string that ended the text (as vLLM counts them). */
  tokens: number;
  finishReason: 'stop' | 'length';
  /** The stop string that ended the text, or null. */
  stopReason: string | null;
}

/** How much of `text` can be shown without risking that a stop string, still being written, shows. */
function safeLength(text: string, stop: readonly string[]): number {
  let hold = 0;
  for (const s of stop)
    for (let n = Math.min(s.length - 1, text.length); n > hold; n--)
      if (text.endsWith(s.slice(0, n))) {
        hold = n;
        break;
      }
  return text.length - hold;
}

/**
 * Generates a continuation of `prompt`, one token per iteration: each yields the text that became
 * safe to show with that token (often all of it, '' while a possible stop string is held back,
 * never a part of a stop string); the return value is the whole generation.
 */
export function* generate(model: CharModel, prompt: string, p: GenerateParams, rng: Rng): Generator<string, Generation> {
  const ids = model.encode(prompt);
  let text = '';
  let shown = 0;
  for (let tokens = 1; tokens <= p.maxTokens; tokens++) {
    const next = pickToken(model.nextLogits(ids.slice(-model.k)), { temperature: p.temperature, topP: p.topP }, rng);
    ids.push(next);
    text += model.config.vocab[next]!;
    let hit: { at: number; stop: string } | undefined;
    for (const s of p.stop) {
      const at = text.indexOf(s, Math.max(0, shown - s.length));
      if (at >= 0 && (!hit || at < hit.at)) hit = { at, stop: s };
    }
    if (hit) {
      yield text.slice(shown, Math.max(shown, hit.at));
      return { text: text.slice(0, hit.at), tokens, finishReason: 'stop', stopReason: hit.stop };
    }
    const safe = tokens === p.maxTokens ? text.length : safeLength(text, p.stop);
    yield text.slice(shown, safe);
    shown = Math.max(shown, safe);
  }
  return { text, tokens: p.maxTokens, finishReason: 'length', stopReason: null };
}
