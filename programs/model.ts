// A logistic-regression classifier: small enough to train in seconds on one core, real enough that
// its loss falls, its checkpoints matter, and its server answers from the trained weights.
export interface Dataset {
  features: number;
  samples: number;
  x: number[][];
  y: number[];
  mean: number[];
  std: number[];
}

export interface Weights {
  w: number[];
  b: number;
}

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

export function predict(weights: Weights, x: number[]): number {
  let z = weights.b;
  for (let j = 0; j < weights.w.length; j++) z += weights.w[j]! * (x[j] ?? 0);
  return sigmoid(z);
}

/** One full-batch gradient-descent step; returns the loss and accuracy before the update. */
export function gradientStep(weights: Weights, data: Dataset, lr: number): { loss: number; accuracy: number } {
  const d = weights.w.length;
  const gw = new Array<number>(d).fill(0);
  let gb = 0;
  let loss = 0;
  let correct = 0;
  for (let i = 0; i < data.samples; i++) {
    const xi = data.x[i]!;
    const p = predict(weights, xi);
    const yi = data.y[i]!;
    const err = p - yi;
    for (let j = 0; j < d; j++) gw[j]! += err * xi[j]!;
    gb += err;
    loss -= yi * Math.log(Math.max(p, 1e-12)) + (1 - yi) * Math.log(Math.max(1 - p, 1e-12));
    if ((p >= 0.5 ? 1 : 0) === yi) correct++;
  }
  for (let j = 0; j < d; j++) weights.w[j] = weights.w[j]! - (lr * gw[j]!) / data.samples;
  weights.b -= (lr * gb) / data.samples;
  return { loss: loss / data.samples, accuracy: correct / data.samples };
}

/** Maps free text onto the model's feature space (hashed bag of words), for the completion API. */
export function featurize(text: string, features: number): number[] {
  const x = new Array<number>(features).fill(0);
  for (const token of text.toLowerCase().split(/\W+/).filter(Boolean)) {
    let h = 2166136261;
    for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 16777619) >>> 0;
    x[h % features]! += (h & 0x100) === 0 ? 1 : -1;
  }
  return x;
}
