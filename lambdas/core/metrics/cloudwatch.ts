/**
 * What a run found, as CloudWatch metrics: the names, units and dimensions every writer uses
 * (the collector and the ingest and plan functions through Powertools' Metrics utility,
 * adapters/aws/cloudwatch-metrics.ts; the CLI's `--cloudwatch`), the stack's dashboard and its
 * alarms (lib/dashboard.ts, lib/run-alarms.ts). Pure: figures in, metric sets out; how they are
 * written is the adapter's.
 *
 * The figures are the ones the run's files already hold, never computed again: the counts of
 * `run_manifest.json` and the statistics of `profile_export_aiperf.json` (AIPerf's aggregates,
 * metrics/aggregate.ts), the verdicts and shifts of `comparison.json`, the factors of
 * `capacity.json`.
 *
 * Dimensions are bounded: the stack, the target (configured names), the schedule (configured
 * names), the compared metric (a fixed list). Never a run id: every run would be new metrics.
 */
import type { CapacityDocument } from '../capacity/types';
import type { CapacityReport } from '../pipeline/capacity';
import { COMPARED_METRICS, type ComparisonDocument, type TargetComparison, type Verdict } from '../compare/types';

/** The namespace when the deployment (`metricsNamespace`) or the CLI names none. */
export const DEFAULT_METRICS_NAMESPACE = 'capture-replay';

/**
 * A namespace CloudWatch takes: 1-255 ASCII characters (the EMF specification's limit), none a
 * control character, not `AWS/` (AWS's services' own). Kept to the characters CloudWatch's
 * console writes in its own namespaces: letters, digits, `.`, `_`, `-`, `/`, `#`, `:`.
 */
