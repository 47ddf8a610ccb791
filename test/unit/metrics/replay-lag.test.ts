/**
 * AIPerf's replay schedule-lag family (replay_sched_lag_p50/p90/p99, replay_sched_degraded):
 * lateness relative to the least-late successful request, numbers worked out by hand.
 */
import { describe, expect, it } from 'vitest';
import { aggregate, REPLAY_SCHED_DEGRADED_THRESHOLD_MS, replaySchedLag } from '../../../lambdas/core/metrics/aggregate';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import type { FireOutcome } from '../../../lambdas/core/types';
import { ms, OUTCOMES, S } from '../export/fixtures';

const ok = OUTCOMES[2]!; // a successful non-streaming request
const failed = OUTCOMES[3]!; // an HTTP 500

/** The request i, due at i seconds, sent `lagMs` late. */
function sentLate(base: FireOutcome, i: number, lagMs: number): FireOutcome {
  const scheduledNs = S + ms(i * 1000);
  const start = scheduledNs + ms(lagMs);
  const result = base.result!;
  return {
    ...base,
    requestId: `r-${i}`,
    scheduledNs,
    result: {
      ...result,
      requestStartNs: start,
      requestAckNs: start + ms(1),
      requestEndNs: start + (result.requestEndNs - result.requestStartNs),
      contentChunkNs: [],
    },
  };
}

const recordsOf = (lags: number[], base = ok) =>
  lags.map((lag, i) => computeProfileRecord(sentLate(base, i, lag), 'rp'));

describe('replay schedule lag (relative to the least-late request)', () => {
  it('least-late 5 ms, others 10..25 ms: relative lags 0, 5, 10, 15, 20', () => {
    // Sorted relative lags [0, 5, 10, 15, 20] (n = 5, numpy's linear rank q/100 * 4):
    // p50: rank 2 -> 10; p90: rank 3.6 -> 15 + 0.6 * 5 = 18; p99: rank 3.96 -> 15 + 0.96 * 5 = 19.8.
    const lag = replaySchedLag(recordsOf([15, 5, 25, 10, 20]))!;
    expect(lag.p50).toBeCloseTo(10, 9);
    expect(lag.p90).toBeCloseTo(18, 9);
    expect(lag.p99).toBeCloseTo(19.8, 9);
    expect(lag.degraded).toBe(false);
  });

  it('counts successful requests only, as AIPerf (a failed request sent 1 ms late is not the anchor)', () => {
    const records = [...recordsOf([5, 10, 15, 20, 25]), computeProfileRecord(sentLate(failed, 9, 1), 'rp')];
    const agg = aggregate(records);
    expect(agg.derived.replay_sched_lag_p50).toEqual({ unit: 'ms', value: expect.closeTo(10, 9) as number });
    expect(agg.derived.replay_sched_lag_p99!.value).toBeCloseTo(19.8, 9);
    expect(agg.derived.replay_sched_degraded).toEqual({ unit: 'count', value: 0 });
    // Our absolute schedule_lag still covers every fired request: min 1 ms (the failed one).
    expect(agg.records.schedule_lag!.stats.min).toBeCloseTo(1, 9);
  });

  it('a constant lateness shared by every request is invisible to it (absolute schedule_lag shows it)', () => {
    const agg = aggregate(recordsOf([700, 700, 700]));
    expect(agg.derived.replay_sched_lag_p99!.value).toBe(0);
    expect(agg.derived.replay_sched_degraded!.value).toBe(0);
    expect(agg.records.schedule_lag!.stats.p50).toBeCloseTo(700, 9);
  });

  it(`is degraded when p99 is above ${REPLAY_SCHED_DEGRADED_THRESHOLD_MS} ms, not at it`, () => {
    // [0, 500, 500]: p99 at rank 1.98 -> 500, not above the threshold.
    expect(replaySchedLag(recordsOf([0, 500, 500]))!.degraded).toBe(false);
    // [0, 600]: p99 at rank 0.99 -> 594.
    const lag = replaySchedLag(recordsOf([0, 600]))!;
    expect(lag.p99).toBeCloseTo(594, 9);
    expect(lag.degraded).toBe(true);
    expect(aggregate(recordsOf([0, 600])).derived.replay_sched_degraded!.value).toBe(1);
  });

  it('is absent when no request succeeded', () => {
    expect(replaySchedLag([computeProfileRecord(failed, 'rp')])).toBeNull();
    expect(Object.keys(aggregate([computeProfileRecord(failed, 'rp')]).derived)).not.toContain('replay_sched_lag_p50');
  });
});
