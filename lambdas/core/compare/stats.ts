/**
 * The A/B comparison's statistics: pure functions on flat arrays, no I/O.
 *
 * Each test reproduces SciPy 1.17's defaults (checked against fixtures SciPy computed, see
 * scripts/stats-fixtures.py): `wilcoxon(d)`, `mannwhitneyu(x, y)`, `binomtest(k, n, 0.5)`,
 * `fisher_exact(table)`; percentiles are numpy's default ("linear"), by metrics/stats.ts.
 *
 * Dependencies: none. The complementary error function (for the normal tail of the asymptotic
 * tests) is a dozen lines below (`erfc`), accurate far into the tail where p-values of 1e-30
 * live; the libraries that offer one either lose the tail (jStat's is off by 1e-5 at 5 and
 * returns 0 from 8) or bring ~145 packages for one function (@stdlib). The rest is written here
 * because no package fits: `@stdlib/stats-wilcoxon` follows R's rules (continuity correction, exact
 * below 50 with no tie rule for zeros), not SciPy's, and has no Mann-Whitney; binomial and
 * hypergeometric probabilities use Loader's saddle-point formulas (as R's dbinom/dhyper), a
 * few lines that keep 14 digits at a million trials without pulling in the incomplete beta.
 *
 * Bootstrap. Percentile intervals. Below POISSON_BOOTSTRAP_FROM units (pairs, or one side's
 * values) a resample is the classic one: n units drawn with replacement (multinomial counts),
 * as numpy's `rng.integers(0, n, n)`. From that size on, the Poisson bootstrap (Hanley &
 * MacGibbon 2006; Chamandy et al. 2012): every unit gets an independent Poisson(1) weight per
 * resample, which is the same as resampling a Poisson(n) number of units. It makes a million
 * pairs affordable:
 *   - means: one fused pass over the units for all metrics and both sides, three units at a
 *     time (their three weights are one of 125 codes, whose weighted sums are tabulated once
 *     per block of units; see poissonWeightedSums);
 *   - quantiles: the units are grouped into cells by the segment of their rank on each side
 *     (fine segments around the 50th, 90th and 99th percentile ranks, coarse ones elsewhere);
 *     a resample draws each cell's total weight (Poisson(cell size), sums of independent
 *     Poisson weights) and expands only the cells of the segments where the wanted positions
 *     fall into per-unit weights (a multinomial split of the cell total, which is exactly the
 *     conditional law of the units' weights given their sum). The weighted quantile is the
 *     same as walking every unit in sorted order, in distribution, at a few thousand steps
 *     per resample instead of a million.
 * A metric's means and its quantiles come from independent resamples (each interval is
 * marginal; nothing combines a mean with a quantile). B and A of one statistic always come
 * from the same resample (paired) so the difference keeps their correlation.
 */
import { percentile } from '../metrics/stats';
import { seededRandom } from '../random';

// ---------------------------------------------------------------------------------------
// Percentiles and sorting

/** numpy's linear percentile (pct in 0..100) of an ascending typed array, by metrics/stats.ts. */
export function percentileSorted(sortedAsc: Float64Array, pct: number): number {
  // `percentile` reads only `length` and indices, which a typed array has.
  return percentile(sortedAsc as unknown as readonly number[], pct);
}

/** The finite values, ascending. */
export function sortedFinite(values: ArrayLike<number>): Float64Array {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (Number.isFinite(values[i] as number)) n++;
  const out = new Float64Array(n);
  let k = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (Number.isFinite(v)) out[k++] = v;
  }
  return sortFloat64InPlace(out);
}

/**
 * The LSD radix sort under both sorts below: each double becomes an order-preserving unsigned
 * 64-bit key (the sign bit of a positive number flipped, every bit of a negative one), sorted
 * in 4 passes of 16 bits; `index` (when given) is carried along, so the sort is stable.
 */
function radixSortKeys(values: Float64Array, index: Int32Array | null): { hi: Uint32Array; lo: Uint32Array; index: Int32Array | null } {
  const n = values.length;
  const bits = new Uint32Array(values.buffer, values.byteOffset, n * 2);
  let hi = new Uint32Array(n);
  let lo = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const h = bits[2 * i + 1] as number;
    const l = bits[2 * i] as number;
    if (h & 0x80000000) {
      hi[i] = ~h >>> 0;
      lo[i] = ~l >>> 0;
    } else {
      hi[i] = (h | 0x80000000) >>> 0;
      lo[i] = l;
    }
  }
  let idx: Int32Array | null = index;
  let hi2 = new Uint32Array(n);
  let lo2 = new Uint32Array(n);
  let idx2: Int32Array | null = index ? new Int32Array(n) : null;
  const count = new Int32Array(65536);
  for (let pass = 0; pass < 4; pass++) {
    const word = pass < 2 ? lo : hi;
    const shift = pass % 2 === 0 ? 0 : 16;
    count.fill(0);
    for (let i = 0; i < n; i++) {
      const d = ((word[i] as number) >>> shift) & 0xffff;
      count[d] = (count[d] as number) + 1;
    }
    if (n === 0 || count[((word[0] as number) >>> shift) & 0xffff] === n) continue; // one digit: already in order
    let sum = 0;
    for (let d = 0; d < 65536; d++) {
      const c = count[d] as number;
      count[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const d = ((word[i] as number) >>> shift) & 0xffff;
      const at = count[d] as number;
      count[d] = at + 1;
      hi2[at] = hi[i] as number;
      lo2[at] = lo[i] as number;
      if (idx) (idx2 as Int32Array)[at] = idx[i] as number;
    }
    [hi, hi2] = [hi2, hi];
    [lo, lo2] = [lo2, lo];
    [idx, idx2] = [idx2, idx];
  }
  return { hi, lo, index: idx };
}

