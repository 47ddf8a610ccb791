import { poisson, Rng } from '../rng';
import { POISSON_BOOTSTRAP_FROM, STREAM, type BootstrapOptions } from './replicates';

/**
 * Bootstrap replicates of an error-rate difference (candidate rate - baseline rate).
 * Paired: the fired pairs fall in four cells (baseline failed?, candidate failed?), resampled
 * together. Unpaired: each side's fired rows resampled on their own. Multinomial below
 * POISSON_BOOTSTRAP_FROM units, independent Poisson cell totals from there (the same two methods
 * as the metrics, with no per-unit work since a unit is only its cell).
 */
export function bootstrapRateDifference(
  cells:
    | { paired: true; bothFailed: number; baselineOnly: number; candidateOnly: number; neither: number }
    | { paired: false; baselineFailed: number; baselineFired: number; candidateFailed: number; candidateFired: number },
  options: BootstrapOptions,
): Float64Array {
  const R = options.resamples;
  const out = new Float64Array(R).fill(NaN);
  const rng = new Rng(options.seed, STREAM.errors);
  const groups = cells.paired
    ? [[cells.bothFailed, cells.baselineOnly, cells.candidateOnly, cells.neither]]
    : [
        [cells.baselineFailed, cells.baselineFired - cells.baselineFailed],
        [cells.candidateFailed, cells.candidateFired - cells.candidateFailed],
      ];
  // When each group is resampled the classic way and has its units in one category (no request
  // failed, or every one did), a resample is the sample itself whatever is drawn: nothing is.
  const total = (sizes: readonly number[]) => sizes.reduce((a, b) => a + b, 0);
  const fixed = groups.every(
    (sizes) => total(sizes) < POISSON_BOOTSTRAP_FROM && sizes.filter((k) => k > 0).length <= 1,
  );
  // Resample counts of categories with the given sizes; returns the resampled counts.
  const resample = (sizes: readonly number[]): number[] => {
    const n = total(sizes);
    if (n >= POISSON_BOOTSTRAP_FROM) return sizes.map((k) => poisson(rng, k));
    if (fixed) return [...sizes];
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
      const [ff, fo, of, oo] = resample(groups[0] as number[]) as [number, number, number, number];
      const n = ff + fo + of + oo;
      if (n > 0) out[r] = (ff + of - (ff + fo)) / n;
    } else {
      const [af, ao] = resample(groups[0] as number[]) as [number, number];
      const [bf, bo] = resample(groups[1] as number[]) as [number, number];
      if (af + ao > 0 && bf + bo > 0) out[r] = bf / (bf + bo) - af / (af + ao);
    }
  }
  return out;
}
