/**
 * The metric tags we export, declared once: tag, the header AIPerf's CSV and console use,
 * the unit, and whether it is a per-request ("record") metric summarized with statistics or
 * a run-level ("derived") scalar. Order here is the order of every export.
 */
export interface MetricSpec {
  tag: string;
  header: string;
  unit: string;
  kind: 'record' | 'derived';
  /** Shown in the console summary table. */
  console: boolean;
}

export const METRICS: readonly MetricSpec[] = [
  { tag: 'time_to_first_token', header: 'Time To First Token', unit: 'ms', kind: 'record', console: true },
  { tag: 'time_to_second_token', header: 'Time To Second Token', unit: 'ms', kind: 'record', console: true },
  { tag: 'request_latency', header: 'Request Latency', unit: 'ms', kind: 'record', console: true },
  { tag: 'inter_token_latency', header: 'Inter Token Latency', unit: 'ms', kind: 'record', console: true },
  { tag: 'inter_chunk_latency', header: 'Inter Chunk Latency', unit: 'ms', kind: 'record', console: false },
  { tag: 'output_token_throughput_per_user', header: 'Output Token Throughput Per User', unit: 'tokens/sec/user', kind: 'record', console: true },
  { tag: 'output_sequence_length', header: 'Output Sequence Length', unit: 'tokens', kind: 'record', console: true },
  { tag: 'input_sequence_length', header: 'Input Sequence Length', unit: 'tokens', kind: 'record', console: true },
  { tag: 'schedule_lag', header: 'Schedule Lag', unit: 'ms', kind: 'record', console: true },
  { tag: 'output_token_throughput', header: 'Output Token Throughput', unit: 'tokens/sec', kind: 'derived', console: true },
  { tag: 'request_throughput', header: 'Request Throughput', unit: 'requests/sec', kind: 'derived', console: true },
  { tag: 'goodput', header: 'Goodput', unit: 'requests/sec', kind: 'derived', console: true },
  { tag: 'request_count', header: 'Request Count', unit: 'requests', kind: 'derived', console: true },
  { tag: 'error_request_count', header: 'Error Request Count', unit: 'requests', kind: 'derived', console: true },
  { tag: 'total_output_tokens', header: 'Total Output Tokens', unit: 'tokens', kind: 'derived', console: false },
  { tag: 'min_request_timestamp', header: 'Minimum Request Timestamp', unit: 'ns', kind: 'derived', console: false },
  { tag: 'max_response_timestamp', header: 'Maximum Response Timestamp', unit: 'ns', kind: 'derived', console: false },
  { tag: 'benchmark_duration', header: 'Benchmark Duration', unit: 'sec', kind: 'derived', console: true },
];

export const METRIC_BY_TAG: ReadonlyMap<string, MetricSpec> = new Map(METRICS.map((m) => [m.tag, m]));
