/**
 * Exact tests on counts, as SciPy 1.17 computes them (checked against fixtures SciPy computed,
 * see scripts/stats-fixtures.py): `binomtest(k, n, 0.5)`, McNemar's exact test (a binomial
 * test on the discordant pairs) and `fisher_exact(table)`.
 */
import { binomialPmf, hypergeomPmf } from './special-functions';

/** Sum of `pmf` from `start` stepping by `step` (+1 or -1) while terms matter, given the next-term ratio. */
function tailSum(first: number, start: number, step: 1 | -1, end: number, ratio: (x: number) => number): number {
  let term = first;
  let sum = 0;
  for (let x = start; step > 0 ? x <= end : x >= end; x += step) {
    // Terms fall away from the mode, where every tail summed here starts or ends.
    if (term === 0) break;
    sum += term;
    if (term < sum * 1e-17) break;
    term *= ratio(x);
  }
  return sum;
}

/** P(X <= k), X ~ Bin(n, 1/2). */
function binomHalfCdf(k: number, n: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  // pmf(x - 1) / pmf(x) = x / (n - x + 1)
  return tailSum(binomialPmf(k, n, 0.5), k, -1, 0, (x) => x / (n - x + 1));
}

/** P(X > k), X ~ Bin(n, 1/2). */
function binomHalfSf(k: number, n: number): number {
  if (k >= n) return 0;
  if (k < 0) return 1;
  // pmf(x + 1) / pmf(x) = (n - x) / (x + 1)
  return tailSum(binomialPmf(k + 1, n, 0.5), k + 1, 1, n, (x) => (n - x) / (x + 1));
}

/** SciPy's implicit binary search: i in [lo, hi] with a(i) <= d < a(i + 1). */
function binarySearch(a: (x: number) => number, d: number, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const midval = a(mid);
    if (midval < d) lo = mid + 1;
    else if (midval > d) hi = mid - 1;
    else return mid;
  }
  return a(lo) <= d ? lo : lo - 1;
}

/** scipy.stats.binomtest(k, n, 0.5).pvalue (two-sided). */
export function binomTestHalf(k: number, n: number): number {
  if (n <= 0) return 1;
  const pmf = (x: number) => binomialPmf(x, n, 0.5);
  const d = pmf(k);
  const rerr = 1 + 1e-7;
  if (k * 2 === n) return 1;
  let pval: number;
  if (k * 2 < n) {
    const ix = binarySearch((x) => -pmf(x), -d * rerr, Math.ceil(n / 2), n);
    const y = n - ix + (d * rerr === pmf(ix) ? 1 : 0);
    pval = binomHalfCdf(k, n) + binomHalfSf(n - y, n);
  } else {
    const ix = binarySearch(pmf, d * rerr, 0, Math.floor(n / 2));
    const y = ix + 1;
    pval = binomHalfCdf(y - 1, n) + binomHalfSf(k - 1, n);
  }
  return Math.min(1, pval);
}

/**
 * McNemar's exact test on the discordant pairs: b pairs where only the baseline failed, c where
 * only the candidate failed; scipy.stats.binomtest(b, b + c, 0.5).pvalue. 1 without discordant pairs.
 */
export function mcnemarExact(b: number, c: number): number {
  return b + c === 0 ? 1 : binomTestHalf(b, b + c);
}

/** P(X <= k) and P(X > k) of the hypergeometric law, summed from k outwards. */
function hypergeomCdf(k: number, M: number, n: number, N: number): number {
  const lo = Math.max(0, N - (M - n));
  if (k < lo) return 0;
  if (k >= Math.min(n, N)) return 1;
  // pmf(x - 1) / pmf(x) = x (M - n - N + x) / ((n - x + 1)(N - x + 1))
  return tailSum(hypergeomPmf(k, M, n, N), k, -1, lo, (x) => (x * (M - n - N + x)) / ((n - x + 1) * (N - x + 1)));
}

function hypergeomSf(k: number, M: number, n: number, N: number): number {
  const hi = Math.min(n, N);
  if (k >= hi) return 0;
  const start = Math.max(k + 1, Math.max(0, N - (M - n)));
  // pmf(x + 1) / pmf(x) = (n - x)(N - x) / ((x + 1)(M - n - N + x + 1))
  return tailSum(
    hypergeomPmf(start, M, n, N),
    start,
    1,
    hi,
    (x) => ((n - x) * (N - x)) / ((x + 1) * (M - n - N + x + 1)),
  );
}

/**
 * Fisher's exact test of the 2x2 table [[a, b], [c, d]], two-sided, as scipy.stats.fisher_exact:
 * the probability of the tables at most as likely as the observed one (relative tolerance 1e-14).
 */
export function fisherExact2x2(a: number, b: number, c: number, d: number): number {
  if (a + b === 0 || c + d === 0 || a + c === 0 || b + d === 0) return 1;
  const n1 = a + b;
  const n2 = c + d;
  const n = a + c;
  const M = n1 + n2;
  const pmf = (x: number) => hypergeomPmf(x, M, n1, n);
  const mode = Math.floor(((n + 1) * (n1 + 1)) / (M + 2));
  const pexact = pmf(a);
  const pmode = pmf(mode);
  const epsilon = 1e-14;
  const gamma = 1 + epsilon;
  if (Math.abs(pexact - pmode) / Math.max(pexact, pmode) <= epsilon) return 1;
  let p: number;
  if (a < mode) {
    const plower = hypergeomCdf(a, M, n1, n);
    if (pmf(n) > pexact * gamma) return plower;
    const guess = binarySearch((x) => -pmf(x), -pexact * gamma, mode, n);
    p = plower + hypergeomSf(guess, M, n1, n);
  } else {
    const pupper = hypergeomSf(a - 1, M, n1, n);
    if (pmf(0) > pexact * gamma) return pupper;
    const guess = binarySearch(pmf, pexact * gamma, 0, mode);
    p = pupper + hypergeomCdf(guess, M, n1, n);
  }
  return Math.min(p, 1);
}
