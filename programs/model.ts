// The built-in model: a character-level neural language model in the style of Bengio et al. (2003),
// "A Neural Probabilistic Language Model". It reads the previous `context` characters, looks each up
// in a learned embedding table, concatenates the embeddings, passes them through one tanh hidden
// layer, and gives a softmax over the vocabulary for the next character. Trained by minibatch SGD
// (programs/training.ts). Pure TypeScript on Float32Arrays: with the default shape (~14k parameters,
// batch 64) a step takes a few milliseconds on one core, the loss falls visibly within a few hundred
// steps, and after a couple of thousand the samples read like (misspelt) English.
//
// All parameters live in one Float32Array (`params`) so that the optimizer, the checkpoint and the
// gradient are each a single flat vector; `layout()` names the slices. docs/checkpoint-format.md
// describes how they are stored.
import { Rng } from './rng.js';

export interface ModelConfig {
  /** The characters the model knows, in index order (index = token id). */
  vocab: string[];
  /** How many previous characters the model sees. */
  context: number;
  /** Embedding width per character. */
  embed: number;
  /** Hidden-layer width. */
  hidden: number;
}

export interface Slice {
  name: 'embedding' | 'w1' | 'b1' | 'w2' | 'b2';
  offset: number;
  shape: [number, number] | [number];
}

/** The parameter slices in storage order: embedding [V,E], w1 [H, k·E], b1 [H], w2 [V,H], b2 [V]. */
export function layout(c: ModelConfig): Slice[] {
  const V = c.vocab.length;
  const inDim = c.context * c.embed;
  const shapes: [Slice['name'], Slice['shape']][] = [
    ['embedding', [V, c.embed]],
    ['w1', [c.hidden, inDim]],
    ['b1', [c.hidden]],
    ['w2', [V, c.hidden]],
    ['b2', [V]],
  ];
  let offset = 0;
  return shapes.map(([name, shape]) => {
    const s: Slice = { name, offset, shape };
    offset += shape.reduce((a, b) => a * b, 1);
    return s;
  });
}

export function parameterCount(c: ModelConfig): number {
  const last = layout(c).at(-1)!;
  return last.offset + last.shape.reduce((a, b) => a * b, 1);
}

/** The hyper-parameters the built-in trainer uses unless told otherwise. */
export const DEFAULT_SHAPE = { embed: 16, hidden: 64 } as const;

export class CharModel {
  readonly V: number;
  readonly k: number;
  readonly E: number;
  readonly H: number;
  readonly inDim: number;
  private readonly oEmb: number;
  private readonly oW1: number;
  private readonly oB1: number;
  private readonly oW2: number;
  private readonly oB2: number;
  /** Which token stands for "before the text starts" (a newline, so a prompt begins like a paragraph). */
  readonly pad: number;
  private readonly index: Map<string, number>;
  // Scratch buffers, reused by every call (the model is single-threaded).
  private readonly a0: Float32Array;
  private readonly da0: Float32Array;
  private readonly hid: Float32Array;
  private readonly dh: Float32Array;
  private readonly logits: Float32Array;

  constructor(
    readonly config: ModelConfig,
    readonly params: Float32Array,
  ) {
    this.V = config.vocab.length;
    this.k = config.context;
    this.E = config.embed;
    this.H = config.hidden;
    this.inDim = this.k * this.E;
    if (params.length !== parameterCount(config)) throw new Error(`model has ${params.length} parameters, its configuration needs ${parameterCount(config)}`);
    const [emb, w1, b1, w2, b2] = layout(config);
    this.oEmb = emb!.offset;
    this.oW1 = w1!.offset;
    this.oB1 = b1!.offset;
    this.oW2 = w2!.offset;
    this.oB2 = b2!.offset;
    this.index = new Map(config.vocab.map((ch, i) => [ch, i]));
    this.pad = this.index.get('\n') ?? this.index.get(' ') ?? 0;
    this.a0 = new Float32Array(this.inDim);
    this.da0 = new Float32Array(this.inDim);
    this.hid = new Float32Array(this.H);
    this.dh = new Float32Array(this.H);
    this.logits = new Float32Array(this.V);
  }

