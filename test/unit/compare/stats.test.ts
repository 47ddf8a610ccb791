/**
 * lambdas/core/stats/ against references computed independently by numpy and scipy
 * (scripts/stats-fixtures.py -> test/fixtures/stats/*.json).
 *
 * The tolerances, and why each: expectP.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { percentile, quantiles101Sorted } from '../../../lambdas/core/metrics/stats';
import { bootstrapPaired, bootstrapUnpaired } from '../../../lambdas/core/stats/bootstrap/bootstrap';
import { percentileInterval } from '../../../lambdas/core/stats/bootstrap/interval';
import { poissonWeightedSums } from '../../../lambdas/core/stats/bootstrap/poisson-means';
import { bootstrapRateDifference } from '../../../lambdas/core/stats/bootstrap/rate-difference';
import type { BootstrapReplicates } from '../../../lambdas/core/stats/bootstrap/replicates';
import { binomTestHalf, fisherExact2x2, mcnemarExact } from '../../../lambdas/core/stats/exact-tests';
import { holm } from '../../../lambdas/core/stats/holm';
import { mannWhitneyU } from '../../../lambdas/core/stats/mann-whitney';
import { poisson, Rng } from '../../../lambdas/core/stats/rng';
import { argsortFloat64, sortedFinite, sortFloat64InPlace } from '../../../lambdas/core/stats/sort';
import { erfc } from '../../../lambdas/core/stats/special-functions';
import { wilcoxonSignedRank } from '../../../lambdas/core/stats/wilcoxon';

const fixture = <T>(name: string): T =>
  JSON.parse(readFileSync(join(__dirname, '../../fixtures/stats', name), 'utf8')) as T;

interface TestRef {
  statistic: number;
  pvalue: number;
}

/**
 * Tolerances:
 *   - p-values from exact distributions (Wilcoxon exact and sign-flip permutation, Mann-Whitney
 *     exact, binomial, Fisher): 1e-9 relative, plus 1e-15 absolute (SciPy sums one tail as
 *     1 - the other's CDF, which leaves ~1e-16 of rounding in a p-value near 1e-15);
 *   - p-values from the normal approximation: 1e-6 relative (both use erfc; the rank sums are
 *     exact, the difference is rounding);
 *   - percentiles: 1e-12 relative (same formula);
 *   - bootstrap intervals: different generators, so only as close as Monte Carlo allows. The
 *     reference uses 20,000 (10,000 for n = 12,000) resamples, ours 10,000. An endpoint of a
 *     95 % percentile interval estimated from B resamples has a standard error of about
 *     sqrt(0.025 * 0.975 / B) / phi(1.96) = 0.06 / sqrt(B) bootstrap standard deviations, the
 *     interval is 3.92 of them wide: 0.7 % of the width for B = 10,000, 0.5 % for 20,000, so
 *     the two estimates differ by ~0.9 % of the width (one sd). We allow 6 % of the width
 *     (over 6 sd), plus, for quantiles, the largest gap between neighbouring data values near
 *     the quantile: a resample's quantile moves in steps of one order statistic, so an
 *     endpoint can land one step away from another generator's (in the tail of 300 integer
 *     values that step is ~9 % of the interval). Checked with seeds 1-7 when written; worst
 *     seen 5 % of the width beyond the step.
 */
function expectP(actual: number | null, expected: number, rel: number): void {
  expect(actual).not.toBeNull();
  const a = actual as number;
  const tol = rel * Math.abs(expected) + 1e-15;
  if (Math.abs(a - expected) > tol) throw new Error(`p-value ${a} differs from ${expected} by more than ${tol}`);
}

/** scipy reports min(R+, R-) for a two-sided test; we report R+. */
const twoSidedStatistic = (r: { statistic: number; n: number }) =>
  Math.min(r.statistic, (r.n * (r.n + 1)) / 2 - r.statistic);

