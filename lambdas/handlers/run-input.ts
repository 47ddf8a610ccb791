/**
 * What the functions that schedule runs (ingest: a capture file; plan: a scheduled window)
 * share: how a run records its targets and settings, the fire function's concurrency its lanes
 * are weighed against and how that verdict is said (a log line and a metric), and the collect
 * messages sent once a run is scheduled.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { CloudWatchMetrics } from '../adapters/aws/cloudwatch-metrics';
import { ingestMetricSets } from '../core/metrics/cloudwatch';
import type { CapacityReport } from '../core/pipeline/capacity';
import { sendAll } from '../core/pipeline/common';
import type { DispatchResult, DispatchRunArgs } from '../core/pipeline/dispatch';
import { DEFAULT_SHARDING } from '../core/pipeline/shards';
import { collectMessage } from '../core/pipeline/stages';
import type { MessageQueue } from '../ports';
import type { RuntimeConfig, TargetConfig } from '../runtime/config';

/** A target as the run records it (results' input_config): where requests went, no secrets. */
export function describeTarget(t: TargetConfig): Record<string, unknown> {
  if (t.kind !== 'sagemaker') return { name: t.name, url: t.url, path: t.path };
  const { name, kind, endpointName, region, variant, inferenceComponentName, containerHostname } = t;
  return {
    name,
    kind,
    endpoint_name: endpointName,
    ...(region ? { region } : {}),
    ...(variant ? { variant } : {}),
    ...(inferenceComponentName ? { inference_component_name: inferenceComponentName } : {}),
    ...(containerHostname ? { container_hostname: containerHostname } : {}),
  };
}

/** The run record's inputConfig fields every pipeline run carries (collect.ts pipelineInputConfig reads them). */
export function baseInputConfig(
  config: Pick<RuntimeConfig, 'modelOverride' | 'forceStreaming' | 'requestTimeoutMs'>,
  targets: readonly TargetConfig[],
): Record<string, unknown> {
  return {
    tool: 'capture-replay',
    targets: targets.map(describeTarget),
    model_override: config.modelOverride ?? null,
    streaming: config.forceStreaming,
    request_timeout_ms: config.requestTimeoutMs,
  };
}

/** After the request timeout, what a fire invocation keeps to write its results (lib/sizing.ts's margin). */
const AFTER_TIMEOUT_MS = 30_000;

/** The replay event source's BatchSize: one lane a batch (lib/sizing.ts). */
const FIRE_BATCH_SIZE = 1;

/**
 * How a run is cut and sent, from the deployment's settings: its slot and lanes, and the ramp
 * each slot's shards are delivered along (each message's lead at most what the fire function's
 * timeout leaves after the slot and the request timeout).
 */
export function schedulingOf(
  config: Pick<RuntimeConfig, 'slotMs' | 'maxShardRequests' | 'fireTimeoutMs' | 'requestTimeoutMs' | 'leadMs'>,
): Pick<DispatchRunArgs, 'sharding' | 'ramp'> {
  const sharding = {
    ...DEFAULT_SHARDING,
    slotMs: config.slotMs,
    ...(config.maxShardRequests ? { maxShardRequests: config.maxShardRequests } : {}),
  };
  const maxLeadMs = Math.max(
    config.leadMs,
    config.fireTimeoutMs - config.slotMs - config.requestTimeoutMs - AFTER_TIMEOUT_MS,
  );
  return { sharding, ramp: { batchSize: FIRE_BATCH_SIZE, maxLeadMs } };
}

/**
 * The deadline check finalises the run even if a worker dies with its shard. A target that
 * takes none of the records has nothing to wait for: it is collected now.
 */
export async function sendCollectMessages(
  queue: MessageQueue,
  runId: string,
  targets: readonly string[],
  result: Extract<DispatchResult, { status: 'scheduled' }>,
): Promise<void> {
  const now = targets.filter((t) => result.shardsByTarget[t] === 0);
  await sendAll(queue, [
    ...targets.map((t) => collectMessage(runId, t, result.deadlineNs)),
    ...now.map((t) => ({ ...collectMessage(runId, t, 0n), id: `now-${t}`.replace(/[^A-Za-z0-9_-]/g, '_') })),
  ]);
}

/** The fire function's concurrency as a run is weighed against it: the deployment's, at the run's amplification. */
export function fireCapacityOf(
  config: Pick<RuntimeConfig, 'fireConcurrency'>,
  amplify: number,
): Pick<DispatchRunArgs, 'fireCapacity'> {
  return config.fireConcurrency ? { fireCapacity: { ...config.fireConcurrency, amplify } } : {};
}

/**
 * A run's capacity where an operator looks: a warning naming the setting to raise (and its
 * value) when the fire function cannot start every lane on time, else one line at info; and,
 * whatever the log level, the run's expected lateness and whether it is undersized as
 * CloudWatch metrics (EMF through Powertools' Metrics, adapters/aws/cloudwatch-metrics.ts) with
 * the stack's name as their `Stack` dimension.
 */
export function logCapacity(
  logger: Pick<Logger, 'info' | 'warn'>,
  o: {
    runId: string;
    stackName: string | undefined;
    capacity: CapacityReport | undefined;
    nowMs: number;
    metrics?: Pick<CloudWatchMetrics, 'publish'> | undefined;
  },
): void {
  const c = o.capacity;
  if (!c) return;
  const fields = {
    runId: o.runId,
    lanesAtOnce: c.lanesAtOnce,
    concurrency: c.concurrency,
    lateLanes: c.lateLanes,
    lateRequests: c.lateRequests,
    ...(c.raise ? { raise: c.raise.setting, raiseTo: c.raise.value } : {}),
    reason: c.reason,
    expectedLatenessSeconds: c.expectedLatenessSeconds,
  };
  if (!c.onTime && c.raise)
    logger.warn(
      `run expected late by at least ${c.expectedLatenessSeconds} s: raise ${c.raise.setting} to ${c.raise.value}`,
      fields,
    );
  else logger.info('run capacity: every lane starts on time', fields);
  if (o.stackName && o.metrics) o.metrics.publish(ingestMetricSets(o.stackName, c), o.nowMs);
}
