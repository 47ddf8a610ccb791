/** The bootstrap's random numbers: a fast seeded generator and a Poisson sampler (numpy's). */
import { seededRandom } from '../random';
import { loggam } from './special-functions';

/**
 * xoshiro128**: fast 32-bit generator for the bootstrap's hot loops (random.ts's mulberry32,
 * a closure returning floats, seeds it). `stream` separates the independent streams of one seed.
 */
export class Rng {
  s0: number;
  s1: number;
  s2: number;
  s3: number;

  constructor(seed: number, stream: number) {
    const mix = (h: number) => {
      h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
      h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
      return (h ^ (h >>> 16)) >>> 0;
    };
    const next = seededRandom(mix((seed >>> 0) ^ mix(stream + 0x9e3779b9)));
    const word = () => Math.floor(next() * 4294967296) >>> 0;
    this.s0 = word();
    this.s1 = word();
    this.s2 = word();
    this.s3 = word() | 1; // never all zero
  }

  /** Next 32 random bits, unsigned. */
  u32(): number {
    const m5 = Math.imul(this.s1, 5);
    const result = Math.imul((m5 << 7) | (m5 >>> 25), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = (this.s3 << 11) | (this.s3 >>> 21);
    return result;
  }

  /** Uniform in [0, 1), 53 bits. */
  double(): number {
    return ((this.u32() >>> 5) * 67108864 + (this.u32() >>> 6)) / 9007199254740992;
  }

  /** Uniform integer in [0, k): unbiased below 2^21 (Lemire's multiply-and-reject), 53-bit above. */
  int(k: number): number {
    if (k > 2097152) return Math.floor(this.double() * k);
    // The 53-bit product's high and low 32 bits, exact: a floating-point % is several times
    // slower than the division by 2^32 (a power of two: exact) and the subtraction.
    let m = this.u32() * k;
    let high = Math.floor(m / 4294967296);
    let low = m - high * 4294967296;
    if (low < k) {
      const t = (4294967296 - k) % k;
      while (low < t) {
        m = this.u32() * k;
        high = Math.floor(m / 4294967296);
        low = m - high * 4294967296;
      }
    }
    return high;
  }
}

/** Poisson(lam) variate: multiplication method below 10, Hörmann's PTRS above (as numpy). */
export function poisson(rng: Rng, lam: number): number {
  if (lam <= 0) return 0;
  if (lam < 10) {
    const enlam = Math.exp(-lam);
    let x = 0;
    let prod = 1;
    for (;;) {
      prod *= rng.double();
      if (prod > enlam) x++;
      else return x;
    }
  }
  const slam = Math.sqrt(lam);
  const loglam = Math.log(lam);
  const b = 0.931 + 2.53 * slam;
  const a = -0.059 + 0.02483 * b;
  const invalpha = 1.1239 + 1.1328 / (b - 3.4);
  const vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const U = rng.double() - 0.5;
    const V = rng.double();
    const us = 0.5 - Math.abs(U);
    const k = Math.floor(((2 * a) / us + b) * U + lam + 0.43);
    if (us >= 0.07 && V <= vr) return k;
    if (k < 0 || (us < 0.013 && V > us)) continue;
    if (Math.log(V) + Math.log(invalpha) - Math.log(a / (us * us) + b) <= -lam + k * loglam - loggam(k + 1)) return k;
  }
}