/** Sorts finite doubles ascending, in place (radix: about 3x faster than TypedArray#sort on a million values). -0 sorts before 0. */
export function sortFloat64InPlace(values: Float64Array): Float64Array {
  const n = values.length;
  if (n < 4096) return values.sort();
  const { hi, lo } = radixSortKeys(values, null);
  const bits = new Uint32Array(values.buffer, values.byteOffset, n * 2);
  for (let i = 0; i < n; i++) {
    const h = hi[i] as number;
    if (h & 0x80000000) {
      bits[2 * i + 1] = (h & 0x7fffffff) >>> 0;
      bits[2 * i] = lo[i] as number;
    } else {
      bits[2 * i + 1] = ~h >>> 0;
      bits[2 * i] = ~(lo[i] as number) >>> 0;
    }
  }
  return values;
}

/** 101 numpy-linear quantiles (0, 1, ..., 100 %) of an ascending array; [] when empty. */
export function quantiles101(sortedAsc: Float64Array): number[] {
  if (sortedAsc.length === 0) return [];
  const out: number[] = [];
  for (let q = 0; q <= 100; q++) out.push(percentileSorted(sortedAsc, q));
  return out;
}

/**
 * Indices that sort `values` ascending (finite values only), stable, O(n) (radix), where a
 * comparator sort of a million indices takes ~0.4 s.
 */
export function argsortFloat64(values: Float64Array): Int32Array {
  const index = new Int32Array(values.length);
  for (let i = 0; i < index.length; i++) index[i] = i;
  return radixSortKeys(values, index).index as Int32Array;
}

// ---------------------------------------------------------------------------------------
// Distributions

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

// ---------------------------------------------------------------------------------------
// Tests

export interface TestResult {
  /** Wilcoxon: R+ (sum of the ranks of the positive differences). Mann-Whitney: U of `y` (the candidate). */
  statistic: number;
  /** Two-sided; null when the test is undefined (no values, or every difference zero beyond 13 values). */
  pValue: number | null;
  method: 'exact' | 'permutation' | 'asymptotic';
  /**
   * Which way the ranks lean: +1 when the second sample (or the differences) sit higher
   * (R+ > R-, U of y > n1 n2 / 2), -1 lower, 0 balanced.
   */
  direction: -1 | 0 | 1;
  /** Values the test used: non-zero differences (Wilcoxon), n1 + n2 (Mann-Whitney). */
  n: number;
}

const clip01 = (p: number) => Math.min(1, Math.max(0, p));

/** Distribution of Wilcoxon's R+ for n untied non-zero differences (scipy's _get_wilcoxon_distr). */
function wilcoxonPmf(n: number): Float64Array {
  let c = new Float64Array([1]);
  for (let k = 1; k <= n; k++) {
    const next = new Float64Array((k * (k + 1)) / 2 + 1);
    const m = c.length;
    for (let i = 0; i < m; i++) next[i] = (c[i] as number) * 0.5;
    for (let i = 0; i < m; i++) next[next.length - m + i] = (next[next.length - m + i] as number) + (c[i] as number) * 0.5;
    c = next;
  }
  return c;
}

/**
 * Wilcoxon signed-rank test of differences `d`, two-sided, as scipy.stats.wilcoxon(d) with its
 * defaults (zero_method='wilcox', correction=False, method='auto'): zeros are dropped from the
 * ranking; more than 50 values (zeros included): normal approximation with the tie correction
 * of the variance; up to 50 with no zeros and no ties: the exact distribution; up to 13 with
 * zeros or ties: the exact sign-flip permutation distribution (2^n flips, as SciPy's
 * permutation test enumerates them); 14 to 50 with zeros or ties: the normal approximation.
 * Non-finite values are ignored.
 */
export function wilcoxonSignedRank(d: ArrayLike<number>): TestResult {
  return wilcoxonSignedRankSplit(splitDifferences(d));
}

/** Differences split by sign: |d| of the positive and of the negative ones, each ascending. */
export interface SignedSplit {
  positive: Float64Array;
  negative: Float64Array;
  zeros: number;
}

/** The finite differences split by sign (see SignedSplit). */
export function splitDifferences(d: ArrayLike<number>): SignedSplit {
  let nPos = 0;
  let nNeg = 0;
  let zeros = 0;
  for (let i = 0; i < d.length; i++) {
    const v = d[i] as number;
    if (v > 0 && v < Infinity) nPos++;
    else if (v < 0 && v > -Infinity) nNeg++;
    else if (v === 0) zeros++;
  }
  const positive = new Float64Array(nPos);
  const negative = new Float64Array(nNeg);
  let ip = 0;
  let ineg = 0;
  for (let i = 0; i < d.length; i++) {
    const v = d[i] as number;
    if (v > 0 && v < Infinity) positive[ip++] = v;
    else if (v < 0 && v > -Infinity) negative[ineg++] = -v;
  }
  return { positive: sortFloat64InPlace(positive), negative: sortFloat64InPlace(negative), zeros };
}

/** All the differences of a split, ascending (no second sort). */
export function sortedFromSplit(split: SignedSplit): Float64Array {
  const { positive, negative, zeros } = split;
  const out = new Float64Array(positive.length + negative.length + zeros);
  let k = 0;
  for (let i = negative.length - 1; i >= 0; i--) out[k++] = -(negative[i] as number);
  k += zeros; // zeros already
  out.set(positive, k);
  return out;
}

