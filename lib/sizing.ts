/**
 * The fire function's settings, derived from the traffic the user declares, so that a
 * deploy is right for its rate instead of one size for all (the old fixed 1,024 MB, batch of
 * 10, 50 concurrent functions). Pure; the README's "Peak rate" table is this function.
 *
 * - Shards: at most `maxShardRequests` requests, and a slot's worth of the peak rate.
 * - Batch size: the shards one invocation holds at once. Each shard's requests can all be in
 *   flight together (a 1 s slot of 30 s streams), so a batch must fit the connection budget
 *   under Lambda's 1,024 file descriptors, and the request rate one vCPU holds
 *   (PER_VCPU_REQUESTS_PER_SECOND, bench/RESULTS.md: the CLI used 93 % of a core at 1,000/s).
 * - Memory: 1,769 MB is one full vCPU (Lambda allocates CPU in proportion to memory); below
 *   100 requests/s 1,024 MB (about 0.6 vCPU) is enough and cheaper.
 * - Concurrency: shards per second x how long an invocation lives (lead + slot + latency),
 *   over the batch size (counted half full: the event source does not wait to fill them),
 *   with 20 % headroom, at least 2 (an SQS event source's floor). Reserved concurrency equals
 *   it, so the fire function is never throttled by other functions in the account, and the
 *   SQS event source's maximum concurrency keeps it from throttling itself. The need is
 *   reported as it is, never cut to what an account or an event source allows: whether it
 *   fits is the configuration's check (lib/concurrency.ts), which refuses it by name.
 * - Timeout: lead + slot + request timeout + 30 s, at most 900 s. The replay queue's
 *   visibility timeout is the timeout + 60 s, not AWS's general 6x: with maximum concurrency
 *   at or below reserved concurrency the function is not throttled (the reason for 6x), and
 *   a failed shard must come back while it can still be fired, not 90 minutes later.
 */
import { connectionsPerTarget } from '../lambdas/runtime/limits';

export const PER_VCPU_REQUESTS_PER_SECOND = 500;
export const ONE_VCPU_MB = 1769;
export const MAX_SHARD_REQUESTS = 250;

export interface SizingInput {
  /** Requests per second per target at the busiest moment (after time scale). */
  peakRequestsPerSecond: number;
  /** How long one request lasts at peak (an LLM stream: seconds). */
  peakLatencySeconds: number;
  targets: number;
  slotSeconds: number;
  leadSeconds: number;
  requestTimeoutSeconds: number;
}

export interface FireSizing {
  maxShardRequests: number;
  batchSize: number;
  memoryMb: number;
  timeoutSeconds: number;
  visibilityTimeoutSeconds: number;
  /** Concurrent fire invocations the peak needs (unclamped: may exceed what an account allows). */
  maxConcurrency: number;
  connectionsPerTarget: number;
  /** Shards per second at peak, all targets. */
  shardsPerSecond: number;
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** What of a deployment configuration says how much its runs amplify the captured traffic. */
export interface AmplifiedRuns {
  peakRequestsPerSecond: number;
  /** New capture files' factor (file and mirror modes); default 1. */
  amplify?: number;
  /** Whether new capture files are replayed at all (false: only the schedules run). */
  autoReplay?: unknown;
  schedules?: readonly { amplify?: number | undefined }[];
}

/**
 * The peak the fire function carries: the declared (captured) peak times the largest factor
 * any run of the deployment replays at, new files' `amplify` (when they are replayed) and
 * each schedule's. A deployment whose every run samples (factor < 1) carries less.
 */
export function amplifiedPeak(c: AmplifiedRuns): number {
  const factors = [...(c.autoReplay !== false ? [c.amplify ?? 1] : []), ...(c.schedules ?? []).map((s) => s.amplify ?? 1)];
  return c.peakRequestsPerSecond * (factors.length > 0 ? Math.max(...factors) : 1);
}

/** The sizing of a deployment configuration's settings (the stack's and the configuration check's), at its amplified peak. */
export function fireSizingOf(c: Omit<SizingInput, 'targets'> & AmplifiedRuns & { targets: readonly unknown[] }): FireSizing {
  return deriveFireSizing({
    peakRequestsPerSecond: amplifiedPeak(c),
    peakLatencySeconds: c.peakLatencySeconds,
    targets: c.targets.length,
    slotSeconds: c.slotSeconds,
    leadSeconds: c.leadSeconds,
    requestTimeoutSeconds: c.requestTimeoutSeconds,
  });
}

export function deriveFireSizing(i: SizingInput): FireSizing {
  const perSlot = Math.max(1, Math.ceil(i.peakRequestsPerSecond * i.slotSeconds));
  const maxShardRequests = Math.min(MAX_SHARD_REQUESTS, perSlot);
  const shardsPerSlotPerTarget = Math.ceil(perSlot / maxShardRequests);
  const shardsPerSecond = (i.targets * shardsPerSlotPerTarget) / i.slotSeconds;
  const connections = connectionsPerTarget(i.targets, undefined);
  const byConnections = Math.floor(connections / maxShardRequests);
  const byCpu = Math.floor((PER_VCPU_REQUESTS_PER_SECOND * i.slotSeconds) / maxShardRequests);
  const batchSize = clamp(Math.min(byConnections, byCpu), 1, 10);
  const memoryMb = i.peakRequestsPerSecond * i.targets >= 100 ? ONE_VCPU_MB : 1024;
  const timeoutSeconds = Math.min(900, Math.ceil(i.leadSeconds + i.slotSeconds + i.requestTimeoutSeconds + 30));
  const lifetime = i.leadSeconds + i.slotSeconds + Math.min(i.peakLatencySeconds, i.requestTimeoutSeconds);
  const maxConcurrency = Math.max(2, Math.ceil(((shardsPerSecond * lifetime) / Math.max(1, batchSize / 2)) * 1.2));
  return {
    maxShardRequests,
    batchSize,
    memoryMb,
    timeoutSeconds,
    visibilityTimeoutSeconds: timeoutSeconds + 60,
    maxConcurrency,
    connectionsPerTarget: connections,
    shardsPerSecond,
  };
}