describe('Wilcoxon signed-rank (scipy.stats.wilcoxon defaults)', () => {
  it('small samples with ties and zeros: permutation (n <= 13) and normal approximation', () => {
    const { cases } = fixture<{ cases: { d: number[]; wilcoxon: TestRef }[] }>('wilcoxon-small.json');
    for (const c of cases) {
      const r = wilcoxonSignedRank(c.d);
      const exact = r.method !== 'asymptotic';
      expectP(r.pValue, c.wilcoxon.pvalue, exact ? 1e-9 : 1e-6);
      expect(twoSidedStatistic(r)).toBeCloseTo(c.wilcoxon.statistic, 9);
    }
    expect(wilcoxonSignedRank([0, 0, 0]).method).toBe('permutation');
    expect(wilcoxonSignedRank([1.5, -2, 0, 3, 3, -1.5, 4, 0, 2, 5]).method).toBe('permutation');
  });

  it('distinct non-zero differences up to 50: the exact distribution', () => {
    const { cases } = fixture<{ cases: { d: number[]; wilcoxon: TestRef }[] }>('wilcoxon-exact.json');
    for (const c of cases) {
      const r = wilcoxonSignedRank(c.d);
      expect(r.method).toBe('exact');
      expectP(r.pValue, c.wilcoxon.pvalue, 1e-9);
      expect(twoSidedStatistic(r)).toBe(c.wilcoxon.statistic);
    }
  });

  it('500 and 12,000 pairs: normal approximation with tie correction', () => {
    for (const name of ['paired-n500.json', 'lognormal-n12000.json']) {
      const f = fixture<{ a: number[]; b: number[]; wilcoxon: TestRef }>(name);
      const d = f.b.map((v, i) => v - (f.a[i] as number));
      const r = wilcoxonSignedRank(d);
      expect(r.method).toBe('asymptotic');
      expectP(r.pValue, f.wilcoxon.pvalue, 1e-6);
      expect(twoSidedStatistic(r)).toBeCloseTo(f.wilcoxon.statistic, 6);
    }
  });

  it('no values, and every difference zero beyond 13 values: no p-value', () => {
    expect(wilcoxonSignedRank([]).pValue).toBeNull();
    expect(wilcoxonSignedRank(new Array(20).fill(0)).pValue).toBeNull();
    expect(wilcoxonSignedRank([1, 2, NaN, 3]).n).toBe(3);
  });

  it('tells which way the differences lean', () => {
    expect(wilcoxonSignedRank([1, 2, 3, -0.5]).direction).toBe(1);
    expect(wilcoxonSignedRank([-1, -2, -3, 0.5]).direction).toBe(-1);
  });
});

describe('Mann-Whitney U (scipy.stats.mannwhitneyu defaults)', () => {
  const f = fixture<{
    x: number[];
    y: number[];
    mannwhitneyu: TestRef;
    exact_cases: { x: number[]; y: number[]; mannwhitneyu: TestRef }[];
    ties_cases: { x: number[]; y: number[]; mannwhitneyu: TestRef }[];
  }>('unpaired.json');

  it('large samples with ties: normal approximation, continuity and tie corrections', () => {
    const r = mannWhitneyU(f.x, f.y);
    expect(r.method).toBe('asymptotic');
    expectP(r.pValue, f.mannwhitneyu.pvalue, 1e-6);
    // Our statistic is the candidate's U (y); scipy reports x's: U_y = n1 n2 - U_x.
    expect(r.statistic).toBe(f.x.length * f.y.length - f.mannwhitneyu.statistic);
    const big = fixture<{ a: number[]; b: number[]; mannwhitneyu: TestRef }>('lognormal-n12000.json');
    expectP(mannWhitneyU(big.a, big.b).pValue, big.mannwhitneyu.pvalue, 1e-6);
  });

  it('a sample of at most 8 and no ties: the exact distribution', () => {
    for (const c of f.exact_cases) {
      const r = mannWhitneyU(c.x, c.y);
      expect(r.method).toBe('exact');
      expectP(r.pValue, c.mannwhitneyu.pvalue, 1e-9);
    }
  });

  it('small samples with ties: normal approximation (scipy does not go exact with ties)', () => {
    for (const c of f.ties_cases) {
      const r = mannWhitneyU(c.x, c.y);
      expect(r.method).toBe('asymptotic');
      expectP(r.pValue, c.mannwhitneyu.pvalue, 1e-6);
    }
  });

  it('an empty side: no p-value', () => {
    expect(mannWhitneyU([], [1, 2]).pValue).toBeNull();
  });
});

