/**
 * CloudWatch metrics as log lines: the embedded metric format (EMF). A Lambda function's JSON
 * log line with an `_aws` member is read by CloudWatch Logs, which extracts the metrics it
 * names; no PutMetricData call, no permission, no client.
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 *
 * Written by hand: one document of two metrics per run, which the Powertools Metrics utility
 * (not a dependency here) would also do, with a flush of its own beside the logger's.
 */

/** The stack's metrics: the namespace, the dimension every metric carries (the stack's name), the names. */
export const STACK_METRICS = {
  namespace: 'capture-replay',
  dimension: 'Stack',
  /** Per run: how late the ingest expects its latest request at least (core/pipeline/capacity.ts), seconds; 0 on time. */
  expectedLateness: 'ExpectedLatenessSeconds',
  /** Per run: 1 when the fire function's concurrency cannot start every lane on time, else 0. */
  undersizedRuns: 'UndersizedRuns',
} as const;

export type EmfUnit = 'Seconds' | 'Count';

export interface EmfMetric {
  name: string;
  unit: EmfUnit;
  value: number;
}

/**
 * The members an EMF document adds to a log line's root: `_aws` (the timestamp, and one metric
 * directive naming the namespace, the dimension set and each metric with its unit), each
 * dimension's value and each metric's value. A dimension or metric name must not be another
 * member of the line: its value is read from the root.
 */
export function emfMembers(o: { namespace: string; dimensions: Readonly<Record<string, string>>; metrics: readonly EmfMetric[]; timestampMs: number }): Record<string, unknown> {
  return {
    _aws: {
      Timestamp: Math.round(o.timestampMs),
      CloudWatchMetrics: [{ Namespace: o.namespace, Dimensions: [Object.keys(o.dimensions)], Metrics: o.metrics.map((m) => ({ Name: m.name, Unit: m.unit })) }],
    },
    ...o.dimensions,
    ...Object.fromEntries(o.metrics.map((m) => [m.name, m.value])),
  };
}
