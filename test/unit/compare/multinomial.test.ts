/**
 * The classic bootstrap's resamples (lambdas/core/stats/bootstrap/multinomial.ts) against the
 * plainest computation of the same thing: each resample's units drawn with the same random
 * stream, written out as a list (a unit drawn k times appears k times), sorted, and its
 * numpy-linear p50, p90 and p99 and its mean taken. Equal to the last bit, ties, zero-weight
 * units and tiny samples included.
 */
import { describe, expect, it } from 'vitest';
import { multinomialBootstrap } from '../../../lambdas/core/stats/bootstrap/multinomial';
import { BOOTSTRAP_QUANTILES, QUANTILE_STATS, sortSide } from '../../../lambdas/core/stats/bootstrap/replicates';
import { Rng } from '../../../lambdas/core/stats/rng';

/** numpy's default (linear) quantile of an ascending list. */
function linearQuantile(sorted: readonly number[], q: number): number {
  const rank = q * (sorted.length - 1);
  const lo = Math.floor(rank);
  const a = sorted[lo] as number;
  if (rank === lo || lo + 1 > sorted.length - 1) return a;
  return a + ((sorted[lo + 1] as number) - a) * (rank - lo);
}

/** The resamples written out: the same draws as multinomialBootstrap's (n units with replacement per resample). */
function expandedResamples(sides: Float64Array[], R: number, seed: number) {
  const rng = new Rng(seed, 7);
  const n = (sides[0] as Float64Array).length;
  const out = sides.map(() => ({
    mean: [] as number[],
    p50: [] as number[],
    p90: [] as number[],
    p99: [] as number[],
  }));
  for (let r = 0; r < R; r++) {
    const drawn = Array.from({ length: n }, () => rng.int(n));
    sides.forEach((values, s) => {
      const side = out[s]!;
      const counts = new Array<number>(n).fill(0);
      for (const unit of drawn) counts[unit]!++;
      let sum = 0;
      for (let i = 0; i < n; i++) sum += counts[i]! * values[i]!;
      side.mean.push(sum / n);
      const list = drawn.map((unit) => values[unit]!).sort((x, y) => x - y);
      for (const stat of QUANTILE_STATS) side[stat].push(linearQuantile(list, BOOTSTRAP_QUANTILES[stat]));
    });
  }
  return out;
}

function sample(rng: Rng, n: number, distinct: number): Float64Array {
  // Few distinct values make ties; a lognormal-ish spread otherwise.
  return Float64Array.from({ length: n }, () =>
    distinct > 0 ? Math.floor(rng.double() * distinct) * 1.5 : Math.exp(2 * rng.double()) * 37.3,
  );
}

describe('multinomialBootstrap', () => {
  it.each([
    [1, 0],
    [2, 0],
    [3, 2],
    [7, 0],
    [64, 3],
    [101, 0],
    [500, 0],
    [999, 10],
  ])(
    'n = %i (distinct values: %i, 0: all distinct): every resample equal to the written-out one, paired and alone',
    (n, distinct) => {
      const rng = new Rng(n, distinct);
      const a = sample(rng, n, distinct);
      const b = sample(rng, n, distinct);
      const R = 60;
      const expected = expandedResamples([a, b], R, 42);
      const paired = multinomialBootstrap([a, b], [sortSide(a), sortSide(b)], R, new Rng(42, 7));
      const alone = multinomialBootstrap([b], [sortSide(b)], R, new Rng(42, 7));
      for (const stat of ['mean', ...QUANTILE_STATS] as const) {
        expect(Array.from(paired[0]![stat]), `A ${stat}`).toEqual(expected[0]![stat]);
        expect(Array.from(paired[1]![stat]), `B ${stat}`).toEqual(expected[1]![stat]);
        expect(Array.from(alone[0]![stat]), `B alone ${stat}`).toEqual(expected[1]![stat]);
      }
    },
  );

  it('an empty sample: every replicate NaN', () => {
    const [side] = multinomialBootstrap([new Float64Array(0)], [sortSide(new Float64Array(0))], 5, new Rng(1, 1));
    expect(Array.from(side!.p50).every(Number.isNaN)).toBe(true);
  });
});
