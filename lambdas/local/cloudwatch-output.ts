/**
 * The CLI's `--cloudwatch <namespace>` (replay, compare, capacity): the figures the pipeline's
 * functions write as CloudWatch metrics, for a run made here. The same metric sets
 * (core/metrics/cloudwatch.ts), from the same files (run_manifest.json and
 * profile_export_aiperf.json of each target, comparison.json, capacity.json), written as the same
 * EMF documents by the same code (Powertools' Metrics, adapters/aws/cloudwatch-metrics.ts), one
 * a line, to `cloudwatch-emf.jsonl` in the run's folder: never to stdout, where the summary
 * tables go. Dimension Stack is `--cloudwatch-stack` (default `local`: a laptop's runs apart from
 * any stack's; a stack's name puts them on its dashboard). `--cloudwatch-publish` also sends
 * them to CloudWatch: publishMetricData.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MetricDatum, StandardUnit } from '@aws-sdk/client-cloudwatch';
import { emfDocuments } from '../adapters/aws/cloudwatch-metrics';
import { FsArtifactStore } from '../adapters/local/fs-artifact-store';
import { ARTIFACT_FILES } from '../core/export/artifacts';
import {
  DEFAULT_METRICS_NAMESPACE,
  METRICS_NAMESPACE,
  targetFiguresOf,
  type MetricSet,
  type TargetFigures,
} from '../core/metrics/cloudwatch';
import { describeAwsError } from './aws-problem';
import { regionConfig } from './aws-region';
import { terminalLine } from './terminal-text';

/** The file, in the run's folder (compare: its --out). */
export const CLOUDWATCH_FILE = 'cloudwatch-emf.jsonl';

/** The Stack dimension of a run made here, unless --cloudwatch-stack names one. */
export const DEFAULT_CLI_STACK = 'local';

/** A Stack dimension the CLI takes: a CloudFormation stack name's characters, and `.` `_`. */
const STACK_VALUE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The flags, as commander hands them over (program.ts cloudWatchOptions). */
export interface CloudWatchFlags {
  cloudwatch?: string;
  cloudwatchStack?: string;
  cloudwatchPublish?: boolean;
}

export interface CloudWatchOutput {
  namespace: string;
  stack: string;
  publish: boolean;
}

/** What the flags ask: null for nothing, or a usage error in the flags' words. */
export function cloudWatchOutputOf(flags: CloudWatchFlags): CloudWatchOutput | null | string {
  if (flags.cloudwatch === undefined) {
    const given = [
      flags.cloudwatchStack !== undefined ? '--cloudwatch-stack' : null,
      flags.cloudwatchPublish ? '--cloudwatch-publish' : null,
    ].filter(Boolean);
    return given.length > 0
      ? `${given.join(' and ')} ${given.length > 1 ? 'go' : 'goes'} with --cloudwatch <namespace> (e.g. ` +
          `--cloudwatch ${DEFAULT_METRICS_NAMESPACE})`
      : null;
  }
  if (!METRICS_NAMESPACE.test(flags.cloudwatch))
    return (
      `--cloudwatch must be a CloudWatch namespace: 1-255 letters, digits and . _ - / # :, not starting with ` +
      `AWS/ (got "${flags.cloudwatch}")`
    );
  const stack = flags.cloudwatchStack ?? DEFAULT_CLI_STACK;
  if (!STACK_VALUE.test(stack))
    return `--cloudwatch-stack must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit (got "${stack}")`;
  return { namespace: flags.cloudwatch, stack, publish: flags.cloudwatchPublish === true };
}

async function readJson(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** A target's figures from its results folder: its run_manifest.json and profile_export_aiperf.json, as the collector reads them. */
export async function readTargetFigures(
  dir: string,
  name: string,
): Promise<{ figures: TargetFigures; manifest: unknown }> {
  const [manifest, aggregates] = await Promise.all([
    readJson(join(dir, ARTIFACT_FILES.manifest)),
    readJson(join(dir, ARTIFACT_FILES.aiperfJson)),
  ]);
  return { figures: targetFiguresOf(name, manifest, aggregates), manifest };
}

interface EmfDirective {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit?: string }[];
}