describe('counts: McNemar exact, Fisher exact, Holm', () => {
  const f = fixture<{
    binomtest: { k: number; n: number; pvalue: number }[];
    fisher_exact: { table: [[number, number], [number, number]]; pvalue: number }[];
    holm: { p: (number | null)[]; adjusted: (number | null)[] };
  }>('counts.json');

  it('binomtest(k, n, 0.5) two-sided', () => {
    for (const c of f.binomtest) expectP(binomTestHalf(c.k, c.n), c.pvalue, 1e-9);
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(3, 7)).toBe(binomTestHalf(3, 10));
  });

  it('fisher_exact two-sided', () => {
    for (const c of f.fisher_exact) {
      const [[a, b], [cc, d]] = c.table;
      expectP(fisherExact2x2(a, b, cc, d), c.pvalue, 1e-9);
    }
  });

  it('Holm-Bonferroni, nulls passed through', () => {
    const out = holm(f.holm.p);
    out.forEach((p, i) => {
      const e = f.holm.adjusted[i];
      if (e === null || e === undefined) expect(p).toBeNull();
      else expect(p).toBeCloseTo(e, 15);
    });
    expect(holm([])).toEqual([]);
    expect(holm([null, 0.2])).toEqual([null, 0.2]);
  });
});

describe('percentiles and sorting', () => {
  it('numpy linear percentiles, the same as metrics/stats.ts', () => {
    const f = fixture<{ a: number[]; b: number[]; percentiles: { a: Record<string, number> } }>('paired-n500.json');
    const sorted = sortedFinite(f.a);
    for (const [q, expected] of Object.entries(f.percentiles.a)) {
      const got = percentile(sorted, Number(q));
      expect(Math.abs(got - expected)).toBeLessThanOrEqual(1e-12 * Math.abs(expected));
      expect(got).toBe(percentile(Array.from(sorted), Number(q)));
    }
    const q = quantiles101Sorted(sorted);
    expect(q).toHaveLength(101);
    expect(q[50]).toBe(f.percentiles.a['50']);
    expect(quantiles101Sorted(new Float64Array(0))).toEqual([]);
  });

  it('argsort by radix on the float bits: negative, zero, ties, stable', () => {
    const v = new Float64Array([3.5, -1, 0, -0, 2, -1e300, 1e-300, 2, -3.25, Number.MAX_VALUE]);
    const order = Array.from(argsortFloat64(v));
    const sorted = order.map((i) => v[i] as number);
    expect(sorted.map((x) => x + 0)).toEqual([...v].sort((a, b) => a - b).map((x) => x + 0)); // -0 and 0 compare equal
    expect(Object.is(sorted[3], -0)).toBe(true); // -0 sorts just before 0
    expect(order.indexOf(4)).toBeLessThan(order.indexOf(7)); // stable for the tied 2s
    const rng = new Rng(5, 0);
    const big = Float64Array.from(
      { length: 50_000 },
      () => Math.exp(rng.double() * 20 - 10) * (rng.double() < 0.2 ? -1 : 1),
    );
    const o = argsortFloat64(big);
    // One expect for the whole order (50,000 would cost more than the sort): the first position out of order, if any.
    const outOfOrder = Array.from(o).findIndex(
      (at, i) => i > 0 && (big[at] as number) < (big[o[i - 1] as number] as number),
    );
    expect(outOfOrder).toBe(-1);
  });

  it('the in-place radix sort (4,096 values and more) equals TypedArray#sort, negatives and -0 included', () => {
    const rng = new Rng(6, 0);
    const big = Float64Array.from({ length: 20_000 }, (_, i) =>
      i % 997 === 0 ? -0 : Math.exp(rng.double() * 40 - 20) * (rng.double() < 0.3 ? -1 : 1),
    );
    const expected = Float64Array.from(big).sort();
    expect(Array.from(sortFloat64InPlace(big))).toEqual(Array.from(expected));
  });
});

