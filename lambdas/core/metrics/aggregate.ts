/**
 * Records -> run aggregates: statistics per record metric (successful requests only, as
 * AIPerf), run-level scalars, and the error summary. Schedule lag covers every fired
 * request, failed ones included: lateness is the client's, whatever the server did.
 */
import type { ErrorDetails, ProfileRecord } from '../types';
import { METRICS } from './registry';
import { percentile, summarize, type StatSummary } from './stats';

export interface Aggregates {
  /** Record metrics with at least one value, by tag. */
  records: Record<string, { unit: string; stats: StatSummary }>;
  /** Run-level scalars by tag; null when undefined (e.g. throughput over a zero duration). */
  derived: Record<string, { unit: string; value: number | null }>;
  errorSummary: { error_details: ErrorDetails; count: number }[];
  requestCount: number;
  errorCount: number;
  /** Exact ns, for the export (a float cannot hold epoch ns). */
  minRequestNs: bigint | null;
  maxResponseNs: bigint | null;
}

export interface AggregateOptions {
  /** SLOs for goodput: metric tag -> threshold (a request is good when every metric <= its threshold; throughput-per-user >=). */
  goodputSlos?: Record<string, number>;
}

/**
 * AIPerf's replay schedule-lag family, computed as AIPerf computes it
 * (src/aiperf/metrics/types/replay_sched_lag_metrics.py and
 * src/aiperf/metrics/replay_sched_lag_analyzer.py):
 *
 *   offset_i = actual send time - scheduled send time   (per successful request)
 *   lag_i    = offset_i - min(offset)                   (ms: relative to the least-late request)
 *   replay_sched_lag_p50/p90/p99 = percentiles of lag_i (numpy's linear interpolation)
 *   replay_sched_degraded        = 1 if p99 > 500 ms else 0
 *
 * Over successful requests only: AIPerf's offset is a record metric, and record metrics are
 * parsed for valid records only (post_processors/metric_record_processor.py); failed and
 * cancelled requests are left out. Absent (not zero) when no request succeeded.
 *
 * Anchoring at the least-late request makes a lateness shared by every request invisible:
 * these numbers show how unevenly the schedule was kept (stalls, saturation), while our
 * absolute `schedule_lag` (every fired request, failed ones included) shows how late it was.
 * Offsets here are exact ns (bigint) before the subtraction; AIPerf's are float64.
 */
export const REPLAY_SCHED_DEGRADED_THRESHOLD_MS = 500;

export interface ReplaySchedLag {
  p50: number;
  p90: number;
  p99: number;
  degraded: boolean;
}

export function replaySchedLag(records: readonly ProfileRecord[]): ReplaySchedLag | null {
  const offsets = records
    .filter((r) => r.error === null)
    .map((r) => r.metadata.request_start_ns - r.capture_replay.scheduled_ns);
  if (offsets.length === 0) return null;
  const least = offsets.reduce((min, o) => (o < min ? o : min));
  const lags = offsets.map((o) => Number(o - least) / 1e6).sort((a, b) => a - b);
  const p99 = percentile(lags, 99);
  return {
    p50: percentile(lags, 50),
    p90: percentile(lags, 90),
    p99,
    degraded: p99 > REPLAY_SCHED_DEGRADED_THRESHOLD_MS,
  };
}

/** Metrics where bigger is better: an SLO on them is a floor, not a ceiling. */
const HIGHER_IS_BETTER = new Set(['output_token_throughput_per_user']);

/** Whether a successful record meets every SLO (metric tag -> threshold): AIPerf's "good" request. */
export function meetsSlos(record: ProfileRecord, slos: Readonly<Record<string, number>>): boolean {
  return Object.entries(slos).every(([tag, threshold]) => {
    const v = record.metrics[tag]?.value;
    if (typeof v !== 'number') return false;
    return HIGHER_IS_BETTER.has(tag) ? v >= threshold : v <= threshold;
  });
}

export function aggregate(records: readonly ProfileRecord[], options: AggregateOptions = {}): Aggregates {
  const ok = records.filter((r) => r.error === null);
  const failed = records.filter((r) => r.error !== null);
  const values = new Map<string, number[]>();
  for (const r of ok) {
    for (const [tag, metric] of Object.entries(r.metrics)) {
      if (tag === 'request_count') continue;
      const list = values.get(tag) ?? [];
      if (Array.isArray(metric.value)) list.push(...metric.value);
      else list.push(metric.value);
      values.set(tag, list);
    }
  }
  values.set(
    'schedule_lag',
    records.map((r) => r.capture_replay.schedule_lag_ms),
  );

  const out: Aggregates = {
    records: {},
    derived: {},
    errorSummary: [],
    requestCount: ok.length,
    errorCount: failed.length,
    minRequestNs: null,
    maxResponseNs: null,
  };
  for (const spec of METRICS) {
    if (spec.kind !== 'record') continue;
    const stats = summarize(values.get(spec.tag) ?? []);
    if (stats) out.records[spec.tag] = { unit: spec.unit, stats };
  }

  for (const r of ok) {
    const start = r.metadata.request_start_ns;
    const end = r.metadata.request_end_ns;
    if (out.minRequestNs === null || start < out.minRequestNs) out.minRequestNs = start;
    if (out.maxResponseNs === null || end > out.maxResponseNs) out.maxResponseNs = end;
  }
  const durationSec =
    out.minRequestNs !== null && out.maxResponseNs !== null ? Number(out.maxResponseNs - out.minRequestNs) / 1e9 : null;
  const perSecond = (n: number) => (durationSec !== null && durationSec > 0 ? n / durationSec : null);
  const outputTokens = out.records.output_sequence_length?.stats.sum ?? null;
  const set = (tag: string, unit: string, value: number | null) => (out.derived[tag] = { unit, value });
  set('request_throughput', 'requests/sec', perSecond(ok.length));
  set('output_token_throughput', 'tokens/sec', outputTokens === null ? null : perSecond(outputTokens));
  if (options.goodputSlos && Object.keys(options.goodputSlos).length > 0) {
    const slos = options.goodputSlos;
    const good = ok.filter((r) => meetsSlos(r, slos)).length;
    set('goodput', 'requests/sec', perSecond(good));
  }
  set('request_count', 'requests', ok.length);
  set('error_request_count', 'requests', failed.length);
  if (outputTokens !== null) set('total_output_tokens', 'tokens', outputTokens);
  set('min_request_timestamp', 'ns', out.minRequestNs === null ? null : Number(out.minRequestNs));
  set('max_response_timestamp', 'ns', out.maxResponseNs === null ? null : Number(out.maxResponseNs));
  set('benchmark_duration', 'sec', durationSec);
  const lag = replaySchedLag(records);
  if (lag) {
    set('replay_sched_lag_p50', 'ms', lag.p50);
    set('replay_sched_lag_p90', 'ms', lag.p90);
    set('replay_sched_lag_p99', 'ms', lag.p99);
    set('replay_sched_degraded', 'count', lag.degraded ? 1 : 0);
  }

  const errors = new Map<string, { error_details: ErrorDetails; count: number }>();
  for (const r of failed) {
    const e = r.error as ErrorDetails;
    const key = `${e.code}\u0000${e.type}\u0000${e.message}`;
    const entry = errors.get(key) ?? { error_details: e, count: 0 };
    entry.count++;
    errors.set(key, entry);
  }
  out.errorSummary = [...errors.values()].sort((a, b) => b.count - a.count);
  return out;
}
