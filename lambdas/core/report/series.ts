/**
 * The report's time series and quantiles, reduced to a bounded size: report.html stays a
 * few hundred KB whether the run had a thousand requests or ten million.
 */
import { COMPARED_METRICS, type ComparedMetricTag } from '../compare/types';
import { percentile } from '../metrics/stats';
import type { ReportSeries } from './types';

export interface ReportSeriesRow {
  /** Seconds since the run's schedule zero (the request's scheduled time). */
  t: number;
  /** Actual send - scheduled send, ms; null when the request was not fired. */
  lagMs: number | null;
  /** The request's measured metrics (absent or non-finite: none). */
  metrics: Partial<Record<ComparedMetricTag, number>>;
}

const isNum = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** Median of the finite values, null when there are none. Sorts `values` in place. */
function median(values: number[]): number | null {
  if (values.length === 0) return null;
  values.sort((a, b) => a - b);
  return percentile(values, 50);
}

/**
 * One point per row (sorted by time) when there are at most `maxPoints` rows; otherwise the
 * run's time span is cut into `maxPoints` equal buckets and each non-empty bucket becomes one
 * point at its midpoint, carrying the median of each metric and of the lag over its rows
 * (`bucketed: true`). Rows without a finite time are left out. Only metrics that some row
 * carries get a series.
 */
export function buildReportSeries(rows: readonly ReportSeriesRow[], maxPoints = 2000): ReportSeries {
  if (!Number.isInteger(maxPoints) || maxPoints < 1) throw new Error(`maxPoints must be a positive integer, got ${maxPoints}`);
  const timed = rows.filter((r) => isNum(r.t));
  const tags = COMPARED_METRICS.map((m) => m.tag).filter((tag) => timed.some((r) => isNum(r.metrics[tag])));

  if (timed.length <= maxPoints) {
    const sorted = [...timed].sort((a, b) => a.t - b.t);
    const metrics: ReportSeries['metrics'] = {};
    for (const tag of tags) metrics[tag] = sorted.map((r) => (isNum(r.metrics[tag]) ? (r.metrics[tag] as number) : null));
    return {
      t: sorted.map((r) => r.t),
      metrics,
      scheduleLagMs: sorted.map((r) => (isNum(r.lagMs) ? r.lagMs : null)),
      bucketed: false,
    };
  }

  let tMin = Infinity;
  let tMax = -Infinity;
  for (const r of timed) {
    if (r.t < tMin) tMin = r.t;
    if (r.t > tMax) tMax = r.t;
  }
  const width = (tMax - tMin) / maxPoints;
  const bucketOf = (t: number) => (width > 0 ? Math.min(maxPoints - 1, Math.floor((t - tMin) / width)) : 0);

  interface Bucket {
    lag: number[];
    metrics: Map<ComparedMetricTag, number[]>;
  }
  const buckets = new Map<number, Bucket>();
  for (const r of timed) {
    const i = bucketOf(r.t);
    let b = buckets.get(i);
    if (!b) {
      b = { lag: [], metrics: new Map(tags.map((tag) => [tag, []])) };
      buckets.set(i, b);
    }
    if (isNum(r.lagMs)) b.lag.push(r.lagMs);
    for (const tag of tags) {
      const v = r.metrics[tag];
      if (isNum(v)) b.metrics.get(tag)?.push(v);
    }
  }

  const order = [...buckets.keys()].sort((a, b) => a - b);
  const metrics: ReportSeries['metrics'] = {};
  for (const tag of tags) metrics[tag] = order.map((i) => median(buckets.get(i)?.metrics.get(tag) ?? []));
  return {
    t: order.map((i) => (width > 0 ? tMin + (i + 0.5) * width : tMin)),
    metrics,
    scheduleLagMs: order.map((i) => median(buckets.get(i)?.lag ?? [])),
    bucketed: true,
  };
}