describe('random numbers', () => {
  it('Poisson(1) weights of the fused means: the law of each weight, independence, padding', () => {
    // Three units, the k-th column is 1 on unit k only: its weighted sum is unit k's weight.
    const n = 3;
    const cols = [0, 1, 2].map((k) => Float64Array.from({ length: n }, (_, i) => (i === k ? 1 : 0)));
    const R = 300_000;
    const ws = poissonWeightedSums(cols, n, R, new Rng(11, 2));
    const freq = new Array(12).fill(0);
    let cross = 0;
    // Resamples whose total is not the sum of their weights: one expect at the end, not R.
    const badTotals: number[] = [];
    for (let r = 0; r < R; r++) {
      const w0 = ws.sums[r * ws.C] as number;
      const w1 = ws.sums[r * ws.C + 1] as number;
      const w2 = ws.sums[r * ws.C + 2] as number;
      if (ws.totals[r] !== w0 + w1 + w2) badTotals.push(r);
      freq[Math.min(11, w0)]++;
      freq[Math.min(11, w2)]++;
      cross += (w0 - 1) * (w1 - 1);
    }
    let p = Math.exp(-1);
    for (let k = 0; k <= 7; k++) {
      const expected = 2 * R * p;
      expect(Math.abs((freq[k] as number) - expected)).toBeLessThan(5 * Math.sqrt(expected) + 1);
      p /= k + 1;
    }
    expect(badTotals).toEqual([]);
    expect(Math.abs(cross / R)).toBeLessThan(5 / Math.sqrt(R));
    // A unit count that is not a multiple of three: the padding weighs nothing.
    const ones = new Float64Array(3001).fill(1);
    const big = poissonWeightedSums([ones], 3001, 400, new Rng(1, 1));
    for (let r = 0; r < 400; r++) expect(big.sums[r * big.C]).toBe(big.totals[r]);
    const totals = Array.from(big.totals);
    const m = totals.reduce((a, b) => a + b, 0) / 400;
    const v = totals.reduce((a, b) => a + (b - m) ** 2, 0) / 399;
    expect(Math.abs(m - 3001)).toBeLessThan(5 * Math.sqrt(3001 / 400));
    expect(v / 3001).toBeGreaterThan(0.8);
    expect(v / 3001).toBeLessThan(1.2);
  });

  it('Poisson variates have the right mean and variance, small and large means', () => {
    const rng = new Rng(3, 1);
    for (const lam of [0.5, 4, 30, 5000]) {
      const N = 20_000;
      let s = 0;
      let s2 = 0;
      for (let i = 0; i < N; i++) {
        const x = poisson(rng, lam);
        s += x;
        s2 += x * x;
      }
      const m = s / N;
      const v = s2 / N - m * m;
      expect(Math.abs(m - lam)).toBeLessThan(5 * Math.sqrt(lam / N));
      expect(Math.abs(v / lam - 1)).toBeLessThan(0.05);
    }
  });

  it('integers are uniform and the same seed gives the same stream', () => {
    const a = new Rng(42, 7);
    const b = new Rng(42, 7);
    const c = new Rng(42, 8);
    const xs = Array.from({ length: 10 }, () => a.u32());
    expect(Array.from({ length: 10 }, () => b.u32())).toEqual(xs);
    expect(Array.from({ length: 10 }, () => c.u32())).not.toEqual(xs);
    const counts = new Array(7).fill(0);
    for (let i = 0; i < 70_000; i++) counts[a.int(7)]++;
    for (const k of counts) expect(Math.abs(k - 10_000)).toBeLessThan(500);
  });
});

interface BootRef {
  resamples: number;
  intervals: Record<
    'mean' | 'p50' | 'p90' | 'p99',
    {
      difference: [number, number];
      relative_pct: [number, number];
      baseline: [number, number];
      candidate: [number, number];
    }
  >;
}

/**
 * The largest gap between neighbouring values of `sorted` around its q-quantile (within three
 * standard deviations of the resampled quantile's rank): a resample's quantile moves in such
 * steps, so an interval endpoint can sit a step away from another generator's.
 */
function stepNear(sorted: Float64Array, q: number): number {
  const n = sorted.length;
  const sd = Math.sqrt(q * (1 - q) * n);
  const from = Math.max(0, Math.floor(q * (n - 1) - 3 * sd));
  const to = Math.min(n - 1, Math.ceil(q * (n - 1) + 3 * sd));
  let gap = 0;
  for (let j = from; j < to; j++) gap = Math.max(gap, (sorted[j + 1] as number) - (sorted[j] as number));
  return gap;
}

const QUANTILE_OF = { p50: 0.5, p90: 0.9, p99: 0.99 } as const;