  /** Fresh weights: embeddings uniform in [-1, 1], layers Xavier-uniform, biases zero. */
  static init(config: ModelConfig, rng: Rng): CharModel {
    const params = new Float32Array(parameterCount(config));
    for (const s of layout(config)) {
      if (s.shape.length === 1) continue; // biases start at zero
      const [rows, cols] = s.shape as [number, number];
      const bound = s.name === 'embedding' ? 1 : Math.sqrt(6 / (rows + cols));
      for (let i = 0; i < rows * cols; i++) params[s.offset + i] = (rng.next() * 2 - 1) * bound;
    }
    return new CharModel(config, params);
  }

  /** Token ids of a text; characters outside the vocabulary become a space (or the padding token). */
  encode(text: string): number[] {
    const space = this.index.get(' ') ?? this.pad;
    return Array.from(text, (ch) => this.index.get(ch) ?? space);
  }

  decode(ids: readonly number[]): string {
    return ids.map((i) => this.config.vocab[i] ?? '').join('');
  }

  /** The last `k` ids of `ids` (left-padded), as the model's input window. */
  window(ids: readonly number[]): Int32Array {
    const w = new Int32Array(this.k).fill(this.pad);
    const n = Math.min(this.k, ids.length);
    for (let j = 0; j < n; j++) w[this.k - n + j] = ids[ids.length - n + j]!;
    return w;
  }

  /** Forward pass for one window (at `ctx[off..off+k)`); fills this.hid and this.logits. */
  private forward(ctx: Int32Array, off: number): void {
    const { params: p, E, H, inDim, V, a0, hid, logits } = this;
    for (let j = 0; j < this.k; j++) {
      const src = this.oEmb + ctx[off + j]! * E;
      for (let e = 0; e < E; e++) a0[j * E + e] = p[src + e]!;
    }
    for (let h = 0; h < H; h++) {
      let z = p[this.oB1 + h]!;
      const row = this.oW1 + h * inDim;
      for (let j = 0; j < inDim; j++) z += p[row + j]! * a0[j]!;
      hid[h] = Math.tanh(z);
    }
    for (let v = 0; v < V; v++) {
      let z = p[this.oB2 + v]!;
      const row = this.oW2 + v * H;
      for (let h = 0; h < H; h++) z += p[row + h]! * hid[h]!;
      logits[v] = z;
    }
  }

  /** Next-character logits for a context (the text so far, as ids). A copy, safe to keep. */
  nextLogits(ids: readonly number[]): Float32Array {
    this.forward(this.window(ids), 0);
    return Float32Array.from(this.logits);
  }

  /**
   * Mean cross-entropy and accuracy over a batch of windows `xs` (B·k ids) with targets `ys`; when
   * `grad` is given, adds the gradient of the mean loss into it (same layout as params).
   */
  lossAndGrad(xs: Int32Array, ys: Int32Array, grad?: Float32Array): { loss: number; accuracy: number } {
    const { params: p, E, H, inDim, V, a0, da0, hid, dh, logits } = this;
    const B = ys.length;
    let loss = 0;
    let correct = 0;
    for (let b = 0; b < B; b++) {
      this.forward(xs, b * this.k);
      const y = ys[b]!;
      let max = -Infinity;
      let arg = 0;
      for (let v = 0; v < V; v++)
        if (logits[v]! > max) {
          max = logits[v]!;
          arg = v;
        }
      let sum = 0;
      for (let v = 0; v < V; v++) {
        const e = Math.exp(logits[v]! - max);
        logits[v] = e;
        sum += e;
      }
      loss -= Math.log(Math.max(logits[y]! / sum, 1e-30));
      if (arg === y) correct++;
      if (!grad) continue;
      // dL/dlogit = (softmax - onehot) / B
      dh.fill(0);
      da0.fill(0);
      for (let v = 0; v < V; v++) {
        const d = (logits[v]! / sum - (v === y ? 1 : 0)) / B;
        grad[this.oB2 + v] = grad[this.oB2 + v]! + d;
        const row = this.oW2 + v * H;
        for (let h = 0; h < H; h++) {
          grad[row + h] = grad[row + h]! + d * hid[h]!;
          dh[h] = dh[h]! + d * p[row + h]!;
        }
      }
      for (let h = 0; h < H; h++) {
        const dz = dh[h]! * (1 - hid[h]! * hid[h]!);
        if (dz === 0) continue;
        grad[this.oB1 + h] = grad[this.oB1 + h]! + dz;
        const row = this.oW1 + h * inDim;
        for (let j = 0; j < inDim; j++) {
          grad[row + j] = grad[row + j]! + dz * a0[j]!;
          da0[j] = da0[j]! + dz * p[row + j]!;
        }
      }
      // The input's gradient goes to the embedding rows of this window's characters.
      for (let j = 0; j < this.k; j++) {
        const dst = this.oEmb + xs[b * this.k + j]! * E;
        for (let e = 0; e < E; e++) grad[dst + e] = grad[dst + e]! + da0[j * E + e]!;
      }
    }
    return { loss: loss / B, accuracy: correct / B };
  }
}

