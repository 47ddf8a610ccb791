/**
 * The special functions under the tests' p-values and the Poisson sampler: erfc, binomial and
 * hypergeometric probabilities, log Gamma.
 *
 * Dependencies: none. The complementary error function (for the normal tail of the asymptotic
 * tests) is a dozen lines below (`erfc`), accurate far into the tail where p-values of 1e-30
 * live; the libraries that offer one either lose the tail (jStat's is off by 1e-5 at 5 and
 * returns 0 from 8) or bring ~145 packages for one function (@stdlib). Binomial and
 * hypergeometric probabilities use Loader's saddle-point formulas (as R's dbinom/dhyper), a
 * few lines that keep 14 digits at a million trials without pulling in the incomplete beta.
 */

/**
 * The complementary error function to ~1e-13 relative everywhere it does not underflow (far
 * into the tail, where p-values of 1e-30 live; 1 - erf would lose them all): the Taylor
 * series of erf below 2, where erfc is at least 4.7e-3 so the subtraction costs nothing that
 * matters, and the continued fraction erfc(x) = exp(-x^2)/sqrt(pi) / (x + 1/2/(x + 1/(x +
 * 3/2/(x + ...)))) from 2 on, evaluated backwards over enough terms for double precision
 * (Abramowitz & Stegun 7.1.5 and 7.1.14). Checked against scipy.special.erfc in the tests.
 */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x < 0) return 2 - erfc(-x);
  if (x < 2) {
    let term = x;
    let sum = x;
    const x2 = x * x;
    for (let n = 1; n < 100; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * sum;
  }
  if (x > 27) return 0; // exp(-x^2) is below the smallest double
  let tail = x;
  for (let k = 120; k >= 1; k--) tail = x + k / 2 / tail;
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / tail;
}

/** Standard normal survival function P(Z > z) (scipy.special.ndtr(-z)). */
export function normalSf(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

const LN_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);

/** log(n!) - log(sqrt(2 pi n) (n/e)^n), the error of Stirling's formula (Loader 2000). */
function stirlerr(n: number): number {
  if (n <= 15) {
    if (n === 0) return 0;
    let lf = 0;
    for (let k = 2; k <= n; k++) lf += Math.log(k);
    return lf - (n + 0.5) * Math.log(n) + n - LN_SQRT_2PI;
  }
  const S0 = 1 / 12;
  const S1 = 1 / 360;
  const S2 = 1 / 1260;
  const S3 = 1 / 1680;
  const S4 = 1 / 1188;
  const nn = n * n;
  if (n > 500) return (S0 - S1 / nn) / n;
  if (n > 80) return (S0 - (S1 - S2 / nn) / nn) / n;
  if (n > 35) return (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n;
  return (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n;
}

/** x log(x/np) + np - x, without cancellation (Loader 2000). */
function bd0(x: number, np: number): number {
  if (Math.abs(x - np) < 0.1 * (x + np)) {
    let v = (x - np) / (x + np);
    let s = (x - np) * v;
    let ej = 2 * x * v;
    v *= v;
    for (let j = 1; j < 1000; j++) {
      ej *= v;
      const s1 = s + ej / (2 * j + 1);
      if (s1 === s) return s1;
      s = s1;
    }
    return s;
  }
  return x * Math.log(x / np) + np - x;
}

/** Binomial probability P(X = x), X ~ Bin(n, p), q = 1 - p: Loader's saddle point, as R's dbinom_raw. */
export function binomialPmf(x: number, n: number, p: number, q = 1 - p): number {
  if (x < 0 || x > n) return 0;
  if (p === 0) return x === 0 ? 1 : 0;
  if (q === 0) return x === n ? 1 : 0;
  if (x === 0) {
    if (n === 0) return 1;
    return Math.exp(p < 0.1 ? -bd0(n, n * q) - n * p : n * Math.log(q));
  }
  if (x === n) return Math.exp(q < 0.1 ? -bd0(n, n * p) - n * q : n * Math.log(p));
  const lc = stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(x, n * p) - bd0(n - x, n * q);
  const lf = Math.log(2 * Math.PI) + Math.log(x) + Math.log1p(-x / n);
  return Math.exp(lc - 0.5 * lf);
}

/**
 * Hypergeometric probability, SciPy's parameters: x successes in N draws from M items of which
 * n are successes. Loader's formula (as R's dhyper).
 */
export function hypergeomPmf(x: number, M: number, n: number, N: number): number {
  if (x < Math.max(0, N - (M - n)) || x > Math.min(n, N)) return 0;
  if (N === 0) return x === 0 ? 1 : 0;
  const p = N / M;
  const q = (M - N) / M;
  const p1 = binomialPmf(x, n, p, q);
  const p2 = binomialPmf(N - x, M - n, p, q);
  const p3 = binomialPmf(N, M, p, q);
  return (p1 * p2) / p3;
}

const LOGGAM_A = [
  8.333333333333333e-2, -2.777777777777778e-3, 7.936507936507937e-4, -5.952380952380952e-4, 8.417508417508418e-4,
  -1.917526917526918e-3, 6.41025641025641e-3, -2.955065359477124e-2, 1.796443723688307e-1, -1.3924322169059,
];

/** log Gamma(x), x > 0: numpy's random_loggam (accurate to ~1e-15, what its PTRS sampler uses). */
export function loggam(x: number): number {
  if (x === 1 || x === 2) return 0;
  const n = x < 7 ? Math.floor(7 - x) : 0;
  let x0 = x + n;
  const x2 = 1 / (x0 * x0);
  let gl0 = LOGGAM_A[9] as number;
  for (let k = 8; k >= 0; k--) gl0 = gl0 * x2 + (LOGGAM_A[k] as number);
  let gl = gl0 / x0 + 0.5 * Math.log(2 * Math.PI) + (x0 - 0.5) * Math.log(x0) - x0;
  for (let k = 1; k <= n; k++) {
    gl -= Math.log(x0 - 1);
    x0 -= 1;
  }
  return gl;
}