function expectIntervalsClose(
  data: { a: ArrayLike<number>; b: ArrayLike<number> },
  reps: BootstrapReplicates,
  ref: BootRef,
  stats: readonly ('mean' | 'p50' | 'p90' | 'p99')[],
  tolerance = 0.06,
): void {
  const sa = sortedFinite(data.a);
  const sb = sortedFinite(data.b);
  for (const stat of stats) {
    const stepA = stat === 'mean' ? 0 : stepNear(sa, QUANTILE_OF[stat]);
    const stepB = stat === 'mean' ? 0 : stepNear(sb, QUANTILE_OF[stat]);
    const statA = stat === 'mean' ? sa.reduce((x, y) => x + y, 0) / sa.length : percentile(sa, QUANTILE_OF[stat] * 100);
    const a = reps.baseline[stat];
    const b = reps.candidate[stat];
    const diff = b.map((v, i) => v - (a[i] as number));
    const rel = b.map((v, i) => ((v - (a[i] as number)) / (a[i] as number)) * 100);
    const check = (replicates: Float64Array, expected: [number, number], step: number, what: string) => {
      const got = percentileInterval(replicates, 0.95) as [number, number];
      const width = expected[1] - expected[0];
      const allowed = tolerance * width + step;
      for (let k = 0; k < 2; k++) {
        const off = Math.abs((got[k] as number) - (expected[k] as number));
        if (off > allowed)
          throw new Error(
            `${stat} ${what}: [${got.join(', ')}] vs numpy [${expected.join(', ')}] ` +
              `(${((off / width) * 100).toFixed(1)} % of the width, step ${step})`,
          );
      }
    };
    check(diff, ref.intervals[stat].difference, stepA + stepB, 'difference');
    check(rel, ref.intervals[stat].relative_pct, ((stepA + stepB) / statA) * 100, 'relative');
    check(a, ref.intervals[stat].baseline, stepA, 'baseline');
    check(b, ref.intervals[stat].candidate, stepB, 'candidate');
  }
}

describe('bootstrap percentile intervals against numpy', () => {
  it('paired, 500 pairs (classic resampling of pairs)', () => {
    const f = fixture<{ a: number[]; b: number[]; bootstrap: BootRef }>('paired-n500.json');
    const [reps] = bootstrapPaired([{ a: Float64Array.from(f.a), b: Float64Array.from(f.b) }], {
      resamples: 10_000,
      seed: 1,
    });
    expectIntervalsClose(f, reps as BootstrapReplicates, f.bootstrap, ['mean', 'p50', 'p90']);
  });

  it('unpaired, 300 and 250 values', () => {
    const f = fixture<{ x: number[]; y: number[]; bootstrap: BootRef }>('unpaired.json');
    const [reps] = bootstrapUnpaired([{ a: Float64Array.from(f.x), b: Float64Array.from(f.y) }], {
      resamples: 10_000,
      seed: 1,
    });
    expectIntervalsClose({ a: f.x, b: f.y }, reps as BootstrapReplicates, f.bootstrap, ['mean', 'p50', 'p90']);
  });

  it('12,000 lognormal pairs: the Poisson bootstrap (cells for quantiles, fused means) agrees with numpy classic resampling', () => {
    const f = fixture<{ a: number[]; b: number[]; bootstrap_paired: BootRef; bootstrap_unpaired: BootRef }>(
      'lognormal-n12000.json',
    );
    const data = [{ a: Float64Array.from(f.a), b: Float64Array.from(f.b) }];
    const [paired] = bootstrapPaired(data, { resamples: 10_000, seed: 1 });
    expectIntervalsClose(f, paired as BootstrapReplicates, f.bootstrap_paired, ['mean', 'p50', 'p90', 'p99']);
    const [unpaired] = bootstrapUnpaired(data, { resamples: 10_000, seed: 1 });
    expectIntervalsClose(f, unpaired as BootstrapReplicates, f.bootstrap_unpaired, ['mean', 'p50', 'p90', 'p99']);
  });

  it('the same seed gives the same replicates; pairs missing a value are left out of that metric', () => {
    const rng = new Rng(9, 9);
    const n = 12_000;
    const a = Float64Array.from({ length: n }, () => 100 + rng.double() * 50);
    const b = a.map((v) => v * (1.05 + rng.double() * 0.01));
    const withGaps = a.map((v, i) => (i % 10 === 0 ? NaN : v));
    const run = () =>
      bootstrapPaired(
        [
          { a, b },
          { a: withGaps, b },
        ],
        { resamples: 200, seed: 4 },
      );
    const [r1, g1] = run();
    const [r2] = run();
    expect(Array.from((r1 as BootstrapReplicates).candidate.p90)).toEqual(
      Array.from((r2 as BootstrapReplicates).candidate.p90),
    );
    expect(Array.from((r1 as BootstrapReplicates).baseline.mean)).toEqual(
      Array.from((r2 as BootstrapReplicates).baseline.mean),
    );
    // With every 10th pair gone (a uniform subset), the means barely move.
    const gaps = g1 as BootstrapReplicates;
    const ci = percentileInterval(gaps.baseline.mean, 0.95) as [number, number];
    expect(ci[0]).toBeGreaterThan(124);
    expect(ci[1]).toBeLessThan(126);
    for (const v of gaps.baseline.p50) expect(Number.isFinite(v)).toBe(true);
  });
});

