/** Percentile intervals from bootstrap replicates, and how they were computed, in words. */
import { percentile } from '../../metrics/stats';
import { sortedFinite } from '../sort';
import { POISSON_BOOTSTRAP_FROM } from './replicates';

/** Percentile interval of bootstrap replicates (finite ones), numpy-linear: [lower, upper]. */
export function percentileInterval(replicates: Float64Array, confidence: number): [number, number] | null {
  const sorted = sortedFinite(replicates);
  if (sorted.length === 0) return null;
  const tail = ((1 - confidence) / 2) * 100;
  return [percentile(sorted, tail), percentile(sorted, 100 - tail)];
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
