/**
 * The Mann-Whitney U test, as scipy.stats.mannwhitneyu(x, y) with SciPy 1.17's defaults
 * (checked against fixtures SciPy computed, see scripts/stats-fixtures.py).
 */
import { sortedFinite } from './sort';
import { normalSf } from './special-functions';
import { clip01, type TestResult } from './test-result';

/**
 * Counts of the Mann-Whitney U (of the smaller sample, size m, against n) for u = 0..maxU:
 * coefficients of the Gaussian binomial [m+n choose m]_q, built factor by factor.
 */
function mannWhitneyCounts(m: number, n: number, maxU: number): Float64Array {
  const c = new Float64Array(maxU + 1);
  c[0] = 1;
  for (let i = 1; i <= m; i++) {
    // times (1 - q^(n+i)), then divided by (1 - q^i): [n+i choose i] from [n+i-1 choose i-1]
    const a = n + i;
    for (let k = maxU; k >= a; k--) c[k] = (c[k] as number) - (c[k - a] as number);
    for (let k = i; k <= maxU; k++) c[k] = (c[k] as number) + (c[k - i] as number);
  }
  return c;
}

function binomialCoefficient(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/**
 * Mann-Whitney U test, two-sided, as scipy.stats.mannwhitneyu(x, y) with its defaults
 * (use_continuity=True, method='auto'): the exact distribution when either sample has at most
 * 8 values and there are no ties, else the normal approximation with the tie correction and
 * the continuity correction. Non-finite values are ignored.
 */
export function mannWhitneyU(x: ArrayLike<number>, y: ArrayLike<number>): TestResult {
  return mannWhitneyUSorted(sortedFinite(x), sortedFinite(y));
}

/** mannWhitneyU on finite samples already sorted ascending. */
export function mannWhitneyUSorted(X: Float64Array, Y: Float64Array): TestResult {
  const n1 = X.length;
  const n2 = Y.length;
  if (n1 === 0 || n2 === 0) return { statistic: NaN, pValue: null, method: 'asymptotic', direction: 0, n: n1 + n2 };
  let i = 0;
  let j = 0;
  let rank0 = 0;
  let R1 = 0;
  let tieTerm = 0;
  let ties = false;
  while (i < n1 || j < n2) {
    const v = Math.min(i < n1 ? (X[i] as number) : Infinity, j < n2 ? (Y[j] as number) : Infinity);
    let cx = 0;
    let cy = 0;
    while (i < n1 && X[i] === v) {
      cx++;
      i++;
    }
    while (j < n2 && Y[j] === v) {
      cy++;
      j++;
    }
    const t = cx + cy;
    R1 += cx * (rank0 + (t + 1) / 2);
    tieTerm += t * t * t - t;
    if (t > 1) ties = true;
    rank0 += t;
  }
  const U1 = R1 - (n1 * (n1 + 1)) / 2;
  const U2 = n1 * n2 - U1;
  const U = Math.max(U1, U2);
  const direction: -1 | 0 | 1 = U2 > U1 ? 1 : U2 < U1 ? -1 : 0;
  const exact = !(n1 > 8 && n2 > 8) && !ties;
  let p: number;
  if (exact) {
    const m = Math.min(n1, n2);
    const n = Math.max(n1, n2);
    const kc = Math.round(n1 * n2 - U); // P(U >= u) = P(U <= mn - u) by symmetry
    const counts = mannWhitneyCounts(m, n, kc);
    let cum = 0;
    for (let k = 0; k <= kc; k++) cum += counts[k] as number;
    p = clip01((2 * cum) / binomialCoefficient(m + n, m));
  } else {
    const mu = (n1 * n2) / 2;
    const nn = n1 + n2;
    const s = Math.sqrt(((n1 * n2) / 12) * (nn + 1 - tieTerm / (nn * (nn - 1))));
    const z = (U - mu - 0.5) / s;
    p = Number.isNaN(z) ? NaN : clip01(2 * normalSf(z));
  }
  return {
    statistic: U2,
    pValue: Number.isFinite(p) ? p : null,
    method: exact ? 'exact' : 'asymptotic',
    direction,
    n: n1 + n2,
  };
}
