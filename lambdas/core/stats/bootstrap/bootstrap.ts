/**
 * Bootstrap replicates of the compared metrics' means and quantiles, paired or unpaired.
 *
 * Percentile intervals. Below POISSON_BOOTSTRAP_FROM units (pairs, or one side's values) a
 * resample is the classic one: n units drawn with replacement (multinomial.ts). From that size
 * on, the Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012): every unit gets
 * an independent Poisson(1) weight per resample, which is the same as resampling a Poisson(n)
 * number of units. It makes a million pairs affordable: the means of all metrics and both
 * sides in one fused pass over the units (poisson-means.ts), the quantiles from cells of
 * units grouped by rank (poisson-quantiles.ts).
 * A metric's means and its quantiles come from independent resamples (each interval is
 * marginal; nothing combines a mean with a quantile). B and A of one statistic always come
 * from the same resample (paired) so the difference keeps their correlation.
 */
import { Rng } from '../rng';
import { multinomialBootstrap } from './multinomial';
import { meansFromSums, poissonWeightedSums, samePattern } from './poisson-means';
import { poissonQuantiles } from './poisson-quantiles';
import {
  emptySide,
  POISSON_BOOTSTRAP_FROM,
  QUANTILE_STATS,
  sortSide,
  STREAM,
  type BootstrapOptions,
  type BootstrapReplicates,
  type SideReplicates,
  type SortedSide,
} from './replicates';

/** Keeps the units where `keep` holds. */
function compact(values: Float64Array, keep: Uint8Array, count: number): Float64Array {
  const out = new Float64Array(count);
  let k = 0;
  for (let i = 0; i < values.length; i++) if (keep[i]) out[k++] = values[i] as number;
  return out;
}

const EMPTY = new Float64Array(0);

/**
 * Paired bootstrap. metrics[m].a / .b are aligned on the same units (pairs), NaN where a pair
 * has no value; metric m's sample is its pairs with both values finite. One resample weights
 * each pair once, for both sides.
 */
export function bootstrapPaired(
  metrics: readonly { a: Float64Array; b: Float64Array }[],
  options: BootstrapOptions,
): BootstrapReplicates[] {
  const R = options.resamples;
  const out: BootstrapReplicates[] = metrics.map(() => ({
    baseline: emptySide(R),
    candidate: emptySide(R),
    sorted: { baseline: EMPTY, candidate: EMPTY },
  }));
  const large: number[] = [];
  metrics.forEach(({ a, b }, m) => {
    const keep = new Uint8Array(a.length);
    let n = 0;
    for (let i = 0; i < a.length; i++) {
      if (Number.isFinite(a[i] as number) && Number.isFinite(b[i] as number)) {
        keep[i] = 1;
        n++;
      }
    }
    if (n === 0) return;
    const ca = compact(a, keep, n);
    const cb = compact(b, keep, n);
    const sides = [sortSide(ca), sortSide(cb)];
    const rep = out[m] as BootstrapReplicates;
    rep.sorted = { baseline: (sides[0] as SortedSide).sorted, candidate: (sides[1] as SortedSide).sorted };
    if (n < POISSON_BOOTSTRAP_FROM) {
      [rep.baseline, rep.candidate] = multinomialBootstrap(
        [ca, cb],
        sides,
        R,
        new Rng(options.seed, STREAM.small + m),
      ) as [SideReplicates, SideReplicates];
      return;
    }
    large.push(m);
    const [qa, qb] = poissonQuantiles(sides, R, new Rng(options.seed, STREAM.quantiles + m)) as [
      SideReplicates,
      SideReplicates,
    ];
    for (const stat of QUANTILE_STATS) {
      rep.baseline[stat] = qa[stat];
      rep.candidate[stat] = qb[stat];
    }
  });
  if (large.length > 0) {
    // Means of every large metric in one pass over the pairs, both sides. A pair without both
    // values of metric m weighs nothing in m's means (its two columns are NaN together).
    const columns: Float64Array[] = [];
    for (const m of large) {
      const { a, b } = metrics[m] as { a: Float64Array; b: Float64Array };
      if (samePattern(a, b)) columns.push(a, b);
      else {
        const both = (x: Float64Array, y: Float64Array) =>
          x.map((v, i) => (Number.isFinite(v) && Number.isFinite(y[i] as number) ? v : NaN));
        columns.push(both(a, b), both(b, a));
      }
    }
    const n = (metrics[0] as { a: Float64Array }).a.length;
    const ws = poissonWeightedSums(columns, n, R, new Rng(options.seed, STREAM.meansBaseline));
    large.forEach((m, k) => {
      const rep = out[m] as BootstrapReplicates;
      meansFromSums(rep.baseline.mean, ws, 2 * k, R);
      meansFromSums(rep.candidate.mean, ws, 2 * k + 1, R);
    });
  }
  return out;
}

