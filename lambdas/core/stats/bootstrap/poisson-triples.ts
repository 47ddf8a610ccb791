/** Poisson(1) weights of three units drawn at once, for the Poisson bootstrap's means. */
import type { Rng } from '../rng';

/**
 * Poisson(1) weights of three units at once, as one code: (w1, w2, w3), each 0..4, is code
 * 25 w1 + 5 w2 + w3 (125 codes, 98.9 % of triples); TRIPLE_OVERFLOW when one of them is 5 or
 * more. Drawn by inversion of the triple's joint law, exact to 2^-48: 16 random bits decide
 * unless their interval straddles a step of the joint CDF (~120 of the 65,536 prefixes); such a
 * prefix is marked TRIPLE_OVERFLOW + 1 + j and 32 more bits decide.
 */
export const TRIPLE_OVERFLOW = 128;
export const TRIPLE = (() => {
  const pmf = [Math.exp(-1)];
  for (let k = 1; k <= 4; k++) pmf.push((pmf[k - 1] as number) / k);
  const steps: number[] = [];
  const w1 = new Uint8Array(125);
  const w2 = new Uint8Array(125);
  const w3 = new Uint8Array(125);
  const wsum = new Float64Array(256); // 0 for the markers
  let cum = 0;
  for (let a = 0; a <= 4; a++) {
    for (let b = 0; b <= 4; b++) {
      for (let c = 0; c <= 4; c++) {
        const code = a * 25 + b * 5 + c;
        cum += (pmf[a] as number) * (pmf[b] as number) * (pmf[c] as number);
        steps.push(cum * 2 ** 48);
        w1[code] = a;
        w2[code] = b;
        w3[code] = c;
        wsum[code] = a + b + c;
      }
    }
  }
  const value = new Uint8Array(65536);
  const straddlingPrefix: number[] = [];
  let k = 0;
  for (let h = 0; h < 65536; h++) {
    const lo = h * 2 ** 32;
    const hi = lo + 2 ** 32;
    while (k < 125 && lo >= (steps[k] as number)) k++;
    if (k < 125 && hi > (steps[k] as number)) {
      value[h] = TRIPLE_OVERFLOW + 1 + straddlingPrefix.length;
      straddlingPrefix.push(h);
    } else value[h] = k < 125 ? k : TRIPLE_OVERFLOW;
  }
  // Poisson(1) CDF at 0..4, for the overflow's conditional draws.
  const cdf = pmf.map((_, i) => pmf.slice(0, i + 1).reduce((x, y) => x + y, 0));
  return { value, straddlingPrefix, steps, w1, w2, w3, wsum, pmf, cdf, below5: cdf[4] as number };
})();

/** Smallest k with P(X <= k) > v, X ~ Poisson(1), v in [0, 1): inversion on the CDF. */
function poisson1Quantile(v: number): number {
  let k = 0;
  let p = Math.exp(-1);
  let cum = p;
  while (v >= cum && k < 40) {
    k++;
    p /= k;
    cum += p;
  }
  return k;
}

/** The code of a straddling prefix (marker TRIPLE_OVERFLOW + 1 + j), from 32 more bits. */
export function tripleRefine(marker: number, rng: Rng): number {
  const h = TRIPLE.straddlingPrefix[marker - TRIPLE_OVERFLOW - 1] as number;
  const u = h * 2 ** 32 + rng.u32();
  let k = 0;
  while (k < 125 && u >= (TRIPLE.steps[k] as number)) k++;
  return k < 125 ? k : TRIPLE_OVERFLOW;
}

/**
 * Three Poisson(1) weights conditioned on at least one being 5 or more: the first such unit
 * j has probability (1 - a) a^(j-1) / (1 - a^3), a = P(X <= 4); the units before it are
 * Poisson(1) below 5, unit j at least 5, the units after it unconstrained.
 */
export function tripleOverflow(rng: Rng, out: number[]): void {
  const a = TRIPLE.below5;
  const total = 1 - a * a * a;
  const u = rng.double() * total;
  const j = u < 1 - a ? 0 : u < (1 - a) * (1 + a) ? 1 : 2;
  for (let i = 0; i < 3; i++) {
    const v = rng.double();
    out[i] = i < j ? poisson1Quantile(v * a) : i === j ? poisson1Quantile(a + v * (1 - a)) : poisson1Quantile(v);
  }
}
