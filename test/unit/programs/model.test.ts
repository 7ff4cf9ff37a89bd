// The built-in character model and its training loop, in-process: gradients are right, the loss
// falls on the shipped corpus, training is deterministic given the seed, a run resumed from a
// checkpoint's files continues bit for bit as the uninterrupted run, and generation honours stop
// strings and seeds.
import { buildDataset } from '../../../programs/corpus.js';
import { generate, type GenerateParams } from '../../../programs/generate.js';
import { CharModel, modelFromWeights, parameterCount, weightsJson } from '../../../programs/model.js';
import { Rng } from '../../../programs/rng.js';
import { Trainer } from '../../../programs/training.js';
import { shippedDataset, TRAINED_STEPS, trainedModel, trainedRun } from './fixtures.js';

const run = (t: Trainer, steps: number) => {
  for (let i = 0; i < steps; i++) t.trainStep();
  return t;
};
const bytes = (m: CharModel) => Buffer.from(m.params.buffer).toString('base64');

test('the data set: sorted vocabulary of every character, the last tenth held out', () => {
  const d = shippedDataset();
  expect(d.meta.vocab).toEqual([...new Set(d.train + d.valid)].sort());
  expect(d.meta.split.trainChars + d.meta.split.validChars).toBe(d.meta.source.chars);
  expect(d.meta.split.validChars / d.meta.source.chars).toBeCloseTo(0.1, 2);
  expect(d.meta.source.sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(() => buildDataset('too short', { source: 'x.txt', context: 8, seed: 1, validWindows: 10 })).toThrow(/x\.txt has 9 characters; at least 1000/);
});

test('the analytic gradient matches finite differences', () => {
  const vocab = ['\n', ' ', 'a', 'b', 'c'];
  const m = CharModel.init({ vocab, context: 3, embed: 2, hidden: 4 }, new Rng(3));
  const xs = Int32Array.from([0, 2, 3, 1, 4, 2, 3, 3, 0]);
  const ys = Int32Array.from([4, 1, 2]);
  const grad = new Float32Array(m.params.length);
  m.lossAndGrad(xs, ys, grad);
  const eps = 1e-2;
  for (let i = 0; i < m.params.length; i++) {
    const keep = m.params[i]!;
    m.params[i] = keep + eps;
    const up = m.lossAndGrad(xs, ys).loss;
    m.params[i] = keep - eps;
    const down = m.lossAndGrad(xs, ys).loss;
    m.params[i] = keep;
    expect(Math.abs((up - down) / (2 * eps) - grad[i]!)).toBeLessThan(2e-3);
  }
  expect(m.params.length).toBe(parameterCount(m.config));
});

test(`the loss falls: held-out loss from about ln(V) to well below it in ${TRAINED_STEPS} steps`, () => {
  const { trainer: t, initialLoss, firstBatchLoss } = trainedRun();
  expect(initialLoss).toBeGreaterThan(0.9 * Math.log(t.model.V));
  const after = t.evaluate().loss;
  expect(after).toBeLessThan(initialLoss - 1.2);
  expect(after).toBeLessThan(3);
  expect(t.takeMeans().loss).toBeLessThan(firstBatchLoss);
});

test('training is deterministic given the seed, and the seed matters', () => {
  const o = { totalSteps: 50, learningRate: 0.5, batch: 16 };
  const a = run(Trainer.fresh(shippedDataset({ seed: 11 }), o), 30);
  const b = run(Trainer.fresh(shippedDataset({ seed: 11 }), o), 30);
  const c = run(Trainer.fresh(shippedDataset({ seed: 12 }), o), 30);
  expect(bytes(a.model)).toBe(bytes(b.model));
  expect(bytes(a.model)).not.toBe(bytes(c.model));
});

test("a run resumed from a checkpoint's files continues exactly as the uninterrupted run", () => {
  const data = shippedDataset();
  const o = { totalSteps: 60, learningRate: 1, batch: 16 };
  const straight = run(Trainer.fresh(data, o), 60);
  const first = run(Trainer.fresh(data, o), 30);
  const files = first.checkpointFiles();
  expect(Object.keys(files).sort()).toEqual(['state.json', 'weights.json']);
  const resumed = Trainer.resume(data, o, { weights: files['weights.json']!, state: files['state.json']! });
  expect(resumed.step).toBe(30);
  expect(resumed.options.batch).toBe(16);
  expect(resumed.learningRate()).toBe(first.learningRate());
  run(resumed, 30);
  expect(bytes(resumed.model)).toBe(bytes(straight.model));
  expect(resumed.checkpointFiles()).toEqual(straight.checkpointFiles());
  // … and refuses a checkpoint of another corpus.
  const other = { ...data, meta: { ...data.meta, source: { ...data.meta.source, sha256: 'f'.repeat(64) } } };
  expect(() => Trainer.resume(other, o, { weights: files['weights.json']!, state: files['state.json']! })).toThrow(/trained on another corpus/);
});

test('weights.json round-trips the parameters exactly', () => {
  const m = trainedModel();
  const back = modelFromWeights(weightsJson(m));
  expect(back.config).toEqual(m.config);
  expect(bytes(back)).toBe(bytes(m));
  expect(() => modelFromWeights(JSON.stringify({ format: 'other' }))).toThrow(/is not tandem-charlm\/1/);
});

describe('generation', () => {
  const params = (o: Partial<GenerateParams> = {}): GenerateParams => ({ maxTokens: 60, temperature: 0.8, topP: 1, stop: [], ...o });
  const all = (prompt: string, p: GenerateParams, seed: number) => {
    const g = generate(trainedModel(), prompt, p, new Rng(seed));
    const pieces: string[] = [];
    for (;;) {
      const s = g.next();
      if (s.done) return { pieces, result: s.value };
      pieces.push(s.value);
    }
  };

  test('one token per step, max_tokens of them, the same text for the same seed', () => {
    const a = all('Mr. Darcy', params(), 5);
    expect(a.pieces).toHaveLength(60);
    expect(a.result).toMatchObject({ tokens: 60, finishReason: 'length', stopReason: null });
    expect(a.pieces.join('')).toBe(a.result.text);
    expect(all('Mr. Darcy', params(), 5).result.text).toBe(a.result.text);
    expect(all('Mr. Darcy', params(), 6).result.text).not.toBe(a.result.text);
  });

  test('temperature 0 is greedy: no randomness, any seed gives the same text', () => {
    expect(all('Elizabeth', params({ temperature: 0 }), 1).result.text).toBe(all('Elizabeth', params({ temperature: 0 }), 2).result.text);
  });

  test('a stop string ends the text and is not part of it, nor of any streamed piece', () => {
    const free = all('Elizabeth', params({ temperature: 0, maxTokens: 200 }), 1).result.text;
    const stop = free.slice(10, 13); // a string the greedy text is known to contain
    const r = all('Elizabeth', params({ temperature: 0, maxTokens: 200, stop: [stop, 'never-in-here'] }), 1);
    expect(r.result.finishReason).toBe('stop');
    expect(r.result.stopReason).toBe(stop);
    expect(r.result.text).toBe(free.slice(0, free.indexOf(stop)));
    expect(r.pieces.join('')).toBe(r.result.text);
    expect(r.result.tokens).toBe(free.indexOf(stop) + stop.length);
  });

  test('top_p keeps the likeliest tokens: a tiny top_p is greedy', () => {
    expect(all('Jane', params({ topP: 1e-6 }), 9).result.text).toBe(all('Jane', params({ temperature: 0 }), 1).result.text);
  });
});
