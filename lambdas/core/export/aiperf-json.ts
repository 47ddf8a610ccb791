/**
 * profile_export_aiperf.json in AIPerf's flat layout (JsonExportData): one key per metric tag.
 * Record metrics carry unit and the full statistics; run-level metrics carry unit and avg only
 * (AIPerf leaves count/sum off scalars so they cannot be misread as the request count).
 * Key order follows AIPerf's model: its declared metrics first, ours after, then run fields.
 */
import type { Aggregates } from '../metrics/aggregate';
import { METRICS } from '../metrics/registry';
import { stringifyJson } from './json';

/**
 * AIPerf's schema 1.1 is the shape we write: 1.0 plus `count` and `sum` on record metrics.
 * Later versions only add blocks we have nothing for (run_info, warmup_metrics, telemetry).
 */
export const SCHEMA_VERSION = '1.1';

export interface AiperfJsonInfo {
  inputConfig: unknown;
  wasCancelled: boolean;
  startTime: string;
  endTime: string;
}

/** Metric keys in the order AIPerf's JsonExportData declares them (ones we never compute left out). */
const AIPERF_KEY_ORDER = [
  'request_throughput',
  'request_latency',
  'request_count',
  'time_to_first_token',
  'time_to_second_token',
  'inter_token_latency',
  'output_token_throughput',
  'output_token_throughput_per_user',
  'output_sequence_length',
  'input_sequence_length',
  'goodput',
  'min_request_timestamp',
  'max_response_timestamp',
  'inter_chunk_latency',
  'total_output_tokens',
  'benchmark_duration',
  'error_request_count',
];

/** JsonMetricResult's field order: percentiles before min/max, count and sum last. */
const STAT_ORDER = ['avg', 'p1', 'p5', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99', 'min', 'max', 'std', 'count', 'sum'] as const;

const EXACT_NS: Record<string, (agg: Aggregates) => bigint | null> = {
  min_request_timestamp: (agg) => agg.minRequestNs,
  max_response_timestamp: (agg) => agg.maxResponseNs,
};

function metricBlock(agg: Aggregates, tag: string): Record<string, unknown> | undefined {
  const record = agg.records[tag];
  if (record) {
    const block: Record<string, unknown> = { unit: record.unit };
    for (const key of STAT_ORDER) block[key] = record.stats[key];
    return block;
  }
  const derived = agg.derived[tag];
  if (derived) return { unit: derived.unit, avg: EXACT_NS[tag]?.(agg) ?? derived.value };
  return undefined;
}

export function aiperfJsonObject(agg: Aggregates, info: AiperfJsonInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { schema_version: SCHEMA_VERSION, producer: 'capture-replay' };
  const ours = METRICS.map((m) => m.tag).filter((tag) => !AIPERF_KEY_ORDER.includes(tag));
  for (const tag of [...AIPERF_KEY_ORDER, ...ours]) {
    const block = metricBlock(agg, tag);
    if (block) out[tag] = block;
  }
  out.input_config = info.inputConfig;
  out.was_cancelled = info.wasCancelled;
  out.error_summary = agg.errorSummary;
  out.start_time = info.startTime;
  out.end_time = info.endTime;
  return out;
}

export function renderAiperfJson(agg: Aggregates, info: AiperfJsonInfo): string {
  return stringifyJson(aiperfJsonObject(agg, info), 2) + '\n';
}
