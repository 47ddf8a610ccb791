/**
 * The classic bootstrap, below POISSON_BOOTSTRAP_FROM units: each resample draws n units with
 * replacement (multinomial counts), as numpy's `rng.integers(0, n, n)`; a resample's quantile
 * is the numpy-linear one of the weighted sample.
 */
import type { Rng } from '../rng';
import { BOOTSTRAP_QUANTILES, emptySide, type SideReplicates, type SortedSide } from './replicates';

/** numpy's linear interpolation between the values at positions lo and lo + 1. */
const interpolate = (a: number, b: number, frac: number) => a + (b - a) * frac;

/**
 * A walk over a weighted sample from one end: the value at a position is the one whose
 * cumulative weight first passes it, whichever end the walk starts from. Each call goes on
 * from where the last one stopped: positions must come in the walk's direction.
 */
class Walk {
  private at = 0;
  private passed = 0;

  constructor(
    private readonly sorted: Float64Array,
    private readonly order: Int32Array,
    private readonly weights: Int32Array,
    private readonly total: number,
    private readonly fromTop: boolean,
  ) {
    this.at = fromTop ? sorted.length - 1 : 0;
  }

  /** The value at 0-based position p (counted from the lowest value). */
  valueAt(p: number): number {
    const { sorted, order, weights } = this;
    if (!this.fromTop) {
      while (this.passed <= p) this.passed += weights[order[this.at++] as number] as number;
      return sorted[this.at - 1] as number;
    }
    const t = this.total - 1 - p;
    while (this.passed <= t) this.passed += weights[order[this.at--] as number] as number;
    return sorted[this.at + 1] as number;
  }
}

/**
 * One resample's numpy-linear p50, p90 and p99 of a weighted sample (`weights[unit]` copies of
 * each unit, `total` in all) into `rep` at `r`: p50 walking up from the lowest value, p99 and
 * then p90 down from the highest, so that a resample's quantiles cost one short walk from each
 * end.
 */
function weightedQuantiles(side: SortedSide, weights: Int32Array, total: number, rep: SideReplicates, r: number): void {
  const up = new Walk(side.sorted, side.order, weights, total, false);
  const rank50 = BOOTSTRAP_QUANTILES.p50 * (total - 1);
  const lo50 = Math.floor(rank50);
  const a50 = up.valueAt(lo50);
  rep.p50[r] = rank50 === lo50 || lo50 + 1 > total - 1 ? a50 : interpolate(a50, up.valueAt(lo50 + 1), rank50 - lo50);
  // Down: p99's two positions, then p90's, which are below them or the same two (both lo equal).
  const down = new Walk(side.sorted, side.order, weights, total, true);
  const rank99 = BOOTSTRAP_QUANTILES.p99 * (total - 1);
  const lo99 = Math.floor(rank99);
  const hi99 = Math.min(lo99 + 1, total - 1);
  const b99 = down.valueAt(hi99);
  const a99 = down.valueAt(lo99);
  rep.p99[r] = rank99 === lo99 || hi99 === lo99 ? a99 : interpolate(a99, b99, rank99 - lo99);
  const rank90 = BOOTSTRAP_QUANTILES.p90 * (total - 1);
  const lo90 = Math.floor(rank90);
  const hi90 = Math.min(lo90 + 1, total - 1);
  const b90 = hi90 === hi99 ? b99 : hi90 === lo99 ? a99 : down.valueAt(hi90);
  const a90 = lo90 === lo99 ? a99 : down.valueAt(lo90);
  rep.p90[r] = rank90 === lo90 || hi90 === lo90 ? a90 : interpolate(a90, b90, rank90 - lo90);
}

/**
 * Classic bootstrap of one metric: `sides` share the units (paired: same length, unit i is the
 * pair i; unpaired: call once per side). Each resample draws n units with replacement.
 */
export function multinomialBootstrap(
  sides: readonly Float64Array[],
  sortedSides: readonly SortedSide[],
  R: number,
  rng: Rng,
): SideReplicates[] {
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
    for (let s = 0; s < sides.length; s++) {
      const values = sides[s] as Float64Array;
      const rep = out[s] as SideReplicates;
      let sum = 0;
      for (let i = 0; i < n; i++) sum += (counts[i] as number) * (values[i] as number);
      rep.mean[r] = sum / n;
      weightedQuantiles(sortedSides[s] as SortedSide, counts, n, rep, r);
    }
  }
  return out;
}
