/**
 * S3 request time (sim/aws/s3.ts): a lognormal through the documented median and the assumed
 * 99th percentile, drawn from the run's seeded stream; requests made together end with the
 * slowest. In a whole run, the lanes of a slot no longer finish in step.
 */
import { describe, expect, it } from 'vitest';
import { S3Timing } from '../../../sim/aws/s3';
import { simulate } from '../../../sim/engine';
import { Rng, Z99 } from '../../../sim/random';
import { applyOverrides } from '../../../sim/overrides';
import { validateSettings } from '../../../sim/setting-ranges';
import { settingsFor } from '../../../sim/settings';

const quantile = (sorted: Float64Array, q: number) => sorted[Math.round(q * (sorted.length - 1))] as number;

function draws(timing: S3Timing, n: number): Float64Array {
  return Float64Array.from({ length: n }, () => timing.one()).sort();
}

describe('one S3 request', () => {
  const { settings } = settingsFor({
    ratePerTarget: 200,
    targets: 2,
    seconds: 60,
    latencyP50S: 0.01,
    latencyP99S: 0.01,
  });

  it('has the stated median (20 ms, documented) and 99th percentile (100 ms, assumed) over many draws', () => {
    expect(settings.aws.s3).toMatchObject({ requestMs: 20, requestP99Ms: 100 });
    const sorted = draws(new S3Timing(settings.aws.s3, new Rng(7)), 200_000);
    expect(quantile(sorted, 0.5)).toBeGreaterThan(20 * 0.98);
    expect(quantile(sorted, 0.5)).toBeLessThan(20 * 1.02);
    expect(quantile(sorted, 0.99)).toBeGreaterThan(100 * 0.95);
    expect(quantile(sorted, 0.99)).toBeLessThan(100 * 1.05);
    // Far below the whitepaper's 2 s retry: none of 200,000 draws reaches it.
    expect(sorted.at(-1)).toBeLessThan(2000);
  });

  it('is the same for the same seed, other for another', () => {
    const a = draws(new S3Timing(settings.aws.s3, new Rng(3)), 10);
    expect(draws(new S3Timing(settings.aws.s3, new Rng(3)), 10)).toEqual(a);
    expect(draws(new S3Timing(settings.aws.s3, new Rng(4)), 10)).not.toEqual(a);
  });

  it('with the p99 at the median, every request takes the median (the constant), and a pool takes its rounds', () => {
    const constant = new S3Timing({ requestMs: 20, requestP99Ms: 20 }, new Rng(1));
    expect(new Set(draws(constant, 100))).toEqual(new Set([20]));
    expect(constant.pool(33, 16)).toBe(3 * 20);
    expect(constant.sequence(3)).toBe(60);
    expect(new S3Timing({ requestMs: 0, requestP99Ms: 0 }, new Rng(1)).pool(5, 2)).toBe(0);
  });

  it('requests made together end with the slowest: 16 at once take the median of the maximum of 16 draws', () => {
    const timing = new S3Timing(settings.aws.s3, new Rng(11));
    const together = Float64Array.from({ length: 20_000 }, () => timing.pool(16, 16)).sort();
    // P(max of 16 <= x) = 0.5 where each draw's CDF is 0.5^(1/16): z = 1.7235.
    const sigma = Math.log(100 / 20) / Z99;
    const expected = 20 * Math.exp(sigma * 1.7235);
    expect(quantile(together, 0.5)).toBeGreaterThan(expected * 0.97);
    expect(quantile(together, 0.5)).toBeLessThan(expected * 1.03);
  });

  it('refuses a 99th percentile below the median, in one line', () => {
    expect(() => validateSettings(applyOverrides(settings, ['aws.s3.requestP99Ms=5']))).toThrow(
      /^aws\.s3\.requestP99Ms must be >= aws\.s3\.requestMs \(got 5 < 20\)$/,
    );
  });
});

describe('the lanes of a slot (200/s to two targets for 60 s: 3 lanes a target, all in the last slot)', () => {
  const { settings } = settingsFor({
    ratePerTarget: 200,
    targets: 2,
    seconds: 60,
    latencyP50S: 0.01,
    latencyP99S: 0.01,
  });
  /** How far apart the two targets' results of each lane were written, ms. */
  function pairGaps(overrides: string[]): number[] {
    const run = simulate(applyOverrides(settings, overrides));
    const [a, b] = run.fire.state;
    return run.workload.shards.map((shard) =>
      Math.abs((a?.get(shard.index)?.resultsAt as number) - (b?.get(shard.index)?.resultsAt as number)),
    );
  }

  it(
    "finish at different times: one lane's two targets write their results more than 5 ms apart; with a " +
      "constant S3 time (and no handler lateness: each request's is drawn) all within 1 ms",
    () => {
      const spread = pairGaps([]);
      expect(spread).toHaveLength(3);
      expect(Math.max(...spread)).toBeGreaterThan(5);
      const noHandlerLateness = ['minMs', 'p50Ms', 'p90Ms', 'p99Ms', 'p999Ms', 'maxMs'].map(
        (q) => `handler.ownLateness.${q}=0`,
      );
      const constant = pairGaps(['aws.s3.requestP99Ms=20', ...noHandlerLateness]);
      expect(Math.max(...constant)).toBeLessThan(1);
    },
  );
});