/** wilcoxonSignedRank on differences already split by sign. */
export function wilcoxonSignedRankSplit(split: SignedSplit): TestResult {
  const P = split.positive;
  const N = split.negative;
  const zeros = split.zeros;
  const count = P.length + N.length;
  const total = count + zeros;
  if (total === 0) return { statistic: NaN, pValue: null, method: 'asymptotic', direction: 0, n: 0 };
  // Average ranks of |d| over the non-zero differences, tie groups merged across signs.
  let i = 0;
  let j = 0;
  let rank0 = 0;
  let rPlus = 0;
  let tieTerm = 0;
  let hasTies = false;
  const ranks = total <= 13 ? new Float64Array(count) : null; // with the sign of each, for the permutation test
  const rankSign = total <= 13 ? new Int8Array(count) : null;
  let r = 0;
  while (i < P.length || j < N.length) {
    const v = Math.min(i < P.length ? (P[i] as number) : Infinity, j < N.length ? (N[j] as number) : Infinity);
    let cp = 0;
    let cn = 0;
    while (i < P.length && P[i] === v) {
      cp++;
      i++;
    }
    while (j < N.length && N[j] === v) {
      cn++;
      j++;
    }
    const t = cp + cn;
    const avg = rank0 + (t + 1) / 2;
    rPlus += cp * avg;
    tieTerm += t * t * t - t;
    if (t > 1) hasTies = true;
    if (ranks && rankSign) {
      for (let k = 0; k < t; k++, r++) {
        ranks[r] = avg;
        rankSign[r] = k < cp ? 1 : -1;
      }
    }
    rank0 += t;
  }
  const mn = (count * (count + 1)) / 4;
  const rMinus = (count * (count + 1)) / 2 - rPlus;
  const direction: -1 | 0 | 1 = rPlus > rMinus ? 1 : rPlus < rMinus ? -1 : 0;

  let method: TestResult['method'];
  if (total > 50) method = 'asymptotic';
  else if (!hasTies && zeros === 0) method = 'exact';
  else if (total <= 13) method = 'permutation';
  else method = 'asymptotic';

  let p: number;
  if (method === 'asymptotic') {
    const se = Math.sqrt((count * (count + 1) * (2 * count + 1) - tieTerm / 2) / 24);
    const z = (rPlus - mn) / se;
    p = Number.isFinite(z) ? 2 * normalSf(Math.abs(z)) : NaN;
  } else if (method === 'exact') {
    const pmf = wilcoxonPmf(count);
    const k = Math.round(rPlus);
    // 2 min(sf(k), cdf(k)), each summed directly (the smaller tail is the accurate one).
    let cdf = 0;
    for (let x = 0; x <= k; x++) cdf += pmf[x] as number;
    let sf = 0;
    for (let x = k; x < pmf.length; x++) sf += pmf[x] as number;
    p = clip01(2 * Math.min(sf, cdf));
  } else {
    // Every sign flip of the non-zero differences (a zero flips to itself: each flip of the
    // zeros repeats the same statistic, so the proportions are those of the 2^total flips).
    const rk = ranks as Float64Array;
    const flips = 1 << count;
    const gamma = Math.abs(100 * Number.EPSILON * rPlus);
    let less = 0;
    let greater = 0;
    for (let mask = 0; mask < flips; mask++) {
      let s = 0;
      for (let b = 0; b < count; b++) if (mask & (1 << b)) s += rk[b] as number;
      if (s <= rPlus + gamma) less++;
      if (s >= rPlus - gamma) greater++;
    }
    p = clip01(2 * Math.min(less / flips, greater / flips));
  }
  return { statistic: rPlus, pValue: Number.isFinite(p) ? p : null, method, direction, n: count };
}

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
  return { statistic: U2, pValue: Number.isFinite(p) ? p : null, method: exact ? 'exact' : 'asymptotic', direction, n: n1 + n2 };
}

/**
 * Holm-Bonferroni step-down adjustment. Nulls pass through and do not count as tests.
 * adjusted p(i) = max over j <= i of min(1, (m - j + 1) p(j)), p sorted ascending.
 */
export function holm(pValues: readonly (number | null)[]): (number | null)[] {
  const present = pValues
    .map((p, i) => ({ p, i }))
    .filter((e): e is { p: number; i: number } => e.p !== null && Number.isFinite(e.p))
    .sort((a, b) => a.p - b.p || a.i - b.i);
  const m = present.length;
  const out: (number | null)[] = pValues.map(() => null);
  let running = 0;
  present.forEach((e, k) => {
    running = Math.max(running, Math.min(1, (m - k) * e.p));
    out[e.i] = running;
  });
  return out;
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
  return tailSum(hypergeomPmf(start, M, n, N), start, 1, hi, (x) => ((n - x) * (N - x)) / ((x + 1) * (M - n - N + x + 1)));
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

// ---------------------------------------------------------------------------------------
// Random numbers

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
    let m = this.u32() * k;
    let l = m % 4294967296;
    if (l < k) {
      const t = (4294967296 - k) % k;
      while (l < t) {
        m = this.u32() * k;
        l = m % 4294967296;
      }
    }
    return Math.floor(m / 4294967296);
  }
}

const LOGGAM_A = [8.333333333333333e-2, -2.777777777777778e-3, 7.936507936507937e-4, -5.952380952380952e-4, 8.417508417508418e-4, -1.917526917526918e-3, 6.41025641025641e-3, -2.955065359477124e-2, 1.796443723688307e-1, -1.3924322169059];