export const METRICS_NAMESPACE = /^(?!AWS\/)[A-Za-z0-9._\-/#:]{1,255}$/;

/** The dimension names. */
export const DIMENSION = {
  stack: 'Stack',
  target: 'Target',
  schedule: 'Schedule',
  /** A comparison's metric: an AIPerf tag of COMPARED_METRICS, or `error_rate`. */
  metric: 'Metric',
} as const;

/** The units the metrics use, as CloudWatch spells them. */
export type CloudWatchUnit = 'Count' | 'Percent' | 'Milliseconds' | 'Seconds' | 'Count/Second' | 'None';

interface MetricSpec {
  name: string;
  unit: CloudWatchUnit;
}

/** Per run and target: dimensions Stack, Target (and Stack, Schedule, Target for a scheduled run). */
export const TARGET_METRICS = {
  scheduled: { name: 'RequestsScheduled', unit: 'Count' },
  succeeded: { name: 'RequestsSucceeded', unit: 'Count' },
  failed: { name: 'RequestsFailed', unit: 'Count' },
  /** Every request not sent, for any reason (lost ones included). */
  dropped: { name: 'RequestsDropped', unit: 'Count' },
  /** Scheduled but never reported (a fire invocation that died): the results are incomplete. */
  lost: { name: 'RequestsLost', unit: 'Count' },
  /** failed / (succeeded + failed), in %; absent when nothing was sent. */
  errorRate: { name: 'ErrorRate', unit: 'Percent' },
  latencyP50: { name: 'RequestLatencyP50', unit: 'Milliseconds' },
  latencyP99: { name: 'RequestLatencyP99', unit: 'Milliseconds' },
  ttftP50: { name: 'TimeToFirstTokenP50', unit: 'Milliseconds' },
  ttftP99: { name: 'TimeToFirstTokenP99', unit: 'Milliseconds' },
  itlP50: { name: 'InterTokenLatencyP50', unit: 'Milliseconds' },
  /** AIPerf's output_token_throughput: output tokens per second of the run. */
  outputTokensPerSecond: { name: 'OutputTokensPerSecond', unit: 'Count/Second' },
  /** p99 of schedule_lag: how late requests left the replayer (its fidelity, not the target's). */
  latenessP99: { name: 'ScheduleLatenessP99', unit: 'Milliseconds' },
} as const satisfies Record<string, MetricSpec>;

/** Per run, over its targets: dimension Stack only (what the stack's health and its alarms watch). */
export const RUN_METRICS = {
  /** Every target's lost requests, added. */
  lost: TARGET_METRICS.lost,
  /** The largest of its targets' ScheduleLatenessP99. */
  latenessP99: TARGET_METRICS.latenessP99,
} as const;

/**
 * Per comparison (each candidate against the run's first target) and compared metric:
 * dimensions Stack, Target (the candidate), Metric (and Schedule for a scheduled run).
 */
export const COMPARISON_METRICS = {
  /** -1 worse, 0 no difference, inconclusive or changed, +1 better: the candidate's side. */
  verdict: { name: 'Verdict', unit: 'None' },
  /**
   * Candidate - baseline: the paired shift's estimate (the median per-request difference) when
   * paired, else the difference of the p50s, in the metric's unit; for `error_rate`, the
   * difference of the error rates in percentage points.
   */
  shift: { name: 'Shift' },
} as const;

/** The Metric dimension's value for the error-rate comparison. */
export const ERROR_RATE_METRIC = 'error_rate';

/** The metrics a comparison can call worse: the compared metrics that have a direction, and the error rate. */
export const VERDICT_METRICS: readonly string[] = [
  ...COMPARED_METRICS.filter((m) => m.direction !== 'neutral').map((m) => m.tag),
  ERROR_RATE_METRIC,
];

/** What a schedule alarms on when it names nothing (`alarmOn`): the latencies users gate on, and errors. */
export const DEFAULT_ALARM_ON: readonly string[] = [
  'request_latency',
  'time_to_first_token',
  'inter_token_latency',
  ERROR_RATE_METRIC,
];

/** Per capacity search and target (the CLI's `capacity`): dimensions Stack, Target. */
export const CAPACITY_METRICS = {
  /** The largest factor of the window's traffic the target sustained; absent when none was. */
  sustained: { name: 'CapacityFactorSustained', unit: 'None' },
} as const;

/** Per run the ingest or plan function schedules: dimension Stack. */
export const INGEST_METRICS = {
  /** How late the ingest expects the run's latest request at least (pipeline/capacity.ts), seconds; 0 on time. */
  expectedLateness: { name: 'ExpectedLatenessSeconds', unit: 'Seconds' },
  /** 1 when the fire function's concurrency cannot start every lane on time, else 0. */
  undersizedRuns: { name: 'UndersizedRuns', unit: 'Count' },
} as const;

export interface MetricValue {
  name: string;
  unit: CloudWatchUnit;
  value: number;
}

/**
 * One EMF document's worth: metrics that share their dimensions' values, published under each
 * of `dimensionSets` (each a list of keys of `dimensions`, e.g. [Stack, Target] and [Stack,
 * Schedule, Target]: the same value aggregated at two levels).
 */
export interface MetricSet {
  dimensions: Record<string, string>;
  dimensionSets: string[][];
  metrics: MetricValue[];
}

/** One target's figures as its files hold them. */
export interface TargetFigures {
  name: string;
  /** run_manifest.json's accounting. */
  manifest: {
    scheduled: number;
    succeeded: number;
    failed: number;
    dropped: number;
    droppedByReason: Record<string, number>;
  };
  /** profile_export_aiperf.json (AIPerf's flat layout: tag -> {unit, avg, p50, p99, ...}); null when not there. */
  aggregates: Record<string, unknown> | null;
}

const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** A statistic of an AIPerf metric block (`request_latency.p99`), or null. */
export function aggregateStat(
  aggregates: Record<string, unknown> | null,
  tag: string,
  stat: 'avg' | 'p50' | 'p99',
): number | null {
  const block = aggregates?.[tag];
  return block !== null && typeof block === 'object' ? finite((block as Record<string, unknown>)[stat]) : null;
}

/** A target's figures from its run_manifest.json and profile_export_aiperf.json as parsed (either may be missing or odd). */
export function targetFiguresOf(name: string, manifest: unknown, aggregates: unknown): TargetFigures {
  const m = (manifest !== null && typeof manifest === 'object' ? manifest : {}) as Record<string, unknown>;
  const count = (v: unknown) => finite(v) ?? 0;
  const byReason = (
    m.droppedByReason !== null && typeof m.droppedByReason === 'object' ? m.droppedByReason : {}
  ) as Record<string, unknown>;
  return {
    name,
    manifest: {
      scheduled: count(m.scheduled),
      succeeded: count(m.succeeded),
      failed: count(m.failed),
      dropped: count(m.dropped),
      droppedByReason: Object.fromEntries(
        Object.entries(byReason).flatMap(([k, v]) => (finite(v) === null ? [] : [[k, v as number]])),
      ),
    },
    aggregates:
      aggregates !== null && typeof aggregates === 'object' && !Array.isArray(aggregates)
        ? (aggregates as Record<string, unknown>)
        : null,
  };
}

/** The dimensions and sets of a run's metrics: [Stack, ...keys], and for a scheduled run also [Stack, Schedule, ...keys]. */
function scoped(
  stack: string,
  schedule: string | null,
  own: Record<string, string>,
): Pick<MetricSet, 'dimensions' | 'dimensionSets'> {
  const keys = Object.keys(own);
  return {
    dimensions: { [DIMENSION.stack]: stack, ...(schedule !== null ? { [DIMENSION.schedule]: schedule } : {}), ...own },
    dimensionSets: [
      [DIMENSION.stack, ...keys],
      ...(schedule !== null ? [[DIMENSION.stack, DIMENSION.schedule, ...keys]] : []),
    ],
  };
}

/** The metrics with a value (an absent statistic is left out, never written as 0). */
function present(entries: readonly [MetricSpec, number | null][]): MetricValue[] {
  return entries.flatMap(([spec, value]) => (value === null ? [] : [{ name: spec.name, unit: spec.unit, value }]));
}

/** One target's per-run metrics. */
export function targetMetrics(t: TargetFigures): MetricValue[] {
  const { manifest: m, aggregates: a } = t;
  const fired = m.succeeded + m.failed;
  const M = TARGET_METRICS;
  return present([
    [M.scheduled, m.scheduled],
    [M.succeeded, m.succeeded],
    [M.failed, m.failed],
    [M.dropped, m.dropped],
    [M.lost, m.droppedByReason.lost ?? 0],
    [M.errorRate, fired > 0 ? (100 * m.failed) / fired : null],
    [M.latencyP50, aggregateStat(a, 'request_latency', 'p50')],
    [M.latencyP99, aggregateStat(a, 'request_latency', 'p99')],
    [M.ttftP50, aggregateStat(a, 'time_to_first_token', 'p50')],
    [M.ttftP99, aggregateStat(a, 'time_to_first_token', 'p99')],
    [M.itlP50, aggregateStat(a, 'inter_token_latency', 'p50')],
    [M.outputTokensPerSecond, aggregateStat(a, 'output_token_throughput', 'avg')],
    [M.latenessP99, aggregateStat(a, 'schedule_lag', 'p99')],
  ]);
}

/** A verdict as a number: -1 worse, +1 better, 0 otherwise (no difference, inconclusive, changed). */
export function verdictScore(verdict: Verdict): -1 | 0 | 1 {
  return verdict === 'worse' ? -1 : verdict === 'better' ? 1 : 0;
}

/** A comparison's unit as CloudWatch's: ms, tokens, tokens per second per user. */
export function cloudWatchUnitOf(unit: string): CloudWatchUnit {
  if (unit === 'ms') return 'Milliseconds';
  if (unit === 'tokens') return 'Count';
  if (unit.startsWith('tokens/sec')) return 'Count/Second';
  return 'None';
}

/** Every candidate's comparison with the baseline: `comparisons`, or the document itself for two targets. */
export function comparisonsOf(doc: ComparisonDocument): TargetComparison[] {
  return doc.comparisons.length > 0 ? doc.comparisons : [doc];
}

/** One comparison's sets: per compared metric and for the error rate, its verdict and its shift. */
export function comparisonMetricSets(stack: string, schedule: string | null, c: TargetComparison): MetricSet[] {
  const V = COMPARISON_METRICS;
  const set = (metric: string, verdict: Verdict, shift: number | null, unit: CloudWatchUnit): MetricSet => ({
    ...scoped(stack, schedule, { [DIMENSION.target]: c.candidate, [DIMENSION.metric]: metric }),
    metrics: present([
      [V.verdict, verdictScore(verdict)],
      [{ name: V.shift.name, unit }, shift],
    ]),
  });
  const sets = c.metrics.map((m) =>
    set(
      m.tag,
      m.verdict,
      finite(m.paired_shift?.difference.estimate ?? null) ?? finite(m.difference.p50.estimate),
      cloudWatchUnitOf(m.unit),
    ),
  );
  const errorShift = finite(c.errors.difference.estimate);
  sets.push(set(ERROR_RATE_METRIC, c.errors.verdict, errorShift === null ? null : 100 * errorShift, 'Percent'));
  return sets;
}

export interface RunFigures {
  /** The schedule's name for a scheduled run, else null. */
  schedule: string | null;
  targets: readonly TargetFigures[];
  /** comparison.json; null with one target. */
  comparison: ComparisonDocument | null;
}

/**
 * Every metric set of a finished run: one per target, one per comparison and metric, and the
 * run's own (Stack only): its lost requests and its worst lateness.
 */
export function runMetricSets(stack: string, run: RunFigures): MetricSet[] {
  const sets: MetricSet[] = run.targets.map((t) => ({
    ...scoped(stack, run.schedule, { [DIMENSION.target]: t.name }),
    metrics: targetMetrics(t),
  }));
  if (run.comparison)
    for (const c of comparisonsOf(run.comparison)) sets.push(...comparisonMetricSets(stack, run.schedule, c));
  const lateness = run.targets
    .map((t) => aggregateStat(t.aggregates, 'schedule_lag', 'p99'))
    .filter((v): v is number => v !== null);
  sets.push({
    dimensions: { [DIMENSION.stack]: stack },
    dimensionSets: [[DIMENSION.stack]],
    metrics: present([
      [RUN_METRICS.lost, run.targets.reduce((n, t) => n + (t.manifest.droppedByReason.lost ?? 0), 0)],
      [RUN_METRICS.latenessP99, lateness.length > 0 ? Math.max(...lateness) : null],
    ]),
  });
  return sets;
}

/** A capacity search's sets: per target, the factor it sustained (none when no factor was). */
export function capacityMetricSets(stack: string, doc: Pick<CapacityDocument, 'targets'>): MetricSet[] {
  return doc.targets.map((t) => ({
    ...scoped(stack, null, { [DIMENSION.target]: t.name }),
    metrics: present([[CAPACITY_METRICS.sustained, finite(t.sustained_factor)]]),
  }));
}

/** A scheduled run's capacity against the fire function's concurrency (run-input.ts logCapacity). */
export function ingestMetricSets(
  stack: string,
  capacity: Pick<CapacityReport, 'expectedLatenessSeconds' | 'onTime'>,
): MetricSet[] {
  return [
    {
      dimensions: { [DIMENSION.stack]: stack },
      dimensionSets: [[DIMENSION.stack]],
      metrics: present([
        [INGEST_METRICS.expectedLateness, capacity.expectedLatenessSeconds],
        [INGEST_METRICS.undersizedRuns, capacity.onTime ? 0 : 1],
      ]),
    },
  ];
}

/** When a run's figures were made: the latest `endedAt` of its targets' manifests (epoch ms), or null. */
export function runEndedAtMs(manifests: readonly unknown[]): number | null {
  const ends = manifests
    .map((m) =>
      m !== null && typeof m === 'object' ? Date.parse(String((m as Record<string, unknown>).endedAt)) : NaN,
    )
    .filter(Number.isFinite);
  return ends.length > 0 ? Math.max(...ends) : null;
}