/**
 * Unpaired bootstrap: each side's finite values resampled independently (its own draws, its
 * own size). metrics[m].a and .b are the sides' values per row, NaN where absent.
 */
export function bootstrapUnpaired(
  metrics: readonly { a: Float64Array; b: Float64Array }[],
  options: BootstrapOptions,
): BootstrapReplicates[] {
  const R = options.resamples;
  const out: BootstrapReplicates[] = metrics.map(() => ({
    baseline: emptySide(R),
    candidate: emptySide(R),
    sorted: { baseline: EMPTY, candidate: EMPTY },
  }));
  (['a', 'b'] as const).forEach((side, s) => {
    const key = side === 'a' ? 'baseline' : 'candidate';
    const large: number[] = [];
    metrics.forEach((metric, m) => {
      const finite = metric[side].filter((v) => Number.isFinite(v));
      const n = finite.length;
      if (n === 0) return;
      const rep = out[m] as BootstrapReplicates;
      const sorted = sortSide(finite);
      rep.sorted[key] = sorted.sorted;
      if (n < POISSON_BOOTSTRAP_FROM) {
        rep[key] = multinomialBootstrap(
          [finite],
          [sorted],
          R,
          new Rng(options.seed, (s === 0 ? STREAM.small : STREAM.smallCandidate) + m),
        )[0] as SideReplicates;
        return;
      }
      large.push(m);
      const [q] = poissonQuantiles([sorted], R, new Rng(options.seed, STREAM.quantiles + 2 * m + s)) as [
        SideReplicates,
      ];
      for (const stat of QUANTILE_STATS) rep[key][stat] = q[stat];
    });
    if (large.length === 0) return;
    const columns = large.map((m) => (metrics[m] as { a: Float64Array; b: Float64Array })[side]);
    const n = (columns[0] as Float64Array).length;
    const ws = poissonWeightedSums(
      columns,
      n,
      R,
      new Rng(options.seed, s === 0 ? STREAM.meansBaseline : STREAM.meansCandidate),
    );
    large.forEach((m, k) => meansFromSums((out[m] as BootstrapReplicates)[key].mean, ws, k, R));
  });
  return out;
}

/**
 * Quantile replicates (p50, p90, p99) of one sample, e.g. the per-pair differences B - A: the
 * same resampling as the sides' (classic below POISSON_BOOTSTRAP_FROM values, Poisson
 * weights from there), its own random stream so the sides' intervals do not move.
 */
export function bootstrapSampleQuantiles(
  values: Float64Array,
  options: BootstrapOptions,
  stream: number,
): Omit<SideReplicates, 'mean'> {
  const R = options.resamples;
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return emptySide(R);
  const sorted = sortSide(finite);
  const rng = new Rng(options.seed, STREAM.sample + stream);
  const rep =
    finite.length < POISSON_BOOTSTRAP_FROM
      ? multinomialBootstrap([finite], [sorted], R, rng)[0]
      : poissonQuantiles([sorted], R, rng)[0];
  return rep as SideReplicates;
}