/** log Gamma(x), x > 0: numpy's random_loggam (accurate to ~1e-15, what its PTRS sampler uses). */
function loggam(x: number): number {
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

// ---------------------------------------------------------------------------------------
// Bootstrap

/** From this many units (pairs, or one side's values) on, the Poisson bootstrap. */
export const POISSON_BOOTSTRAP_FROM = 10_000;
export const BOOTSTRAP_QUANTILES = { p50: 0.5, p90: 0.9, p99: 0.99 } as const;
const QUANTILE_STATS = ['p50', 'p90', 'p99'] as const;

export interface SideReplicates {
  mean: Float64Array;
  p50: Float64Array;
  p90: Float64Array;
  p99: Float64Array;
}

export interface BootstrapReplicates {
  /** Per statistic, one value per resample (NaN where a resample had no value). */
  baseline: SideReplicates;
  candidate: SideReplicates;
  /** The metric's samples the resamples were drawn from, ascending (paired: the pairs with both values). */
  sorted: { baseline: Float64Array; candidate: Float64Array };
}

export interface BootstrapOptions {
  resamples: number;
  seed: number;
}

const emptySide = (R: number): SideReplicates => ({
  mean: new Float64Array(R).fill(NaN),
  p50: new Float64Array(R).fill(NaN),
  p90: new Float64Array(R).fill(NaN),
  p99: new Float64Array(R).fill(NaN),
});

/** The value at 0-based position `p` of the weighted sample, walking `order` from the nearer end. */
function weightedValueAt(sorted: Float64Array, order: Int32Array, weights: Int32Array, total: number, p: number): number {
  const n = sorted.length;
  if (p < total / 2) {
    let acc = 0;
    for (let j = 0; j < n; j++) {
      acc += weights[order[j] as number] as number;
      if (p < acc) return sorted[j] as number;
    }
  } else {
    const t = total - 1 - p;
    let acc = 0;
    for (let j = n - 1; j >= 0; j--) {
      acc += weights[order[j] as number] as number;
      if (t < acc) return sorted[j] as number;
    }
  }
  return NaN;
}

/** numpy-linear quantile q of the weighted sample of `total` values. */
function weightedQuantile(sorted: Float64Array, order: Int32Array, weights: Int32Array, total: number, q: number): number {
  if (total <= 0) return NaN;
  const rank = q * (total - 1);
  const lo = Math.floor(rank);
  const frac = rank - lo;
  const a = weightedValueAt(sorted, order, weights, total, lo);
  if (frac === 0 || lo + 1 > total - 1) return a;
  const b = weightedValueAt(sorted, order, weights, total, lo + 1);
  return a + (b - a) * frac;
}

/** A sample's values, sorted, with the unit at each rank. */
interface SortedSide {
  sorted: Float64Array;
  order: Int32Array;
}

function sortSide(values: Float64Array): SortedSide {
  const order = argsortFloat64(values);
  const sorted = new Float64Array(values.length);
  for (let j = 0; j < order.length; j++) sorted[j] = values[order[j] as number] as number;
  return { sorted, order };
}

/**
 * Classic bootstrap of one metric: `sides` share the units (paired: same length, unit i is the
 * pair i; unpaired: call once per side). Each resample draws n units with replacement.
 */
function multinomialBootstrap(sides: readonly Float64Array[], sortedSides: readonly SortedSide[], R: number, rng: Rng): SideReplicates[] {
  const n = (sides[0] as Float64Array).length;
  const out = sides.map(() => emptySide(R));
  if (n === 0) return out;
  const counts = new Int32Array(n);
  for (let r = 0; r < R; r++) {
    counts.fill(0);
    for (let k = 0; k < n; k++) {
      const at = rng.int(n);
      counts[at] = (counts[at] as number) + 1;
    }
    sides.forEach((values, s) => {
      const rep = out[s] as SideReplicates;
      let sum = 0;
      for (let i = 0; i < n; i++) sum += (counts[i] as number) * (values[i] as number);
      rep.mean[r] = sum / n;
      const { sorted, order } = sortedSides[s] as SortedSide;
      for (const stat of QUANTILE_STATS) rep[stat][r] = weightedQuantile(sorted, order, counts, n, BOOTSTRAP_QUANTILES[stat]);
    });
  }
  return out;
}

/**
 * Poisson-bootstrap quantiles of one metric over n units seen from 1 side (unpaired) or 2
 * (paired: the same unit weights on both sides). See the file's header for the method.
 */
class PoissonQuantileSampler {
  private readonly n: number;
  private readonly sides: SortedSide[];
  /** Per side: segment g covers ranks [bounds[g], bounds[g + 1]). */
  private readonly bounds: Int32Array[];
  /** Per side: per segment, the cells whose units have a rank in it. */
  private readonly segCells: Int32Array[][];
  /** Units grouped by cell: cell c holds cellItems[cellStart[c] .. cellStart[c + 1]). */
  private readonly cellStart: Int32Array;
  /** Per side, per rank: the position of that rank's unit in the cell grouping. */
  private readonly posByRank: Int32Array[];
  private readonly nonEmpty: Int32Array;
  private readonly cellTotal: Float64Array;
  private readonly cellStamp: Int32Array;
  private readonly weight: Int32Array;
  private readonly segTotal: Float64Array[];
  private stamp = 0;

  constructor(sides: SortedSide[], quantiles: readonly number[]) {
    this.sides = sides;
    const n = (sides[0] as SortedSide).sorted.length;
    this.n = n;
    this.bounds = sides.map(() => segmentBounds(n, quantiles));
    const nSeg = this.bounds.map((b) => b.length - 1);
    const nCells = nSeg.reduce((a, b) => a * b, 1);
    // Each unit's segment per side, hence its cell.
    const cellOf = new Int32Array(n);
    let stride = 1;
    for (let s = sides.length - 1; s >= 0; s--) {
      const b = this.bounds[s] as Int32Array;
      const order = (sides[s] as SortedSide).order;
      for (let g = 0; g + 1 < b.length; g++) {
        for (let j = b[g] as number; j < (b[g + 1] as number); j++) {
          const unit = order[j] as number;
          cellOf[unit] = (cellOf[unit] as number) + g * stride;
        }
      }
      stride *= nSeg[s] as number;
    }
    const cellStart = new Int32Array(nCells + 1);
    for (let i = 0; i < n; i++) {
      const at = (cellOf[i] as number) + 1;
      cellStart[at] = (cellStart[at] as number) + 1;
    }
    for (let c = 0; c < nCells; c++) cellStart[c + 1] = (cellStart[c + 1] as number) + (cellStart[c] as number);
    const fill = cellStart.slice(0, nCells);
    const posOf = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const c = cellOf[i] as number;
      posOf[i] = fill[c] as number;
      fill[c] = (fill[c] as number) + 1;
    }
    this.cellStart = cellStart;
    this.posByRank = sides.map(({ order }) => {
      const pos = new Int32Array(n);
      for (let j = 0; j < n; j++) pos[j] = posOf[order[j] as number] as number;
      return pos;
    });
    const nonEmpty: number[] = [];
    for (let c = 0; c < nCells; c++) if ((cellStart[c + 1] as number) > (cellStart[c] as number)) nonEmpty.push(c);
    this.nonEmpty = Int32Array.from(nonEmpty);
    // Cells per segment of each side (cell = sum over sides of g_s * stride_s).
    const strides: number[] = [];
    stride = 1;
    for (let s = sides.length - 1; s >= 0; s--) {
      strides[s] = stride;
      stride *= nSeg[s] as number;
    }
    this.segCells = sides.map((_, s) => {
      const lists: number[][] = Array.from({ length: nSeg[s] as number }, () => []);
      for (const c of nonEmpty) lists[Math.floor(c / (strides[s] as number)) % (nSeg[s] as number)]?.push(c);
      return lists.map((l) => Int32Array.from(l));
    });
    this.cellTotal = new Float64Array(nCells);
    this.cellStamp = new Int32Array(nCells);
    this.weight = new Int32Array(n);
    this.segTotal = nSeg.map((k) => new Float64Array(k));
  }

  /** Draws one resample's cell totals; returns the total weight. */
  draw(rng: Rng): number {
    this.stamp++;
    let total = 0;
    for (const seg of this.segTotal) seg.fill(0);
    for (let k = 0; k < this.nonEmpty.length; k++) {
      const c = this.nonEmpty[k] as number;
      const t = poisson(rng, (this.cellStart[c + 1] as number) - (this.cellStart[c] as number));
      this.cellTotal[c] = t;
      total += t;
    }
    this.segCells.forEach((lists, s) => {
      const seg = this.segTotal[s] as Float64Array;
      lists.forEach((cells, g) => {
        let sum = 0;
        for (let k = 0; k < cells.length; k++) sum += this.cellTotal[cells[k] as number] as number;
        seg[g] = sum;
      });
    });
    return total;
  }

  private expandSegment(s: number, g: number, rng: Rng): void {
    const cells = (this.segCells[s] as Int32Array[])[g] as Int32Array;
    for (let k = 0; k < cells.length; k++) {
      const c = cells[k] as number;
      if (this.cellStamp[c] === this.stamp) continue;
      this.cellStamp[c] = this.stamp;
      const start = this.cellStart[c] as number;
      const size = (this.cellStart[c + 1] as number) - start;
      this.weight.fill(0, start, start + size);
      const balls = this.cellTotal[c] as number;
      for (let b = 0; b < balls; b++) {
        const at = start + rng.int(size);
        this.weight[at] = (this.weight[at] as number) + 1;
      }
    }
  }

  /** Value at 0-based position p of side s's weighted sample, and the next position's value. */
  private valuesAt(s: number, p: number, rng: Rng): [number, number] {
    const seg = this.segTotal[s] as Float64Array;
    const bounds = this.bounds[s] as Int32Array;
    const pos = this.posByRank[s] as Int32Array;
    const sorted = (this.sides[s] as SortedSide).sorted;
    let cum = 0;
    let first = NaN;
    for (let g = 0; g < seg.length; g++) {
      const t = seg[g] as number;
      if (t === 0 || p >= cum + t) {
        cum += t;
        continue;
      }
      this.expandSegment(s, g, rng);
      for (let j = bounds[g] as number; j < (bounds[g + 1] as number); j++) {
        const w = this.weight[pos[j] as number] as number;
        if (w === 0) continue;
        cum += w;
        if (Number.isNaN(first)) {
          if (p < cum) {
            first = sorted[j] as number;
            if (p + 1 < cum) return [first, first];
          }
        } else {
          return [first, sorted[j] as number];
        }
      }
    }
    return [first, first];
  }

  quantile(s: number, total: number, q: number, rng: Rng): number {
    if (total <= 0) return NaN;
    const rank = q * (total - 1);
    const lo = Math.floor(rank);
    const frac = rank - lo;
    const [a, b] = this.valuesAt(s, lo, rng);
    return frac === 0 ? a : a + (b - a) * frac;
  }
}