/**
 * One step of minibatch stochastic gradient descent: `params -= lr · grad`, with the gradient's
 * global norm clipped to `clip` first (an unlucky batch cannot blow the weights up), then `grad`
 * zeroed for the next batch. Plain SGD keeps no optimizer state, so a checkpoint's weights and the
 * RNG state are all a resumed run needs to continue exactly.
 */
export function sgdStep(params: Float32Array, grad: Float32Array, lr: number, clip = 5): void {
  let norm = 0;
  for (let i = 0; i < grad.length; i++) norm += grad[i]! * grad[i]!;
  norm = Math.sqrt(norm);
  const step = norm > clip ? (lr * clip) / norm : lr;
  for (let i = 0; i < params.length; i++) {
    params[i] = params[i]! - step * grad[i]!;
    grad[i] = 0;
  }
}

export const WEIGHTS_FORMAT = 'tandem-charlm/1';

/** weights.json in a checkpoint: everything the server needs to rebuild the model. */
export interface WeightsFile {
  format: typeof WEIGHTS_FORMAT;
  architecture: 'char-mlp';
  config: ModelConfig;
  layout: Slice[];
  parameters: number;
  dtype: 'float32';
  byteOrder: 'little';
  /** The parameter vector, float32 little-endian, base64. */
  data: string;
}

export function weightsJson(m: CharModel): string {
  const buf = Buffer.alloc(m.params.length * 4);
  for (let i = 0; i < m.params.length; i++) buf.writeFloatLE(m.params[i]!, i * 4);
  const file: WeightsFile = { format: WEIGHTS_FORMAT, architecture: 'char-mlp', config: m.config, layout: layout(m.config), parameters: m.params.length, dtype: 'float32', byteOrder: 'little', data: buf.toString('base64') };
  return JSON.stringify(file);
}

export function modelFromWeights(text: string): CharModel {
  const f = JSON.parse(text) as WeightsFile;
  if (f.format !== WEIGHTS_FORMAT) throw new Error(`weights.json is not ${WEIGHTS_FORMAT} (format ${JSON.stringify(f.format)})`);
  const buf = Buffer.from(f.data, 'base64');
  if (buf.length !== f.parameters * 4) throw new Error(`weights.json holds ${buf.length} bytes of parameters, expected ${f.parameters * 4}`);
  const params = new Float32Array(f.parameters);
  for (let i = 0; i < f.parameters; i++) params[i] = buf.readFloatLE(i * 4);
  return new CharModel(f.config, params);
}

export interface SampleOptions {
  /** 0 = greedy (argmax). */
  temperature: number;
  /** Nucleus sampling: keep the smallest set of tokens whose probability reaches top_p. */
  topP: number;
}

/** Picks the next token from logits. Greedy when temperature is 0 (no randomness drawn). */
export function pickToken(logits: Float32Array, o: SampleOptions, rng: Rng): number {
  const V = logits.length;
  if (o.temperature === 0) {
    let arg = 0;
    for (let v = 1; v < V; v++) if (logits[v]! > logits[arg]!) arg = v;
    return arg;
  }
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[v]!);
  const probs = new Float64Array(V);
  let sum = 0;
  for (let v = 0; v < V; v++) {
    probs[v] = Math.exp((logits[v]! - max) / o.temperature);
    sum += probs[v]!;
  }
  let order = Array.from({ length: V }, (_, i) => i);
  if (o.topP < 1) {
    order.sort((a, b) => probs[b]! - probs[a]! || a - b);
    let acc = 0;
    let keep = 0;
    while (keep < V && acc < o.topP * sum) acc += probs[order[keep++]!]!;
    order = order.slice(0, Math.max(1, keep));
    sum = acc;
  }
  let r = rng.next() * sum;
  for (const v of order) {
    r -= probs[v]!;
    if (r < 0) return v;
  }
  return order.at(-1)!;
}
