// A seeded PRNG (mulberry32) so preprocessing, training and sampling are reproducible from a seed.
// Its whole state is one 32-bit integer, so a checkpoint can carry it and a resumed training run
// draws exactly the minibatches the uninterrupted run would have drawn.
export class Rng {
  constructor(public state: number) {
    this.state = state >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

export function mulberry32(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.next();
}

export function gaussian(rand: () => number): number {
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}
