import { describe, expect, it } from 'vitest';
import { buildReportSeries, type ReportSeriesRow } from '../../../lambdas/core/report/series';

const row = (t: number, latency?: number, lagMs: number | null = 1): ReportSeriesRow => ({
  t,
  lagMs,
  metrics: latency === undefined ? {} : { request_latency: latency },
});

describe('buildReportSeries', () => {
  it('few rows: one point per row, in time order, nulls where a row has no value', () => {
    const s = buildReportSeries([row(3, 30, 2), row(1, 10, null), row(2, undefined, 5)], 10);
    expect(s).toEqual({
      t: [1, 2, 3],
      metrics: { request_latency: [10, null, 30] },
      scheduleLagMs: [null, 5, 2],
      bucketed: false,
    });
  });

  it('only metrics some row carries get a series; NaN counts as absent', () => {
    const s = buildReportSeries([{ t: 0, lagMs: 0, metrics: { time_to_first_token: 5, inter_token_latency: NaN } }]);
    expect(Object.keys(s.metrics)).toEqual(['time_to_first_token']);
  });

  it('exactly maxPoints rows stay single points', () => {
    const s = buildReportSeries(
      Array.from({ length: 5 }, (_, i) => row(i, i)),
      5,
    );
    expect(s.bucketed).toBe(false);
    expect(s.t).toHaveLength(5);
  });

  it('many rows: equal time buckets, the median per bucket, at the bucket midpoint', () => {
    // t = 0..999, value = t: ten buckets of 100 rows each.
    const rows = Array.from({ length: 1000 }, (_, i) => row(i, i, i < 100 ? null : 2 * i));
    const s = buildReportSeries(rows, 10);
    expect(s.bucketed).toBe(true);
    expect(s.t).toHaveLength(10);
    const width = 999 / 10;
    s.t.forEach((t, i) => expect(t).toBeCloseTo((i + 0.5) * width, 9));
    expect(s.metrics.request_latency).toEqual(Array.from({ length: 10 }, (_, i) => i * 100 + 49.5));
    // No lag in the first bucket: null, not 0.
    expect(s.scheduleLagMs[0]).toBeNull();
    expect(s.scheduleLagMs[1]).toBe(2 * 149.5);
  });

  it('the median, not the mean: one outlier does not move a bucket', () => {
    const rows = [row(0, 10), row(0.1, 11), row(0.2, 10_000), row(10, 5), row(10.1, 6)];
    const s = buildReportSeries(rows, 2);
    expect(s.metrics.request_latency).toEqual([11, 5.5]);
  });

  it('empty buckets are left out; the last row falls in the last bucket', () => {
    const rows = [...[0, 1, 2, 3, 4].map((t) => row(t, t)), ...[95, 96, 97, 98, 99].map((t) => row(t, t))];
    const s = buildReportSeries(rows, 5);
    expect(s.bucketed).toBe(true);
    expect(s.t).toHaveLength(2);
    expect(s.metrics.request_latency).toEqual([2, 97]);
    expect(s.t[1]).toBeCloseTo(4.5 * (99 / 5), 9);
  });

  it('all rows at one time: one bucket', () => {
    const s = buildReportSeries(
      Array.from({ length: 7 }, (_, i) => row(42, i)),
      3,
    );
    expect(s).toEqual({ t: [42], metrics: { request_latency: [3] }, scheduleLagMs: [1], bucketed: true });
  });

  it('a bucket where no row has the metric gets null', () => {
    const s = buildReportSeries([row(0, 1), row(1, 2), row(10), row(11)], 2);
    expect(s.metrics.request_latency).toEqual([1.5, null]);
  });

  it('never more points than maxPoints, rows without a finite time dropped', () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => row((i * 7919) % 3600, i % 97));
    rows.push(row(NaN, 1), row(Infinity, 1));
    const s = buildReportSeries(rows);
    expect(s.bucketed).toBe(true);
    expect(s.t.length).toBeLessThanOrEqual(2000);
    expect(s.t.every(Number.isFinite)).toBe(true);
    expect([...s.t].sort((a, b) => a - b)).toEqual(s.t);
    expect(buildReportSeries([row(NaN, 1), row(1, 2)]).t).toEqual([1]);
  });

  it('rejects a non-positive maxPoints', () => {
    expect(() => buildReportSeries([row(0, 1)], 0)).toThrow(/maxPoints/);
  });
});
