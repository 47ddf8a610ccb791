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

/**
 * The same rows as columns, one entry per row: what a run's or a results folder's columns hold
 * already, so a million rows need no object each. NaN where a row has no value.
 */
export interface ReportSeriesColumns {
  t: ArrayLike<number>;
  lagMs: ArrayLike<number>;
  metrics: Partial<Record<ComparedMetricTag, ArrayLike<number>>>;
}

const isNum = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * One point per row (sorted by time) when there are at most `maxPoints` rows; otherwise the
 * run's time span is cut into `maxPoints` equal buckets and each non-empty bucket becomes one
 * point at its midpoint, carrying the median of each metric and of the lag over its rows
 * (`bucketed: true`). Rows without a finite time are left out. Only metrics that some row
 * carries get a series.
 */
export function buildReportSeries(rows: readonly ReportSeriesRow[], maxPoints = 2000): ReportSeries {
  const column = (value: (r: ReportSeriesRow) => number | null | undefined) =>
    Float64Array.from(rows, (r) => value(r) ?? NaN);
  const metrics: ReportSeriesColumns['metrics'] = {};
  for (const { tag } of COMPARED_METRICS) metrics[tag] = column((r) => r.metrics[tag]);
  return buildReportSeriesFromColumns({ t: column((r) => r.t), lagMs: column((r) => r.lagMs), metrics }, maxPoints);
}

/** buildReportSeries over columns: the rows whose time is finite, in time order. */
export function buildReportSeriesFromColumns(columns: ReportSeriesColumns, maxPoints = 2000): ReportSeries {
  if (!Number.isInteger(maxPoints) || maxPoints < 1)
    throw new Error(`maxPoints must be a positive integer, got ${maxPoints}`);
  const timed: number[] = [];
  for (let i = 0; i < columns.t.length; i++) if (isNum(columns.t[i])) timed.push(i);
  const carried = (values: ArrayLike<number> | undefined): values is ArrayLike<number> =>
    values !== undefined && timed.some((i) => isNum(values[i]));
  const tags = COMPARED_METRICS.map((m) => m.tag).filter((tag) => carried(columns.metrics[tag]));
  const at = (values: ArrayLike<number>, i: number): number | null => (isNum(values[i]) ? (values[i] as number) : null);

  if (timed.length <= maxPoints) {
    const sorted = Int32Array.from(timed).sort((a, b) => (columns.t[a] as number) - (columns.t[b] as number));
    const metrics: ReportSeries['metrics'] = {};
    for (const tag of tags) metrics[tag] = Array.from(sorted, (i) => at(columns.metrics[tag] as ArrayLike<number>, i));
    return {
      t: Array.from(sorted, (i) => columns.t[i] as number),
      metrics,
      scheduleLagMs: Array.from(sorted, (i) => at(columns.lagMs, i)),
      bucketed: false,
    };
  }

  let tMin = Infinity;
  let tMax = -Infinity;
  for (const i of timed) {
    const t = columns.t[i] as number;
    if (t < tMin) tMin = t;
    if (t > tMax) tMax = t;
  }
  const width = (tMax - tMin) / maxPoints;
  const bucket = new Int32Array(columns.t.length).fill(-1);
  const filled = new Uint8Array(maxPoints);
  for (const i of timed) {
    const b = width > 0 ? Math.min(maxPoints - 1, Math.floor(((columns.t[i] as number) - tMin) / width)) : 0;
    bucket[i] = b;
    filled[b] = 1;
  }
  const order: number[] = [];
  for (let b = 0; b < maxPoints; b++) if (filled[b]) order.push(b);
  const metrics: ReportSeries['metrics'] = {};
  for (const tag of tags)
    metrics[tag] = pick(bucketMedians(columns.metrics[tag] as ArrayLike<number>, bucket, maxPoints), order);
  return {
    t: order.map((b) => (width > 0 ? tMin + (b + 0.5) * width : tMin)),
    metrics,
    scheduleLagMs: pick(bucketMedians(columns.lagMs, bucket, maxPoints), order),
    bucketed: true,
  };
}

const pick = (values: (number | null)[], order: readonly number[]) => order.map((b) => values[b] ?? null);

/**
 * The median of each bucket's finite values (null for none): the values grouped by bucket in
 * one array (a counting sort), each bucket's slice sorted. Memory: one number per row.
 */
function bucketMedians(values: ArrayLike<number>, bucket: Int32Array, buckets: number): (number | null)[] {
  const start = new Int32Array(buckets + 1);
  for (let i = 0; i < bucket.length; i++) {
    const b = bucket[i] as number;
    if (b >= 0 && isNum(values[i])) start[b + 1] = (start[b + 1] as number) + 1;
  }
  for (let b = 0; b < buckets; b++) start[b + 1] = (start[b + 1] as number) + (start[b] as number);
  const grouped = new Float64Array(start[buckets] as number);
  const next = start.slice(0, buckets);
  for (let i = 0; i < bucket.length; i++) {
    const b = bucket[i] as number;
    if (b < 0 || !isNum(values[i])) continue;
    grouped[next[b] as number] = values[i] as number;
    next[b] = (next[b] as number) + 1;
  }
  const medians: (number | null)[] = new Array<number | null>(buckets).fill(null);
  for (let b = 0; b < buckets; b++) {
    const slice = grouped.subarray(start[b] as number, start[b + 1] as number);
    if (slice.length > 0) medians[b] = percentile(slice.sort(), 50);
  }
  return medians;
}
