/**
 * What every bootstrap here shares: its options, its replicates (one value per resample and
 * statistic), the size from which it switches to Poisson weights, and the random streams of
 * one seed.
 */
import { argsortFloat64 } from '../sort';

/** From this many units (pairs, or one side's values) on, the Poisson bootstrap. */
export const POISSON_BOOTSTRAP_FROM = 10_000;
export const BOOTSTRAP_QUANTILES = { p50: 0.5, p90: 0.9, p99: 0.99 } as const;
export const QUANTILE_STATS = ['p50', 'p90', 'p99'] as const;

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

export const emptySide = (R: number): SideReplicates => ({
  mean: new Float64Array(R).fill(NaN),
  p50: new Float64Array(R).fill(NaN),
  p90: new Float64Array(R).fill(NaN),
  p99: new Float64Array(R).fill(NaN),
});

/** A sample's values, sorted, with the unit at each rank. */
export interface SortedSide {
  sorted: Float64Array;
  order: Int32Array;
}

export function sortSide(values: Float64Array): SortedSide {
  const order = argsortFloat64(values);
  const sorted = new Float64Array(values.length);
  for (let j = 0; j < order.length; j++) sorted[j] = values[order[j] as number] as number;
  return { sorted, order };
}

/** Stream numbers: independent random streams of one seed. */
export const STREAM = {
  meansBaseline: 1,
  meansCandidate: 2,
  quantiles: 100,
  small: 200,
  smallCandidate: 300,
  errors: 400,
  sample: 500,
} as const;
