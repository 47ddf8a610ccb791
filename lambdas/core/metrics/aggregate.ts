/**
 * Records -> run aggregates: statistics per record metric (successful requests only, as
 * AIPerf), run-level scalars, and the error summary. Schedule lag covers every fired
 * request, failed ones included: lateness is the client's, whatever the server did.
 */
import type { ErrorDetails, ProfileRecord } from '../types';
import { METRICS } from './registry';
import { summarize, type StatSummary } from './stats';

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

/** Metrics where bigger is better: an SLO on them is a floor, not a ceiling. */
const HIGHER_IS_BETTER = new Set(['output_token_throughput_per_user']);

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
  values.set('schedule_lag', records.map((r) => r.capture_replay.schedule_lag_ms));

  const out: Aggregates = { records: {}, derived: {}, errorSummary: [], requestCount: ok.length, errorCount: failed.length, minRequestNs: null, maxResponseNs: null };
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
  const durationSec = out.minRequestNs !== null && out.maxResponseNs !== null ? Number(out.maxResponseNs - out.minRequestNs) / 1e9 : null;
  const perSecond = (n: number) => (durationSec !== null && durationSec > 0 ? n / durationSec : null);
  const outputTokens = out.records.output_sequence_length?.stats.sum ?? null;
  const set = (tag: string, unit: string, value: number | null) => (out.derived[tag] = { unit, value });
  set('request_throughput', 'requests/sec', perSecond(ok.length));
  set('output_token_throughput', 'tokens/sec', outputTokens === null ? null : perSecond(outputTokens));
  if (options.goodputSlos && Object.keys(options.goodputSlos).length > 0) {
    const slos = Object.entries(options.goodputSlos);
    const good = ok.filter((r) =>
      slos.every(([tag, threshold]) => {
        const v = r.metrics[tag]?.value;
        if (typeof v !== 'number') return false;
        return HIGHER_IS_BETTER.has(tag) ? v >= threshold : v <= threshold;
      }),
    ).length;
    set('goodput', 'requests/sec', perSecond(good));
  }
  set('request_count', 'requests', ok.length);
  set('error_request_count', 'requests', failed.length);
  if (outputTokens !== null) set('total_output_tokens', 'tokens', outputTokens);
  set('min_request_timestamp', 'ns', out.minRequestNs === null ? null : Number(out.minRequestNs));
  set('max_response_timestamp', 'ns', out.maxResponseNs === null ? null : Number(out.maxResponseNs));
  set('benchmark_duration', 'sec', durationSec);

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
