/**
 * What report.html is drawn from: the comparison (null for a single-target run) and, per
 * target, its accounting and time series already reduced to a bounded number of points, so
 * the page stays small whatever the run's size.
 */
import type { CapacityDocument } from '../capacity/types';
import type { ComparisonDocument, ComparedMetricTag } from '../compare/types';

export interface ReportTargetSummary {
  name: string;
  scheduled: number;
  succeeded: number;
  failed: number;
  dropped: number;
  droppedByReason: Record<string, number>;
  failedByType: Record<string, number>;
}

/** One point per request, or per time bucket when the run has more requests than points allowed. */
export interface ReportSeries {
  /** Seconds since the run's schedule zero (the request's scheduled time). */
  t: number[];
  /** Per compared metric, the value at each point (null where absent). */
  metrics: Partial<Record<ComparedMetricTag, (number | null)[]>>;
  /** Schedule lag (actual send - scheduled send), ms, at each point (null when not fired). */
  scheduleLagMs: (number | null)[];
  /** True when the points are bucket medians rather than single requests. */
  bucketed: boolean;
}

export interface ReportTarget {
  summary: ReportTargetSummary;
  series: ReportSeries;
  /**
   * 101 quantiles (0..100 %) of each compared metric over succeeded requests: a single-target
   * run's ECDFs come from here (a comparison carries its own).
   */
  quantiles: Partial<Record<ComparedMetricTag, number[]>>;
}

export interface ReportData {
  title: string;
  runId: string;
  generatedAt: string;
  targets: ReportTarget[];
  comparison: ComparisonDocument | null;
  /** A capacity search's results (capacity.json): the page's capacity section. */
  capacity?: CapacityDocument;
}
