/**
 * What the functions that schedule runs (ingest: a capture file; plan: a scheduled window)
 * share: how a run records its targets and settings, and the collect messages sent once a
 * run is scheduled.
 */
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
  return { name, kind, endpoint_name: endpointName, ...(region ? { region } : {}), ...(variant ? { variant } : {}), ...(inferenceComponentName ? { inference_component_name: inferenceComponentName } : {}), ...(containerHostname ? { container_hostname: containerHostname } : {}) };
}

/** The run record's inputConfig fields every pipeline run carries (collect.ts pipelineInputConfig reads them). */
export function baseInputConfig(config: Pick<RuntimeConfig, 'modelOverride' | 'forceStreaming' | 'requestTimeoutMs'>, targets: readonly TargetConfig[]): Record<string, unknown> {
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
export function schedulingOf(config: Pick<RuntimeConfig, 'slotMs' | 'maxShardRequests' | 'fireTimeoutMs' | 'requestTimeoutMs' | 'leadMs'>): Pick<DispatchRunArgs, 'sharding' | 'ramp'> {
  const sharding = { ...DEFAULT_SHARDING, slotMs: config.slotMs, ...(config.maxShardRequests ? { maxShardRequests: config.maxShardRequests } : {}) };
  const maxLeadMs = Math.max(config.leadMs, config.fireTimeoutMs - config.slotMs - config.requestTimeoutMs - AFTER_TIMEOUT_MS);
  return { sharding, ramp: { batchSize: FIRE_BATCH_SIZE, maxLeadMs } };
}

/**
 * The deadline check finalises the run even if a worker dies with its shard. A target that
 * takes none of the records has nothing to wait for: it is collected now.
 */
export async function sendCollectMessages(queue: MessageQueue, runId: string, targets: readonly string[], result: Extract<DispatchResult, { status: 'scheduled' }>): Promise<void> {
  const now = targets.filter((t) => result.shardsByTarget[t] === 0);
  await sendAll(queue, [...targets.map((t) => collectMessage(runId, t, result.deadlineNs)), ...now.map((t) => ({ ...collectMessage(runId, t, 0n), id: `now-${t}`.replace(/[^A-Za-z0-9_-]/g, '_') }))]);
}
