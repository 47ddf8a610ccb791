/** What a rank test (Wilcoxon signed-rank, Mann-Whitney U) returns. */
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

/** A p-value summed from a distribution, kept in [0, 1] against rounding. */
export const clip01 = (p: number) => Math.min(1, Math.max(0, p));