/**
 * Segment boundaries (ranks) of one side: fine segments of about one standard deviation of the
 * resampled quantile's rank, sqrt(q (1 - q) n), across +-6 of them around each quantile's rank;
 * the rest is coarse. A wanted position outside the fine segments is still exact, only slower.
 */
function segmentBounds(n: number, quantiles: readonly number[]): Int32Array {
  const set = new Set<number>([0, n]);
  for (const q of quantiles) {
    const center = Math.floor(q * (n - 1));
    const h = Math.max(1, Math.ceil(Math.sqrt(q * (1 - q) * n)));
    for (let k = -6; k <= 7; k++) {
      const b = center + k * h;
      if (b > 0 && b < n) set.add(b);
    }
  }
  return Int32Array.from([...set].sort((a, b) => a - b));
}

/** Same finite/non-finite pattern? */
function samePattern(x: Float64Array, y: Float64Array): boolean {
  for (let i = 0; i < x.length; i++) if (Number.isFinite(x[i] as number) !== Number.isFinite(y[i] as number)) return false;
  return true;
}

/**
 * Poisson(1) weights of three units at once, as one code: (w1, w2, w3), each 0..4, is code
 * 25 w1 + 5 w2 + w3 (125 codes, 98.9 % of triples); TRIPLE_OVERFLOW when one of them is 5 or
 * more. Drawn by inversion of the triple's joint law, exact to 2^-48: 16 random bits decide
 * unless their interval straddles a step of the joint CDF (~120 of the 65,536 prefixes); such a
 * prefix is marked TRIPLE_OVERFLOW + 1 + j and 32 more bits decide.
 */