/**
 * What CloudWatch extracts from EMF documents, as PutMetricData data: each metric under each dimension set, at the
 * document's timestamp.
 */
export function metricDataOf(docs: readonly Record<string, unknown>[]): MetricDatum[] {
  return docs.flatMap((doc) => {
    const aws = doc._aws as { Timestamp: number; CloudWatchMetrics: EmfDirective[] };
    return aws.CloudWatchMetrics.flatMap((d) =>
      d.Dimensions.flatMap((set) =>
        d.Metrics.map((m): MetricDatum => {
          const value = doc[m.Name];
          return {
            MetricName: m.Name,
            Dimensions: set.map((k) => ({ Name: k, Value: String(doc[k]) })),
            ...(Array.isArray(value) ? { Values: value as number[] } : { Value: value as number }),
            Unit: (m.Unit ?? 'None') as StandardUnit,
            Timestamp: new Date(aws.Timestamp),
          };
        }),
      ),
    );
  });
}

/** PutMetricData takes at most 1,000 data a call. */
export const PUT_METRIC_DATA_MAX = 1000;

/**
 * `--cloudwatch-publish`: sends the metrics to CloudWatch with PutMetricData (the SDK's default
 * credentials and Region, as the AWS CLI finds them): each document's metrics under each of its
 * dimension sets, at its timestamp. A file alone needs the CloudWatch agent, or a log group
 * and the EMF header on PutLogEvents, to become metrics; a laptop run should land beside the
 * pipeline's with one flag. The functions never call PutMetricData (their EMF goes through
 * their logs); the CLI has no logs CloudWatch reads. Returns the number of data sent.
 */
export async function publishMetricData(namespace: string, data: readonly MetricDatum[]): Promise<number> {
  const { CloudWatchClient, PutMetricDataCommand } = await import('@aws-sdk/client-cloudwatch');
  const client = new CloudWatchClient(regionConfig(undefined));
  try {
    for (let i = 0; i < data.length; i += PUT_METRIC_DATA_MAX) {
      await client.send(
        new PutMetricDataCommand({ Namespace: namespace, MetricData: data.slice(i, i + PUT_METRIC_DATA_MAX) }),
      );
    }
    return data.length;
  } finally {
    client.destroy();
  }
}

export interface CloudWatchWrite {
  /** The run's folder (compare: its --out). */
  dir: string;
  sets: readonly MetricSet[];
  /** The metrics' time: the run's end. */
  timestampMs: number;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  /** The publisher (tests pass their own); default publishMetricData. */
  publish?: (namespace: string, data: readonly MetricDatum[]) => Promise<number>;
}

/**
 * Writes the documents to cloudwatch-emf.jsonl in the run's folder (a line on stdout says
 * where) and, with --cloudwatch-publish, sends them. Null when done; else what failed (the
 * file is written first, so a failed publish leaves it to send again).
 */
export async function writeCloudWatch(output: CloudWatchOutput, w: CloudWatchWrite): Promise<string | null> {
  const warn = (...args: unknown[]) =>
    w.err.write(`capture-replay: CloudWatch: ${terminalLine(args.map(String).join(' '))}\n`);
  const docs = emfDocuments(w.sets, output.namespace, w.timestampMs, { debug() {}, info() {}, warn, error: warn });
  await new FsArtifactStore(w.dir).put(
    CLOUDWATCH_FILE,
    docs.map((d) => JSON.stringify(d)).join('\n') + (docs.length > 0 ? '\n' : ''),
  );
  w.out.write(
    `CloudWatch: ${terminalLine(join(w.dir, CLOUDWATCH_FILE))} (${docs.length} EMF documents, namespace ` +
      `${output.namespace}, Stack ${output.stack})\n`,
  );
  if (!output.publish) return null;
  const data = metricDataOf(docs);
  try {
    const sent = await (w.publish ?? publishMetricData)(output.namespace, data);
    w.out.write(`CloudWatch: ${sent} data points published to namespace ${output.namespace}\n`);
    return null;
  } catch (error) {
    return describeAwsError(
      error,
      `publish the metrics to CloudWatch (cloudwatch:PutMetricData on namespace ${output.namespace}); they ` +
        `are in ${join(w.dir, CLOUDWATCH_FILE)}`,
    );
  }
}