describe('error-rate bootstrap', () => {
  it('paired cells and unpaired sides give an interval around the observed difference', () => {
    for (const scale of [1, 100]) {
      const paired = bootstrapRateDifference(
        {
          paired: true,
          bothFailed: 2 * scale,
          baselineOnly: 3 * scale,
          candidateOnly: 13 * scale,
          neither: 82 * scale,
        },
        { resamples: 2000, seed: 1 },
      );
      const ci = percentileInterval(paired, 0.95) as [number, number];
      expect(ci[0]).toBeLessThan(0.1);
      expect(ci[1]).toBeGreaterThan(0.1);
      const unpaired = bootstrapRateDifference(
        {
          paired: false,
          baselineFailed: 5 * scale,
          baselineFired: 100 * scale,
          candidateFailed: 15 * scale,
          candidateFired: 100 * scale,
        },
        { resamples: 2000, seed: 1 },
      );
      const cu = percentileInterval(unpaired, 0.95) as [number, number];
      expect(cu[0]).toBeLessThan(0.1);
      expect(cu[1]).toBeGreaterThan(0.1);
      expect(cu[1] - cu[0]).toBeGreaterThan(ci[1] - ci[0]); // pairing narrows the interval
    }
  });
  it(
    "no request failed, or every one: every resample is the sample itself (0, or the sides' own rates); one " +
      'failure makes them vary',
    () => {
      const options = { resamples: 500, seed: 3 };
      const constant = (r: Float64Array) => [...new Set(r)];
      expect(
        constant(
          bootstrapRateDifference(
            { paired: true, bothFailed: 0, baselineOnly: 0, candidateOnly: 0, neither: 400 },
            options,
          ),
        ),
      ).toEqual([0]);
      expect(
        constant(
          bootstrapRateDifference(
            { paired: true, bothFailed: 400, baselineOnly: 0, candidateOnly: 0, neither: 0 },
            options,
          ),
        ),
      ).toEqual([0]);
      expect(
        constant(
          bootstrapRateDifference(
            { paired: false, baselineFailed: 0, baselineFired: 300, candidateFailed: 200, candidateFired: 200 },
            options,
          ),
        ),
      ).toEqual([1]);
      expect(
        constant(
          bootstrapRateDifference(
            { paired: true, bothFailed: 0, baselineOnly: 0, candidateOnly: 1, neither: 399 },
            options,
          ),
        ).length,
      ).toBeGreaterThan(1);
      expect(
        constant(
          bootstrapRateDifference(
            { paired: false, baselineFailed: 0, baselineFired: 300, candidateFailed: 1, candidateFired: 200 },
            options,
          ),
        ).length,
      ).toBeGreaterThan(1);
    },
  );
});

describe('erfc', () => {
  // scipy.special.erfc at these points (scipy 1.17).
  it.each([
    [0, 1.0],
    [0.1, 0.8875370839817152],
    [0.5, 0.4795001221869535],
    [1, 0.15729920705028516],
    [1.5, 0.03389485352468927],
    [1.99, 0.004888586800383002],
    [2, 0.004677734981047266],
    [2.01, 0.004475150644751764],
    [3, 2.2090496998585445e-5],
    [4, 1.541725790028002e-8],
    [5, 1.5374597944280347e-12],
    [6, 2.1519736712498913e-17],
    [8, 1.1224297172982928e-29],
    [10, 2.0884875837625446e-45],
    [15, 7.212994172451209e-100],
    [20, 5.395865611607901e-176],
    [26, 5.663192408856145e-296],
    [-0.5, 1.5204998778130465],
    [-3, 1.9999779095030015],
  ])('erfc(%d) = %d within 1e-12 relative', (x, expected) => {
    expect(Math.abs(erfc(x) - expected) / expected).toBeLessThan(1e-12);
  });
});
