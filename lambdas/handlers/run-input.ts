/**
 * What the functions that schedule runs (ingest: a capture file; plan: a scheduled window)
 * take of the deployment's config for a run (runSetupOf): how the run records its targets
 * and settings, how it is cut and sent, and the fire function's concurrency its lanes are
 * weighed against.
 */
import type { DispatchRunArgs } from '../core/pipeline/dispatch';
import type { RunSetup } from '../core/pipeline/dispatch-capture';
import { DEFAULT_SHARDING } from '../core/pipeline/shards';
import { targetKindOf, type RuntimeConfig, type TargetConfig } from '../runtime/config';

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

/** The fire function's concurrency as a run is weighed against it: the deployment's, at the run's amplification. */
export function fireCapacityOf(
  config: Pick<RuntimeConfig, 'fireConcurrency'>,
  amplify: number,
): Pick<DispatchRunArgs, 'fireCapacity'> {
  return config.fireConcurrency ? { fireCapacity: { ...config.fireConcurrency, amplify } } : {};
}

/**
 * What a run takes of the deployment's config (core/pipeline/dispatch-capture.ts), for
 * `targets` in order at the run's amplification `amplify`.
 */
export function runSetupOf(config: RuntimeConfig, targets: readonly TargetConfig[], amplify: number): RunSetup {
  return {
    targets: targets.map((t) => ({ name: t.name, kind: targetKindOf(t) })),
    leadMs: config.leadMs,
    // A shard due last may stream for up to the request timeout: only then can it be lost.
    graceMs: config.requestTimeoutMs + config.graceMs,
    ...schedulingOf(config),
    ...fireCapacityOf(config, amplify),
    inputConfig: baseInputConfig(config, targets),
    stackName: config.stackName,
  };
}
