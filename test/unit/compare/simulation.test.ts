/**
 * The verdicts' error rates by simulation. Generating model (paired): each request has a base
 * cost per metric, lognormal with sigma 0.5 (median 100); each target's value is that cost
 * times its own noise, lognormal with sigma 0.1; a shift multiplies the candidate's values.
 * The simulations use 500 bootstrap resamples (the default is 2,000) to keep the run short;
 * the tests' seeds are fixed, so the counts below are the same on every run.
 *
 * Why the verdict is judged on the paired shift (the median of the per-request differences
 * B - A) rather than on the difference of the two p50s: in this model the p50 difference of
 * 500 pairs has a standard deviation of about 1.7 % (the request-to-request spread of the
 * traffic, sigma 0.5, mostly survives in the marginal medians), so a +5 % shift was called
 * worse only ~83 % of the time when the p50 interval decided. The per-request differences
 * cancel that spread (sd of a difference ~ sqrt(2) x 0.1 of the cost): the shift's interval
 * is ~4x tighter, and a +5 % shift on 500 pairs is called worse essentially every time.
 */
import { describe, expect, it } from 'vitest';
import { compareTargets } from '../../../lambdas/core/compare/compare';
import { Rng } from '../../../lambdas/core/stats/rng';
import {
  COMPARED_METRICS,
  DEFAULT_COMPARE_OPTIONS,
  type CompareOptions,
  type ComparedMetricTag,
  type TargetColumns,
} from '../../../lambdas/core/compare/types';

const OPTIONS: CompareOptions = { ...DEFAULT_COMPARE_OPTIONS, resamples: 500 };
const TAGS: readonly ComparedMetricTag[] = ['request_latency', 'time_to_first_token', 'inter_token_latency'];

function gaussian(rng: Rng): number {
  const u = rng.double() || Number.MIN_VALUE;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.double());
}

/** Baseline and candidate over the same n requests; the candidate's values times `shift`. */
function simulate(rng: Rng, n: number, shift: number): [TargetColumns, TargetColumns] {
  const base = TAGS.map(() => Float64Array.from({ length: n }, () => 100 * Math.exp(0.5 * gaussian(rng))));
  const make = (name: string, factor: number): TargetColumns => {
    const metrics = {} as Record<ComparedMetricTag, Float64Array>;
    for (const { tag } of COMPARED_METRICS) metrics[tag] = new Float64Array(n).fill(NaN);
    TAGS.forEach((tag, m) => {
      const b = base[m] as Float64Array;
      for (let i = 0; i < n; i++) metrics[tag][i] = (b[i] as number) * factor * Math.exp(0.1 * gaussian(rng));
    });
    return {
      name,
      keys: Array.from({ length: n }, (_, i) => `e${i}#0`),
      outcome: new Uint8Array(n),
      errorType: new Array(n).fill(null),
      dropReason: new Array(n).fill(null),
      metrics,
      capturedOutputTokens: new Float64Array(n).fill(NaN),
    };
  };
  return [make('A', 1), make('B', shift)];
}

describe('simulated error rates of the verdicts', () => {
  it('(a) A/A: 240 comparisons of a distribution with itself call better or worse at most alpha + 3 % of the time', () => {
    // Any metric's verdict counts. With 240 trials a true rate of alpha = 5 % would exceed
    // 8 % with probability ~1 %: the margin is the binomial noise, not slack in the rule. (The
    // p50 and minimum-effect conditions make the real rate far lower: 0 here.)
    const rng = new Rng(2026, 1);
    let calls = 0;
    let significant = 0;
    const trials = 240;
    for (let t = 0; t < trials; t++) {
      const [A, B] = simulate(rng, 200 + Math.floor(rng.double() * 301), 1);
      const c = compareTargets(A, B, { ...OPTIONS, seed: t });
      if (c.metrics.some((m) => m.verdict === 'worse' || m.verdict === 'better')) calls++;
      if (c.metrics.some((m) => (m.p_value_adjusted as number) < OPTIONS.alpha)) significant++;
    }
    expect(calls / trials).toBeLessThanOrEqual(OPTIONS.alpha + 0.03);
    // Holm keeps the family-wise rate of the tests themselves near alpha too.
    expect(significant / trials).toBeLessThanOrEqual(OPTIONS.alpha + 0.03);
  });

  it('(b) a +5 % shift on 500 pairs is called worse at least 90 % of the time, never better', () => {
    const rng = new Rng(2026, 2);
    const trials = 120;
    let worse = 0;
    for (let t = 0; t < trials; t++) {
      const [A, B] = simulate(rng, 500, 1.05);
      const m = compareTargets(A, B, { ...OPTIONS, seed: t }).metrics.find((x) => x.tag === 'request_latency');
      if (m?.verdict === 'worse') worse++;
      expect(m?.verdict).not.toBe('better');
    }
    expect(worse / trials).toBeGreaterThanOrEqual(0.9);
  });

  it('(c) a +1 % shift on 5,000 pairs, below the 2 % minimum effect, is not called worse even when significant', () => {
    const rng = new Rng(2026, 3);
    const trials = 20;
    let significant = 0;
    let worse = 0;
    for (let t = 0; t < trials; t++) {
      const [A, B] = simulate(rng, 5000, 1.01);
      for (const m of compareTargets(A, B, { ...OPTIONS, seed: t }).metrics) {
        if ((m.p_value_adjusted as number) < OPTIONS.alpha) significant++;
        if (m.verdict === 'worse') worse++;
      }
    }
    // The Wilcoxon test sees a 1 % shift of 5,000 pairs almost always (z ~ 5) ...
    expect(significant).toBeGreaterThanOrEqual(0.9 * trials * TAGS.length);
    // ... but the paired shift's estimate (~1 %, tightly measured) never reaches the 2 % minimum.
    expect(worse).toBeLessThanOrEqual(0.1 * trials * TAGS.length);
  });
});
