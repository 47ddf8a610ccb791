/**
 * The Wilcoxon signed-rank test, as scipy.stats.wilcoxon(d) with SciPy 1.17's defaults
 * (checked against fixtures SciPy computed, see scripts/stats-fixtures.py). No package fits:
 * `@stdlib/stats-wilcoxon` follows R's rules (continuity correction, exact below 50 with no tie
 * rule for zeros), not SciPy's.
 */
import { sortFloat64InPlace } from './sort';
import { normalSf } from './special-functions';
import { clip01, type TestResult } from './test-result';

/** Distribution of Wilcoxon's R+ for n untied non-zero differences (scipy's _get_wilcoxon_distr). */
function wilcoxonPmf(n: number): Float64Array {
  let c = new Float64Array([1]);
  for (let k = 1; k <= n; k++) {
    const next = new Float64Array((k * (k + 1)) / 2 + 1);
    const m = c.length;
    for (let i = 0; i < m; i++) next[i] = (c[i] as number) * 0.5;
    for (let i = 0; i < m; i++)
      next[next.length - m + i] = (next[next.length - m + i] as number) + (c[i] as number) * 0.5;
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

/** Signed ranks of a split: R+, the tie correction's sum of t^3 - t, and (when asked) every average rank. */
interface SignedRanks {
  rPlus: number;
  tieTerm: number;
  hasTies: boolean;
  /** Average rank of each non-zero difference, for the permutation test; null when not asked for. */
  ranks: Float64Array | null;
}

/** Average ranks of |d| over the non-zero differences, tie groups merged across signs. */
function signedRanks(split: SignedSplit, keepRanks: boolean): SignedRanks {
  const P = split.positive;
  const N = split.negative;
  let i = 0;
  let j = 0;
  let rank0 = 0;
  let rPlus = 0;
  let tieTerm = 0;
  let hasTies = false;
  const ranks = keepRanks ? new Float64Array(P.length + N.length) : null;
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
    if (ranks) for (let k = 0; k < t; k++, r++) ranks[r] = avg;
    rank0 += t;
  }
  return { rPlus, tieTerm, hasTies, ranks };
}

/** Normal approximation with the tie correction of the variance, no continuity correction. */
function asymptoticP(count: number, rPlus: number, tieTerm: number): number {
  const mn = (count * (count + 1)) / 4;
  const se = Math.sqrt((count * (count + 1) * (2 * count + 1) - tieTerm / 2) / 24);
  const z = (rPlus - mn) / se;
  return Number.isFinite(z) ? 2 * normalSf(Math.abs(z)) : NaN;
}

/** The exact distribution of R+ for untied, non-zero differences. */
function exactP(count: number, rPlus: number): number {
  const pmf = wilcoxonPmf(count);
  const k = Math.round(rPlus);
  // 2 min(sf(k), cdf(k)), each summed directly (the smaller tail is the accurate one).
  let cdf = 0;
  for (let x = 0; x <= k; x++) cdf += pmf[x] as number;
  let sf = 0;
  for (let x = k; x < pmf.length; x++) sf += pmf[x] as number;
  return clip01(2 * Math.min(sf, cdf));
}

/**
 * Every sign flip of the non-zero differences (a zero flips to itself: each flip of the
 * zeros repeats the same statistic, so the proportions are those of the 2^total flips).
 */
function permutationP(ranks: Float64Array, rPlus: number): number {
  const count = ranks.length;
  const flips = 1 << count;
  const gamma = Math.abs(100 * Number.EPSILON * rPlus);
  let less = 0;
  let greater = 0;
  for (let mask = 0; mask < flips; mask++) {
    let s = 0;
    for (let b = 0; b < count; b++) if (mask & (1 << b)) s += ranks[b] as number;
    if (s <= rPlus + gamma) less++;
    if (s >= rPlus - gamma) greater++;
  }
  return clip01(2 * Math.min(less / flips, greater / flips));
}

/** wilcoxonSignedRank on differences already split by sign. */
export function wilcoxonSignedRankSplit(split: SignedSplit): TestResult {
  const zeros = split.zeros;
  const count = split.positive.length + split.negative.length;
  const total = count + zeros;
  if (total === 0) return { statistic: NaN, pValue: null, method: 'asymptotic', direction: 0, n: 0 };
  const { rPlus, tieTerm, hasTies, ranks } = signedRanks(split, total <= 13);
  const rMinus = (count * (count + 1)) / 2 - rPlus;
  const direction: -1 | 0 | 1 = rPlus > rMinus ? 1 : rPlus < rMinus ? -1 : 0;

  let method: TestResult['method'];
  if (total > 50) method = 'asymptotic';
  else if (!hasTies && zeros === 0) method = 'exact';
  else if (total <= 13) method = 'permutation';
  else method = 'asymptotic';

  const p =
    method === 'asymptotic'
      ? asymptoticP(count, rPlus, tieTerm)
      : method === 'exact'
        ? exactP(count, rPlus)
        : permutationP(ranks as Float64Array, rPlus);
  return { statistic: rPlus, pValue: Number.isFinite(p) ? p : null, method, direction, n: count };
}
