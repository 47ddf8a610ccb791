/**
 * CloudWatch metrics as the embedded metric format (EMF), written by Powertools for AWS
 * Lambda's Metrics utility: the one way the project writes metrics. In a Lambda function each
 * metric set is a JSON line on standard output, which CloudWatch Logs reads and turns into
 * metrics: no PutMetricData call, no permission, no client.
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 *
 * The sets come from the core (core/metrics/cloudwatch.ts); this file only writes them: one
 * document per set and dimension set (a scheduled run's figures go out at two levels, with and
 * without its Schedule), with its metrics and its timestamp. One dimension set a document:
 * Powertools warns of every key two sets of one document share, though the values are the
 * same. Powertools' default `service` dimension is cleared: a dimension nobody asked for would
 * make every metric one the stack's alarms and dashboard do not name.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { CloudWatchUnit, MetricSet } from '../../core/metrics/cloudwatch';

/** Where Powertools says what it will not write (a dimension without a value, a timestamp CloudWatch would skip). */
export type MetricsLogger = NonNullable<NonNullable<ConstructorParameters<typeof Metrics>[0]>['logger']>;

/** Powertools' unit for ours (the same strings: Count/Second, None, ...). */
const UNITS: Record<CloudWatchUnit, (typeof MetricUnit)[keyof typeof MetricUnit]> = {
  Count: MetricUnit.Count,
  Percent: MetricUnit.Percent,
  Milliseconds: MetricUnit.Milliseconds,
  Seconds: MetricUnit.Seconds,
  'Count/Second': MetricUnit.CountPerSecond,
  None: MetricUnit.NoUnit,
};

function newMetrics(namespace: string, logger: MetricsLogger | undefined): Metrics {
  const metrics = new Metrics({ namespace, ...(logger ? { logger } : {}) });
  metrics.clearDefaultDimensions();
  return metrics;
}

/** Each document's worth of the sets: a set's metrics under one of its dimension sets. */
function* documents(
  sets: readonly MetricSet[],
): Generator<{ dimensions: Record<string, string>; metrics: MetricSet['metrics'] }> {
  for (const set of sets) {
    if (set.metrics.length === 0) continue;
    for (const keys of set.dimensionSets)
      yield { dimensions: Object.fromEntries(keys.map((k) => [k, set.dimensions[k] as string])), metrics: set.metrics };
  }
}

/** Puts one document's worth in the utility's buffer. */
function load(
  metrics: Metrics,
  doc: { dimensions: Record<string, string>; metrics: MetricSet['metrics'] },
  timestampMs: number,
): void {
  metrics.addDimensions(doc.dimensions);
  for (const m of doc.metrics) metrics.addMetric(m.name, UNITS[m.unit], m.value);
  metrics.setTimestamp(Math.round(timestampMs));
}

/**
 * The functions' writer: each set a document on standard output (Powertools' own console
 * there). POWERTOOLS_METRICS_DISABLED=true turns it off (the tests' default: vitest.config.ts).
 */
export class CloudWatchMetrics {
  private readonly metrics: Metrics;

  constructor(
    readonly namespace: string,
    logger?: MetricsLogger,
  ) {
    this.metrics = newMetrics(namespace, logger);
  }

  publish(sets: readonly MetricSet[], timestampMs: number): void {
    for (const doc of documents(sets)) {
      load(this.metrics, doc, timestampMs);
      this.metrics.publishStoredMetrics();
    }
  }
}

/** The same documents as objects (the CLI writes them to cloudwatch-emf.jsonl), by the same code. */
export function emfDocuments(
  sets: readonly MetricSet[],
  namespace: string,
  timestampMs: number,
  logger?: MetricsLogger,
): Record<string, unknown>[] {
  const metrics = newMetrics(namespace, logger);
  const docs: Record<string, unknown>[] = [];
  for (const doc of documents(sets)) {
    load(metrics, doc, timestampMs);
    try {
      docs.push(metrics.serializeMetrics() as unknown as Record<string, unknown>);
    } finally {
      metrics.clearMetrics();
      metrics.clearDimensions();
    }
  }
  return docs;
}
