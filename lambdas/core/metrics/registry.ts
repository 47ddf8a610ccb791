/**
 * The metric tags we export, declared once: tag, the header AIPerf's CSV and console use,
 * the unit, and whether it is a per-request ("record") metric summarized with statistics or
 * a run-level ("derived") scalar. Order here is the order of every export.
 *
 * Headers, units and scalar types are AIPerf's own (its metric classes under
 * src/aiperf/metrics/types/: `header`, `unit`/`display_unit`, and the type parameter of
 * `BaseAggregateMetric[int]` / `BaseDerivedMetric[float]`), so a CSV row reads exactly as
 * AIPerf writes it. `schedule_lag` (absolute send lag) is ours.
 */
export interface MetricSpec {
  tag: string;
  header: string;
  unit: string;
  kind: 'record' | 'derived';
  /**
   * A derived scalar's Python type in AIPerf: its CSV writer prints an `int` without
   * decimals and a `float` with two, even when whole (`_format_number`). Record-metric
   * statistics are always floats there. Default `float`.
   */
  scalar?: 'int' | 'float';
  /** Shown in the console summary table. */
  console: boolean;
}

export const METRICS: readonly MetricSpec[] = [
  { tag: 'time_to_first_token', header: 'Time to First Token', unit: 'ms', kind: 'record', console: true },
  { tag: 'time_to_second_token', header: 'Time to Second Token', unit: 'ms', kind: 'record', console: true },
  { tag: 'request_latency', header: 'Request Latency', unit: 'ms', kind: 'record', console: true },
  { tag: 'inter_token_latency', header: 'Inter Token Latency', unit: 'ms', kind: 'record', console: true },
  { tag: 'inter_chunk_latency', header: 'Inter Chunk Latency', unit: 'ms', kind: 'record', console: false },
  {
    tag: 'output_token_throughput_per_user',
    header: 'Output Token Throughput Per User',
    unit: 'tokens/sec/user',
    kind: 'record',
    console: true,
  },
  { tag: 'output_sequence_length', header: 'Output Sequence Length', unit: 'tokens', kind: 'record', console: true },
  { tag: 'input_sequence_length', header: 'Input Sequence Length', unit: 'tokens', kind: 'record', console: true },
  { tag: 'schedule_lag', header: 'Schedule Lag', unit: 'ms', kind: 'record', console: true },
  {
    tag: 'output_token_throughput',
    header: 'Output Token Throughput',
    unit: 'tokens/sec',
    kind: 'derived',
    console: true,
  },
  { tag: 'request_throughput', header: 'Request Throughput', unit: 'requests/sec', kind: 'derived', console: true },
  { tag: 'goodput', header: 'Goodput', unit: 'requests/sec', kind: 'derived', console: true },
  { tag: 'request_count', header: 'Request Count', unit: 'requests', kind: 'derived', scalar: 'int', console: true },
  {
    tag: 'error_request_count',
    header: 'Error Request Count',
    unit: 'requests',
    kind: 'derived',
    scalar: 'int',
    console: true,
  },
  {
    tag: 'total_output_tokens',
    header: 'Total Output Tokens',
    unit: 'tokens',
    kind: 'derived',
    scalar: 'int',
    console: false,
  },
  {
    tag: 'min_request_timestamp',
    header: 'Minimum Request Timestamp',
    unit: 'ns',
    kind: 'derived',
    scalar: 'int',
    console: false,
  },
  {
    tag: 'max_response_timestamp',
    header: 'Maximum Response Timestamp',
    unit: 'ns',
    kind: 'derived',
    scalar: 'int',
    console: false,
  },
  { tag: 'benchmark_duration', header: 'Benchmark Duration', unit: 'sec', kind: 'derived', console: true },
  // AIPerf's replay schedule-lag family (metrics/types/replay_sched_lag_metrics.py): run-level
  // scalars, hidden from its console table (console_group NONE), so from ours too. The
  // degraded flag is a float 0.0/1.0 there (`float(int(degraded))`), unit `count`.
  { tag: 'replay_sched_lag_p50', header: 'Replay Schedule Lag p50', unit: 'ms', kind: 'derived', console: false },
  { tag: 'replay_sched_lag_p90', header: 'Replay Schedule Lag p90', unit: 'ms', kind: 'derived', console: false },
  { tag: 'replay_sched_lag_p99', header: 'Replay Schedule Lag p99', unit: 'ms', kind: 'derived', console: false },
  { tag: 'replay_sched_degraded', header: 'Replay Schedule Degraded', unit: 'count', kind: 'derived', console: false },
];

export const METRIC_BY_TAG: ReadonlyMap<string, MetricSpec> = new Map(METRICS.map((m) => [m.tag, m]));
