/**
 * The two-sample Kolmogorov-Smirnov test, for tests that compare distributions (amplified
 * inter-arrival times against the captured ones, scaled). The statistic is scipy's
 * `ks_2samp` (two-sided); the p-value is Kolmogorov's limiting distribution at
 * sqrt(nm / (n + m))·D (scipy's `kstwobign.sf`), which is what large samples need and what
 * test/unit/plan/ks.test.ts checks against scipy.
 */

/** sup |F_a - F_b| over the pooled values. */
export function ksStatistic(a: readonly number[], b: readonly number[]): number {
  const x = [...a].sort((p, q) => p - q);
  const y = [...b].sort((p, q) => p - q);
  let i = 0;
  let j = 0;
  let d = 0;
  while (i < x.length && j < y.length) {
    const v = Math.min(x[i] as number, y[j] as number);
    while (i < x.length && (x[i] as number) <= v) i++;
    while (j < y.length && (y[j] as number) <= v) j++;
    d = Math.max(d, Math.abs(i / x.length - j / y.length));
  }
  return d;
}

/** Kolmogorov's survival function Q(λ) = 2 Σ (-1)^(k-1) exp(-2 k² λ²). */
export function kolmogorovSf(lambda: number): number {
  if (lambda <= 0) return 1;
  // Below ~0.2 the alternating series converges slowly and Q is 1 to double precision.
  if (lambda < 0.2) return 1;
  let sum = 0;
  for (let k = 1; k <= 100; k++) {
    const term = Math.exp(-2 * k * k * lambda * lambda);
    sum += (k % 2 === 1 ? 1 : -1) * term;
    if (term < 1e-17) break;
  }
  return Math.min(1, Math.max(0, 2 * sum));
}

export interface KsResult {
  statistic: number;
  pValue: number;
}

export function ksTwoSample(a: readonly number[], b: readonly number[]): KsResult {
  const statistic = ksStatistic(a, b);
  const en = (a.length * b.length) / (a.length + b.length);
  return { statistic, pValue: kolmogorovSf(Math.sqrt(en) * statistic) };
}
