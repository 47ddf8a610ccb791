/** Summary statistics as AIPerf reports them; no NaN or Infinity can come out of here. */

export const PERCENTILES = [1, 5, 10, 25, 50, 75, 90, 95, 99] as const;

export interface StatSummary {
  avg: number;
  min: number;
  max: number;
  p1: number;
  p5: number;
  p10: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
  p95: number;
  p99: number;
  /** Population standard deviation (numpy's default ddof=0, as AIPerf). */
  std: number;
  count: number;
  sum: number;
}

/** numpy's default ("linear"): the value at fractional rank q/100·(n−1), interpolated. `sortedAsc` must be ascending. */
export function percentile(sortedAsc: ArrayLike<number>, q: number): number {
  const n = sortedAsc.length;
  if (n === 0) throw new Error('percentile of an empty list');
  const rank = (q / 100) * (n - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, n - 1);
  const a = sortedAsc[lo] as number;
  const b = sortedAsc[hi] as number;
  return a + (b - a) * (rank - lo);
}

/**
 * The 101 quantiles 0, 1, ..., 100 % (numpy's linear) of values that are already finite and
 * ascending (not checked: unsorted input gives wrong quantiles); [] when empty.
 */
export function quantiles101Sorted(sortedAsc: ArrayLike<number>): number[] {
  if (sortedAsc.length === 0) return [];
  const out: number[] = [];
  for (let q = 0; q <= 100; q++) out.push(percentile(sortedAsc, q));
  return out;
}

/** The 101 quantiles of the finite values among `values`, in any order; [] when there are none. */
export function quantiles101(values: ArrayLike<number>): number[] {
  const finite: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (Number.isFinite(v)) finite.push(v);
  }
  return quantiles101Sorted(Float64Array.from(finite).sort());
}

/** Null when there is no finite value: "no data" stays distinguishable from a number. */
export function summarize(values: readonly number[]): StatSummary | null {
  const finite = values.filter((v) => Number.isFinite(v));
  const n = finite.length;
  if (n === 0) return null;
  const sorted = Float64Array.from(finite).sort();
  const list = Array.from(sorted);
  let sum = 0;
  for (const v of list) sum += v;
  const avg = sum / n;
  let squares = 0;
  for (const v of list) squares += (v - avg) * (v - avg);
  const p = (q: number) => percentile(list, q);
  return {
    avg,
    min: list[0] as number,
    max: list[n - 1] as number,
    p1: p(1),
    p5: p(5),
    p10: p(10),
    p25: p(25),
    p50: p(50),
    p75: p(75),
    p90: p(90),
    p95: p(95),
    p99: p(99),
    std: Math.sqrt(squares / n),
    count: n,
    sum,
  };
}
