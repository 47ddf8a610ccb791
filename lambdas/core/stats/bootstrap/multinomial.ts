/**
 * The classic bootstrap, below POISSON_BOOTSTRAP_FROM units: each resample draws n units with
 * replacement (multinomial counts), as numpy's `rng.integers(0, n, n)`; a resample's quantile
 * is the numpy-linear one of the weighted sample.
 */
import type { Rng } from '../rng';
import { BOOTSTRAP_QUANTILES, emptySide, QUANTILE_STATS, type SideReplicates, type SortedSide } from './replicates';

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

/**
 * Classic bootstrap of one metric: `sides` share the units (paired: same length, unit i is the
 * pair i; unpaired: call once per side). Each resample draws n units with replacement.
 */
export function multinomialBootstrap(sides: readonly Float64Array[], sortedSides: readonly SortedSide[], R: number, rng: Rng): SideReplicates[] {
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
