// Reproduces how RLScheduler draws its test windows, so Table V's samples are the same jobs:
// gym.utils.seeding.np_random(seed) seeds numpy's legacy RandomState (MT19937, init_by_array) with the
// first 8 bytes of sha512(str(seed)), and RandomState.randint(lo, hi) uses masked rejection on 32-bit
// outputs. That is gym's seeding up to 0.21 (hash_seed/create_seed), which RLScheduler's 2020 code
// (Python 3.7, TensorFlow 1.14) ran on; later gym returns a PCG64 Generator and other windows. Checked
// against numpy's RandomState: seed 1, randint(1024, 8975) gives 1981, 2756, 4299, … as here.
// Bench-only (it needs node:crypto).
import { createHash } from 'node:crypto';

class MT19937 {
  private mt = new Uint32Array(624);
  private mti = 625;

  private initGenrand(s: number): void {
    this.mt[0] = s >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = this.mt[i - 1] ^ (this.mt[i - 1] >>> 30);
      this.mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.mti = 624;
  }

  initByArray(key: number[]): void {
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    const n = 624;
    for (let k = Math.max(n, key.length); k > 0; k--) {
      const prev = this.mt[i - 1] ^ (this.mt[i - 1] >>> 30);
      this.mt[i] = ((this.mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= n) {
        this.mt[0] = this.mt[n - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = n - 1; k > 0; k--) {
      const prev = this.mt[i - 1] ^ (this.mt[i - 1] >>> 30);
      this.mt[i] = ((this.mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= n) {
        this.mt[0] = this.mt[n - 1];
        i = 1;
      }
    }
    this.mt[0] = 0x80000000;
  }

  nextUint32(): number {
    const mt = this.mt;
    if (this.mti >= 624) {
      for (let k = 0; k < 624; k++) {
        const y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7fffffff);
        mt[k] = (mt[(k + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
      }
      this.mti = 0;
    }
    let y = mt[this.mti++];
    y ^= y >>> 11;
    y = (y ^ ((y << 7) & 0x9d2c5680)) >>> 0;
    y = (y ^ ((y << 15) & 0xefc60000)) >>> 0;
    y ^= y >>> 18;
    return y >>> 0;
  }
}

export class GymNpRandom {
  private mt = new MT19937();

  constructor(seed: number) {
    const digest = createHash('sha512').update(String(seed)).digest();
    const lo = digest.readUInt32LE(0);
    const hi = digest.readUInt32LE(4);
    this.mt.initByArray(hi ? [lo, hi] : [lo]);
  }

  /** numpy RandomState.randint(low, high): uniform in [low, high). */
  randint(low: number, high: number): number {
    const rng = high - 1 - low;
    if (rng <= 0) return low;
    let mask = rng;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    for (;;) {
      const v = (this.mt.nextUint32() & mask) >>> 0;
      if (v <= rng) return low + v;
    }
  }
}
