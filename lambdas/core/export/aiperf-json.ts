/**
 * profile_export_aiperf.json in AIPerf's flat layout (JsonExportData): one key per metric tag.
 * Record metrics carry unit and the full statistics; run-level metrics carry unit and avg only
 * (AIPerf leaves count/sum off scalars so they cannot be misread as the request count).
 *
 * Key order follows AIPerf's dump of its model (pydantic writes declared fields first, in
 * declaration order, then the extra keys): the metrics JsonExportData declares, then
 * `input_config`, `was_cancelled`, `error_summary`, `start_time`, `end_time`, then the
 * metrics it does not declare (AIPerf's replay_sched_* family, our schedule_lag) and our
 * `capture_replay` block. `producer` (ours) stays next to `schema_version` at the top.
 */
import type { Aggregates } from '../metrics/aggregate';
import { METRICS } from '../metrics/registry';
import type { ExportInputConfig } from './input-config';
import { stringifyJson } from './json';

/**
 * AIPerf's schema 1.1 is the shape of our metric blocks: 1.0 plus `count` and `sum` on
 * record metrics. Later versions (1.2-1.5) only add optional blocks we have nothing for
 * (run_info, warmup_metrics, telemetry platform, runtime_submission_invalid_reasons).
 */
export const SCHEMA_VERSION = '1.1';

export interface AiperfJsonInfo {
  inputConfig: ExportInputConfig;
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
const STAT_ORDER = [
  'avg',
  'p1',
  'p5',
  'p10',
  'p25',
  'p50',
  'p75',
  'p90',
  'p95',
  'p99',
  'min',
  'max',
  'std',
  'count',
  'sum',
] as const;

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
  const put = (tag: string) => {
    const block = metricBlock(agg, tag);
    if (block) out[tag] = block;
  };
  AIPERF_KEY_ORDER.forEach(put);
  // AIPerf writes its dumps with exclude_none: an input_config it could not have is absent.
  if (info.inputConfig.aiperf !== null) out.input_config = info.inputConfig.aiperf;
  out.was_cancelled = info.wasCancelled;
  out.error_summary = agg.errorSummary;
  out.start_time = info.startTime;
  out.end_time = info.endTime;
  METRICS.map((m) => m.tag)
    .filter((tag) => !AIPERF_KEY_ORDER.includes(tag))
    .forEach(put);
  out.capture_replay = info.inputConfig.captureReplay;
  return out;
}

export function renderAiperfJson(agg: Aggregates, info: AiperfJsonInfo): string {
  return stringifyJson(aiperfJsonObject(agg, info), 2) + '\n';
}
