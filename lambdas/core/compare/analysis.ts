/**
 * A run's (or several runs') analysis: the A/B comparison and the report's data, from the
 * targets' requests however they were read (a local run's outcomes, our results folders,
 * AIPerf's). The local CLI, the `compare` command and the pipeline's collector all end here.
 */
import { quantiles101 } from '../metrics/stats';
import { buildReportSeriesFromColumns, type ReportSeriesColumns } from '../report/series';
import type { ReportData, ReportTarget, ReportTargetSummary } from '../report/types';
import { plausibleTokenCount } from '../metrics/usage';
import type { FireOutcome, ProfileRecord } from '../types';
import { buildComparisonDocument } from './compare';
import { float64Column } from './column-buffer';
import { ColumnsBuilder, requestIdentity, type RecordLike } from './columns';
import { COMPARED_METRICS, OUTCOME, type CompareOptions, type ComparisonDocument, type TargetColumns } from './types';

const toNumber = (v: number | bigint | string | undefined | null): number | null => {
  if (v === undefined || v === null) return null;
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : null;
};

/** One target's requests, accumulated in schedule order. */
export class TargetAccumulator {
  readonly columns: ColumnsBuilder;
  /** Per row: time (epoch ns as a float: precise to a microsecond, plenty for a chart) and lag (NaN: none). */
  private readonly timeNs = float64Column();
  private readonly lagMs = float64Column();

  constructor(readonly name: string) {
    this.columns = new ColumnsBuilder(name);
  }

  /** A fired request's record: ours (`capture_replay`) or AIPerf's; null, or why it was left out (columns.ts). */
  addRecord(record: RecordLike & { capture_replay?: { schedule_lag_ms?: number } }): string | null {
    const rejected = this.columns.addRecord(record);
    if (rejected !== null) return rejected;
    const scheduled = toNumber(record.capture_replay?.scheduled_ns);
    const start = toNumber(record.metadata?.request_start_ns);
    this.timeNs.push(scheduled ?? start ?? NaN);
    const lag = record.capture_replay?.schedule_lag_ms;
    this.lagMs.push(typeof lag === 'number' && Number.isFinite(lag) ? lag : NaN);
    return null;
  }

  /** A scheduled request that was never fired. */
  addDropped(
    identity: string | null,
    reason: string,
    capturedOutputTokens: number | null,
    scheduledNs: bigint | null,
    order?: number,
  ): void {
    this.columns.addDropped(identity, reason, capturedOutputTokens, order);
    this.timeNs.push(scheduledNs === null ? NaN : Number(scheduledNs));
    this.lagMs.push(NaN);
  }

  /** A local run's outcomes and records (both in plan order). */
  static fromRun(name: string, outcomes: readonly FireOutcome[], records: readonly ProfileRecord[]): TargetAccumulator {
    const acc = new TargetAccumulator(name);
    const byId = new Map(records.map((r) => [r.metadata.x_request_id, r]));
    for (const outcome of outcomes) {
      const record = byId.get(outcome.requestId);
      if (record) acc.addRecord(record);
      else
        acc.addDropped(
          requestIdentity(outcome.request.eventId, outcome.request.copy),
          outcome.dropReason ?? 'lost',
          plausibleTokenCount(outcome.request.capturedUsage?.completionTokens),
          outcome.scheduledNs,
          outcome.request.index,
        );
    }
    return acc;
  }

  /** The report's view of this target, times relative to its first request, from the columns as they are (no object per row). */
  reportTarget(columns: TargetColumns, summary: ReportTargetSummary, maxPoints?: number): ReportTarget {
    const timeNs = this.timeNs.view();
    let zero = Infinity;
    for (const t of timeNs) if (t < zero) zero = t;
    const succeeded = (i: number) => columns.outcome[i] === OUTCOME.succeeded;
    const series: ReportSeriesColumns = {
      t: timeNs.map((t) => (t - zero) / 1e9),
      lagMs: this.lagMs.view(),
      metrics: {},
    };
    const quantiles: ReportTarget['quantiles'] = {};
    for (const { tag } of COMPARED_METRICS) {
      const column = columns.metrics[tag];
      series.metrics[tag] = column.map((v, i) => (succeeded(i) ? v : NaN));
      const values = column.filter((v, i) => Number.isFinite(v) && succeeded(i));
      if (values.length > 0) quantiles[tag] = quantiles101(values);
    }
    return { summary, series: buildReportSeriesFromColumns(series, maxPoints), quantiles };
  }
}

export interface AnalysisTarget {
  accumulator: TargetAccumulator;
  summary: ReportTargetSummary;
}

export interface Analysis {
  /** Null for a single target. */
  comparison: ComparisonDocument | null;
  report: ReportData;
}

export function analyse(args: {
  title: string;
  runId: string;
  generatedAt: string;
  targets: readonly AnalysisTarget[];
  compare: CompareOptions;
}): Analysis {
  const columns = args.targets.map((t) => t.accumulator.columns.build());
  const comparison = columns.length >= 2 ? buildComparisonDocument(columns, args.compare, args.generatedAt) : null;
  const report: ReportData = {
    title: args.title,
    runId: args.runId,
    generatedAt: args.generatedAt,
    targets: args.targets.map((t, i) => t.accumulator.reportTarget(columns[i] as TargetColumns, t.summary)),
    comparison,
  };
  return { comparison, report };
}