const TRIPLE_OVERFLOW = 128;
const TRIPLE = (() => {
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
function tripleRefine(marker: number, rng: Rng): number {
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
function tripleOverflow(rng: Rng, out: number[]): void {
  const a = TRIPLE.below5;
  const total = 1 - a * a * a;
  const u = rng.double() * total;
  const j = u < 1 - a ? 0 : u < (1 - a) * (1 + a) ? 1 : 2;
  for (let i = 0; i < 3; i++) {
    const v = rng.double();
    out[i] = i < j ? poisson1Quantile(v * a) : i === j ? poisson1Quantile(a + v * (1 - a)) : poisson1Quantile(v);
  }
}

interface WeightedSums {
  /** [resample * C + column]: sum of weight x value over the units where the column is finite. */
  sums: Float64Array;
  C: number;
  /** Per column: the index in `sums` of its weight total (its units' weights summed). */
  weightColumn: Int32Array;
  /** Per resample: the total weight of all units. */
  totals: Float64Array;
}

/**
 * Weighted sums of several columns (metrics, sides) under the same Poisson(1) unit weights:
 * the Poisson bootstrap's means, in one pass over the units for all resamples.
 *
 * The units go three by three: a triple's weights are one of 125 codes (plus a rare
 * overflow), so for each triple of a block of units the weighted sums of all 125 codes are
 * tabulated once, and a resample then costs one table row per triple and column instead of
 * three multiply-adds ("method of four Russians"), and one 16-bit draw per triple. A block's
 * tables (at most 16 triples, ~200 KB for 12 columns) stay in cache while every resample sweeps them.
 * A column with non-finite values gets an indicator column (shared with the previous column
 * when the pattern is the same) whose weighted sum is that column's weight total.
 */
export function poissonWeightedSums(columns: readonly Float64Array[], n: number, R: number, rng: Rng): WeightedSums {
  const weightColumn = new Int32Array(columns.length).fill(-1);
  const source: { column: number; indicator: boolean }[] = columns.map((_, m) => ({ column: m, indicator: false }));
  columns.forEach((col, m) => {
    if (!col.some((v) => !Number.isFinite(v))) return;
    const prev = columns[m - 1];
    if (m > 0 && (weightColumn[m - 1] as number) >= 0 && prev && samePattern(prev, col)) {
      weightColumn[m] = weightColumn[m - 1] as number;
      return;
    }
    weightColumn[m] = source.length;
    source.push({ column: m, indicator: true });
  });
  const C = Math.ceil(source.length / 6) * 6;
  const sums = new Float64Array(R * C);
  const totals = new Float64Array(R);
  const G = Math.max(2, Math.min(16, Math.floor(400_000 / (125 * C * 8)))); // triples per block
  const table = new Float64Array(G * 125 * C);
  const xb = new Float64Array(3 * G * C); // the block's units, row-major, padded with zeros
  const codes = new Uint8Array(G + 1);
  const overflowWeights = [0, 0, 0];
  const { value, wsum, w2: W2, w3: W3 } = TRIPLE;
  let s0 = rng.s0;
  let s1 = rng.s1;
  let s2 = rng.s2;
  let s3 = rng.s3;
  for (let start = 0; start < n; start += 3 * G) {
    const units = Math.min(n - start, 3 * G);
    const groups = Math.ceil(units / 3);
    // The block's values (0 where absent; 1/0 for indicators), then its tables.
    xb.fill(0);
    source.forEach(({ column, indicator }, c) => {
      const col = columns[column] as Float64Array;
      for (let u = 0; u < units; u++) {
        const v = col[start + u] as number;
        if (Number.isFinite(v)) xb[u * C + c] = indicator ? 1 : v;
      }
    });
    for (let g = 0; g < groups; g++) {
      const x1 = 3 * g * C;
      const x2 = x1 + C;
      const x3 = x2 + C;
      for (let a = 0; a <= 4; a++) {
        for (let b = 0; b <= 4; b++) {
          const row = (g * 125 + a * 25 + b * 5) * C;
          for (let c = 0; c < C; c++) {
            const v = a * (xb[x1 + c] as number) + b * (xb[x2 + c] as number);
            const z = xb[x3 + c] as number;
            table[row + c] = v;
            table[row + C + c] = v + z;
            table[row + 2 * C + c] = v + 2 * z;
            table[row + 3 * C + c] = v + 3 * z;
            table[row + 4 * C + c] = v + 4 * z;
          }
        }
      }
    }
    const padding = 3 * groups - units; // zero units in the last triple: their weights are not counted
    for (let r = 0; r < R; r++) {
      let t = 0;
      let flags = 0;
      for (let g = 0; g < groups; g += 2) {
        const m5 = Math.imul(s1, 5);
        const u = Math.imul((m5 << 7) | (m5 >>> 25), 9) >>> 0;
        const x = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= x;
        s3 = (s3 << 11) | (s3 >>> 21);
        const c0 = value[u >>> 16] as number;
        const c1 = value[u & 0xffff] as number;
        codes[g] = c0;
        codes[g + 1] = c1;
        flags |= c0 | c1;
        t += (wsum[c0] as number) + (g + 1 < groups ? (wsum[c1] as number) : 0);
      }
      if (flags & TRIPLE_OVERFLOW || padding > 0) {
        // Rare (an overflow or a straddling prefix in about 1 % of triples), or the last block.
        rng.s0 = s0;
        rng.s1 = s1;
        rng.s2 = s2;
        rng.s3 = s3;
        for (let g = 0; g < groups; g++) {
          let code = codes[g] as number;
          if (code > TRIPLE_OVERFLOW) {
            code = tripleRefine(code, rng);
            t += wsum[code] as number;
          }
          let ws: number[] | null = null;
          if (code === TRIPLE_OVERFLOW) {
            tripleOverflow(rng, overflowWeights);
            ws = overflowWeights;
            const row = 3 * g * C;
            for (let c = 0; c < C; c++) {
              const at = r * C + c;
              sums[at] = (sums[at] as number) + (ws[0] as number) * (xb[row + c] as number) + (ws[1] as number) * (xb[row + C + c] as number) + (ws[2] as number) * (xb[row + 2 * C + c] as number);
            }
            t += (ws[0] as number) + (ws[1] as number) + (ws[2] as number);
            code = 0; // its weighted sums are added: table row 0 adds nothing
          }
          codes[g] = code;
          if (g === groups - 1 && padding > 0) {
            // The padded units' weights were counted in t: take them out.
            const last = ws ? (ws[2] as number) : (W3[code] as number);
            const middle = ws ? (ws[1] as number) : (W2[code] as number);
            t -= padding === 2 ? last + middle : last;
          }
        }
        s0 = rng.s0;
        s1 = rng.s1;
        s2 = rng.s2;
        s3 = rng.s3;
      }
      totals[r] = (totals[r] as number) + t;
      for (let c0 = 0; c0 < C; c0 += 6) {
        let a0 = 0;
        let a1 = 0;
        let a2 = 0;
        let a3 = 0;
        let a4 = 0;
        let a5 = 0;
        for (let g = 0; g < groups; g++) {
          const off = (g * 125 + (codes[g] as number)) * C + c0;
          a0 += table[off] as number;
          a1 += table[off + 1] as number;
          a2 += table[off + 2] as number;
          a3 += table[off + 3] as number;
          a4 += table[off + 4] as number;
          a5 += table[off + 5] as number;
        }
        const o = r * C + c0;
        sums[o] = (sums[o] as number) + a0;
        sums[o + 1] = (sums[o + 1] as number) + a1;
        sums[o + 2] = (sums[o + 2] as number) + a2;
        sums[o + 3] = (sums[o + 3] as number) + a3;
        sums[o + 4] = (sums[o + 4] as number) + a4;
        sums[o + 5] = (sums[o + 5] as number) + a5;
      }
    }
  }
  rng.s0 = s0;
  rng.s1 = s1;
  rng.s2 = s2;
  rng.s3 = s3;
  return { sums, C, weightColumn, totals };
}

/** Stream numbers: independent random streams of one seed. */
const STREAM = { meansBaseline: 1, meansCandidate: 2, quantiles: 100, small: 200, smallCandidate: 300, errors: 400, sample: 500 } as const;

/** Keeps the units where `keep` holds. */
function compact(values: Float64Array, keep: Uint8Array, count: number): Float64Array {
  const out = new Float64Array(count);
  let k = 0;
  for (let i = 0; i < values.length; i++) if (keep[i]) out[k++] = values[i] as number;
  return out;
}

const EMPTY = new Float64Array(0);

/** Draws R resamples of one metric's quantiles from a Poisson quantile sampler over `sides`. */
function poissonQuantiles(sides: SortedSide[], R: number, rng: Rng): SideReplicates[] {
  const out = sides.map(() => emptySide(R));
  const sampler = new PoissonQuantileSampler(sides, Object.values(BOOTSTRAP_QUANTILES));
  for (let r = 0; r < R; r++) {
    const total = sampler.draw(rng);
    for (const stat of QUANTILE_STATS) {
      sides.forEach((_, s) => {
        (out[s] as SideReplicates)[stat][r] = sampler.quantile(s, total, BOOTSTRAP_QUANTILES[stat], rng);
      });
    }
  }
  return out;
}

/** Fills `mean` replicates from weighted sums: column `k` over the weight total of its units. */
function meansFromSums(target: Float64Array, ws: WeightedSums, k: number, R: number): void {
  const ind = ws.weightColumn[k] as number;
  for (let r = 0; r < R; r++) {
    const wsum = ind >= 0 ? (ws.sums[r * ws.C + ind] as number) : (ws.totals[r] as number);
    target[r] = wsum > 0 ? (ws.sums[r * ws.C + k] as number) / wsum : NaN;
  }
}

/**
 * Paired bootstrap. metrics[m].a / .b are aligned on the same units (pairs), NaN where a pair
 * has no value; metric m's sample is its pairs with both values finite. One resample weights
 * each pair once, for both sides.
 */
export function bootstrapPaired(metrics: readonly { a: Float64Array; b: Float64Array }[], options: BootstrapOptions): BootstrapReplicates[] {
  const R = options.resamples;
  const out: BootstrapReplicates[] = metrics.map(() => ({ baseline: emptySide(R), candidate: emptySide(R), sorted: { baseline: EMPTY, candidate: EMPTY } }));
  const large: number[] = [];
  metrics.forEach(({ a, b }, m) => {
    const keep = new Uint8Array(a.length);
    let n = 0;
    for (let i = 0; i < a.length; i++) {
      if (Number.isFinite(a[i] as number) && Number.isFinite(b[i] as number)) {
        keep[i] = 1;
        n++;
      }
    }
    if (n === 0) return;
    const ca = compact(a, keep, n);
    const cb = compact(b, keep, n);
    const sides = [sortSide(ca), sortSide(cb)];
    const rep = out[m] as BootstrapReplicates;
    rep.sorted = { baseline: (sides[0] as SortedSide).sorted, candidate: (sides[1] as SortedSide).sorted };
    if (n < POISSON_BOOTSTRAP_FROM) {
      [rep.baseline, rep.candidate] = multinomialBootstrap([ca, cb], sides, R, new Rng(options.seed, STREAM.small + m)) as [SideReplicates, SideReplicates];
      return;
    }
    large.push(m);
    const [qa, qb] = poissonQuantiles(sides, R, new Rng(options.seed, STREAM.quantiles + m)) as [SideReplicates, SideReplicates];
    for (const stat of QUANTILE_STATS) {
      rep.baseline[stat] = qa[stat];
      rep.candidate[stat] = qb[stat];
    }
  });
  if (large.length > 0) {
    // Means of every large metric in one pass over the pairs, both sides. A pair without both
    // values of metric m weighs nothing in m's means (its two columns are NaN together).
    const columns: Float64Array[] = [];
    for (const m of large) {
      const { a, b } = metrics[m] as { a: Float64Array; b: Float64Array };
      if (samePattern(a, b)) columns.push(a, b);
      else {
        const both = (x: Float64Array, y: Float64Array) => x.map((v, i) => (Number.isFinite(v) && Number.isFinite(y[i] as number) ? v : NaN));
        columns.push(both(a, b), both(b, a));
      }
    }
    const n = (metrics[0] as { a: Float64Array }).a.length;
    const ws = poissonWeightedSums(columns, n, R, new Rng(options.seed, STREAM.meansBaseline));
    large.forEach((m, k) => {
      const rep = out[m] as BootstrapReplicates;
      meansFromSums(rep.baseline.mean, ws, 2 * k, R);
      meansFromSums(rep.candidate.mean, ws, 2 * k + 1, R);
    });
  }
  return out;
}

/**
 * Unpaired bootstrap: each side's finite values resampled independently (its own draws, its
 * own size). metrics[m].a and .b are the sides' values per row, NaN where absent.
 */
export function bootstrapUnpaired(metrics: readonly { a: Float64Array; b: Float64Array }[], options: BootstrapOptions): BootstrapReplicates[] {
  const R = options.resamples;
  const out: BootstrapReplicates[] = metrics.map(() => ({ baseline: emptySide(R), candidate: emptySide(R), sorted: { baseline: EMPTY, candidate: EMPTY } }));
  (['a', 'b'] as const).forEach((side, s) => {
    const key = side === 'a' ? 'baseline' : 'candidate';
    const large: number[] = [];
    metrics.forEach((metric, m) => {
      const finite = metric[side].filter((v) => Number.isFinite(v));
      const n = finite.length;
      if (n === 0) return;
      const rep = out[m] as BootstrapReplicates;
      const sorted = sortSide(finite);
      rep.sorted[key] = sorted.sorted;
      if (n < POISSON_BOOTSTRAP_FROM) {
        rep[key] = multinomialBootstrap([finite], [sorted], R, new Rng(options.seed, (s === 0 ? STREAM.small : STREAM.smallCandidate) + m))[0] as SideReplicates;
        return;
      }
      large.push(m);
      const [q] = poissonQuantiles([sorted], R, new Rng(options.seed, STREAM.quantiles + 2 * m + s)) as [SideReplicates];
      for (const stat of QUANTILE_STATS) rep[key][stat] = q[stat];
    });
    if (large.length === 0) return;
    const columns = large.map((m) => (metrics[m] as { a: Float64Array; b: Float64Array })[side]);
    const n = (columns[0] as Float64Array).length;
    const ws = poissonWeightedSums(columns, n, R, new Rng(options.seed, s === 0 ? STREAM.meansBaseline : STREAM.meansCandidate));
    large.forEach((m, k) => meansFromSums((out[m] as BootstrapReplicates)[key].mean, ws, k, R));
  });
  return out;
}

/**
 * Quantile replicates (p50, p90, p99) of one sample, e.g. the per-pair differences B - A: the
 * same resampling as the sides' (classic below POISSON_BOOTSTRAP_FROM values, Poisson
 * weights from there), its own random stream so the sides' intervals do not move.
 */
export function bootstrapSampleQuantiles(values: Float64Array, options: BootstrapOptions, stream: number): Omit<SideReplicates, 'mean'> {
  const R = options.resamples;
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return emptySide(R);
  const sorted = sortSide(finite);
  const rng = new Rng(options.seed, STREAM.sample + stream);
  const rep = finite.length < POISSON_BOOTSTRAP_FROM ? multinomialBootstrap([finite], [sorted], R, rng)[0] : poissonQuantiles([sorted], R, rng)[0];
  return rep as SideReplicates;
}

/**
 * Bootstrap replicates of an error-rate difference (candidate rate - baseline rate).
 * Paired: the fired pairs fall in four cells (baseline failed?, candidate failed?), resampled
 * together. Unpaired: each side's fired rows resampled on their own. Multinomial below
 * POISSON_BOOTSTRAP_FROM units, independent Poisson cell totals from there (the same two methods
 * as the metrics, with no per-unit work since a unit is only its cell).
 */
export function bootstrapRateDifference(
  cells: { paired: true; bothFailed: number; baselineOnly: number; candidateOnly: number; neither: number } | { paired: false; baselineFailed: number; baselineFired: number; candidateFailed: number; candidateFired: number },
  options: BootstrapOptions,
): Float64Array {
  const R = options.resamples;
  const out = new Float64Array(R).fill(NaN);
  const rng = new Rng(options.seed, STREAM.errors);
  // Resample counts of categories with the given sizes; returns the resampled counts.
  const resample = (sizes: readonly number[]): number[] => {
    const n = sizes.reduce((a, b) => a + b, 0);
    if (n >= POISSON_BOOTSTRAP_FROM) return sizes.map((k) => poisson(rng, k));
    const counts = sizes.map(() => 0);
    const edges: number[] = [];
    let acc = 0;
    for (const k of sizes) edges.push((acc += k));
    for (let i = 0; i < n; i++) {
      const u = rng.int(n);
      let c = 0;
      while (u >= (edges[c] as number)) c++;
      counts[c] = (counts[c] as number) + 1;
    }
    return counts;
  };
  for (let r = 0; r < R; r++) {
    if (cells.paired) {
      const [ff, fo, of, oo] = resample([cells.bothFailed, cells.baselineOnly, cells.candidateOnly, cells.neither]) as [number, number, number, number];
      const n = ff + fo + of + oo;
      if (n > 0) out[r] = (ff + of - (ff + fo)) / n;
    } else {
      const [af, ao] = resample([cells.baselineFailed, cells.baselineFired - cells.baselineFailed]) as [number, number];
      const [bf, bo] = resample([cells.candidateFailed, cells.candidateFired - cells.candidateFailed]) as [number, number];
      if (af + ao > 0 && bf + bo > 0) out[r] = bf / (bf + bo) - af / (af + ao);
    }
  }
  return out;
}

/** Percentile interval of bootstrap replicates (finite ones), numpy-linear: [lower, upper]. */
export function percentileInterval(replicates: Float64Array, confidence: number): [number, number] | null {
  const sorted = sortedFinite(replicates);
  if (sorted.length === 0) return null;
  const tail = ((1 - confidence) / 2) * 100;
  return [percentileSorted(sorted, tail), percentileSorted(sorted, 100 - tail)];
}

/** The interval method, for `ComparisonMethod.interval`. */
export function describeIntervalMethod(resamples: number): string {
  const from = POISSON_BOOTSTRAP_FROM.toLocaleString('en-US');
  return (
    `percentile bootstrap, ${resamples} resamples; paired comparisons resample pairs (one draw for both targets), ` +
    `unpaired ones each target's values independently; below ${from} values (pairs, or one target's values) ` +
    `n values drawn with replacement, from ${from} on Poisson(1) weights per value (Poisson bootstrap, Hanley & MacGibbon 2006), ` +
    `a metric's means and quantiles then from independent resamples; resample statistics as numpy's mean and linear percentile`
  );
}

