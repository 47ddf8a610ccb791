/**
 * The fire function's settings, derived from the traffic the user declares, so that a deploy is
 * right for its rate instead of one size for all. Pure; docs/deploy.md's sizing table is this
 * function, and docs/sizing.md#the-fire-function gives each rule (lanes, slot, memory,
 * concurrency, ramp, timeout) and its reason.
 */
import { EVENT_SOURCE_SCALING, PLANNED_RAMP_PER_MINUTE, RAMP_MARGIN_MS } from '../lambdas/core/pipeline/sqs-delay';
import { connectionsPerTarget, ONE_VCPU_MB } from '../lambdas/runtime/limits';

export { ONE_VCPU_MB };
import { responseTail } from './response-tail';

export const MIN_FIRE_MEMORY_MB = 1024;
/** Lambda's largest memory, MB: 5.79 vCPUs. */
export const MAX_FIRE_MEMORY_MB = 10_240;
/**
 * CPU a fire invocation spends, ms: per request (the send, its TLS connection's share, the
 * record and its line, the timers) and per streamed token (the read, the event's decoding), by
 * target kind: HTTP targets over SSE, SageMaker targets over the event stream. The synthesized
 * fire bundle at 91 requests/s over TLS at 10 and 30 tokens a second (bench/RESULTS.md, "The
 * fire function inside Lambda's CPU share"): a line through the two.
 */
export const FIRE_CPU_MS = {
  http: { perRequest: 3.6, perToken: 0.02 },
  sagemaker: { perRequest: 3.9, perToken: 0.029 },
} as const;
/**
 * The share of its CPU allowance a lane may use on average. The rest is for bursts: V8's
 * collections run on helper threads beside the main one, and an invocation whose quota runs
 * out in a period waits, its requests with it. Measured on one lane at 91 requests/s for a
 * 120 s slot (bench/RESULTS.md): using ~0.6 of 0.9 vCPU, the quota ran out in 77-97 periods
 * and p99.9 was 47-189 ms at the server; using ~0.27 of 2 vCPUs, never, p99.9 14 ms.
 */
export const FIRE_CPU_USE = 0.3;
/** The share of a lane's connections its mean number of requests in flight may use (the rest absorbs fluctuations). */
export const CONNECTION_USE = 0.8;
/** The longest slot the sizing chooses. */
export const SLOT_MAX_SECONDS = 120;
/** Lambda's longest invocation. */
const LAMBDA_MAX_SECONDS = 900;
/** After the request timeout, time to write the results and send the collect message. */
const AFTER_TIMEOUT_SECONDS = 30;
/** The most an SQS event source runs at once (MaximumConcurrency), hence its longest ramp. */
const EVENT_SOURCE_MAX = 1000;

export interface SizingInput {
  /** Requests per second per target at the busiest moment (after time scale and amplification). */
  peakRequestsPerSecond: number;
  /** A request's duration at peak (to its last byte), 99th percentile, seconds. */
  peakLatencySeconds: number;
  /** The same, median. */
  peakLatencyMedianSeconds: number;
  targets: number;
  /** Set by the user; derived when undefined. */
  slotSeconds?: number | undefined;
  leadSeconds: number;
  requestTimeoutSeconds: number;
  /** The targets' kinds (their CPU per request and per token differ); default HTTP. */
  targetKinds?: readonly TargetKind[] | undefined;
  /** Tokens a second one streamed answer arrives at (its CPU): default DEFAULT_STREAM_TOKENS_PER_SECOND. */
  streamTokensPerSecond?: number | undefined;
}

export type TargetKind = keyof typeof FIRE_CPU_MS;
/** The token rate the sizing assumes when none is declared: "tens a second", as LLM endpoints stream to one request. */
export const DEFAULT_STREAM_TOKENS_PER_SECOND = 30;

export interface FireSizing {
  slotSeconds: number;
  /** What one lane (one shard, one invocation) sends at most per second. */
  laneRequestsPerSecond: number;
  /** Lanes per slot per target at peak. */
  lanesPerSlot: number;
  /** Requests one shard holds at most: a slot at the lane's rate. */
  maxShardRequests: number;
  batchSize: number;
  memoryMb: number;
  timeoutSeconds: number;
  visibilityTimeoutSeconds: number;
  /** Concurrent fire invocations the peak needs (unclamped: may exceed what an account allows). */
  maxConcurrency: number;
  connectionsPerTarget: number;
  /** The mean response, and the expected wait after a slot for its lane's slowest response, seconds. */
  meanResponseSeconds: number;
  slowestResponseSeconds: number;
  /** How long an invocation lives at peak, seconds. */
  invocationSeconds: number;
  /** The CPU one request costs the lane (its mean response's tokens included), ms, and what the lane uses at its rate, vCPUs. */
  cpuMsPerRequest: number;
  laneVcpus: number;
  /** How long before the lead a slot's first shards are delivered (the event source's ramp), seconds. */
  rampSeconds: number;
  /** The longest lead a shard message may get (the ramp's first shards), seconds. */
  maxLeadSeconds: number;
}

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
  const factors = [
    ...(c.autoReplay !== false ? [c.amplify ?? 1] : []),
    ...(c.schedules ?? []).map((s) => s.amplify ?? 1),
  ];
  return c.peakRequestsPerSecond * (factors.length > 0 ? Math.max(...factors) : 1);
}

/** The sizing of a deployment configuration's settings (the stack's and the configuration check's), at its amplified peak. */
export function fireSizingOf(
  c: Omit<SizingInput, 'targets' | 'targetKinds'> & AmplifiedRuns & { targets: readonly { kind?: string }[] },
): FireSizing {
  return deriveFireSizing({
    targetKinds: c.targets.map((t) => (t.kind === 'sagemaker' ? 'sagemaker' : 'http')),
    streamTokensPerSecond: c.streamTokensPerSecond,
    peakRequestsPerSecond: amplifiedPeak(c),
    peakLatencySeconds: c.peakLatencySeconds,
    peakLatencyMedianSeconds: c.peakLatencyMedianSeconds,
    targets: c.targets.length,
    slotSeconds: c.slotSeconds,
    leadSeconds: c.leadSeconds,
    requestTimeoutSeconds: c.requestTimeoutSeconds,
  });
}

/**
 * The CPU one request costs a lane, ms: the costliest of the targets' kinds, with the tokens of a mean response
 * streamed at `tokensPerSecond`.
 */
export function fireCpuMsPerRequest(
  kinds: readonly TargetKind[],
  tokensPerSecond: number,
  meanResponseSeconds: number,
): number {
  const tokens = tokensPerSecond * meanResponseSeconds;
  return Math.max(
    ...(kinds.length > 0 ? kinds : (['http'] as const)).map(
      (k) => FIRE_CPU_MS[k].perRequest + FIRE_CPU_MS[k].perToken * tokens,
    ),
  );
}

/** How long before the lead the first of `messages` due together is delivered on the planned ramp, seconds (rampLeads). */
export function rampSecondsTo(messages: number): number {
  if (messages <= EVENT_SOURCE_SCALING.initialBatches) return 0;
  return Math.ceil(((messages - 1) * 60) / PLANNED_RAMP_PER_MINUTE + RAMP_MARGIN_MS / 1000);
}

/**
 * The most lanes alive at once: when a slot's `lanes` have all started, those, and each earlier
 * slot's still waiting for their slowest response (slot k back: alive when its tail outlasts
 * (k - 1) slots and the lead), plus 3 standard deviations of that binomial count.
 */
function peakLanes(lanes: number, slot: number, leadSeconds: number, aliveAfter: (tau: number) => number): number {
  let mean = lanes;
  let variance = 0;
  for (let k = 1; ; k++) {
    const p = aliveAfter((k - 1) * slot - leadSeconds - 1);
    if (p < 1e-6) break;
    mean += lanes * p;
    variance += lanes * p * (1 - p);
  }
  return Math.ceil(mean + 3 * Math.sqrt(variance));
}

/**
 * The slot when the user sets none: the longest that leaves room in 15 minutes for the lead,
 * the ramp (the peak's lanes', or by default the longest an event source can need) and the
 * request timeout.
 */
export function derivedSlotSeconds(
  leadSeconds: number,
  requestTimeoutSeconds: number,
  rampSeconds = rampSecondsTo(EVENT_SOURCE_MAX),
): number {
  const room = LAMBDA_MAX_SECONDS - AFTER_TIMEOUT_SECONDS - leadSeconds - rampSeconds - requestTimeoutSeconds;
  return Math.max(1, Math.min(SLOT_MAX_SECONDS, Math.floor(room)));
}

export function deriveFireSizing(i: SizingInput): FireSizing {
  const responses = {
    medianSeconds: Math.min(i.peakLatencyMedianSeconds, i.peakLatencySeconds),
    p99Seconds: i.peakLatencySeconds,
    timeoutSeconds: i.requestTimeoutSeconds,
  };
  const tail = responseTail(responses);
  const mean = tail.meanSeconds;
  const connections = connectionsPerTarget(i.targets, undefined);
  const cpuMs = fireCpuMsPerRequest(
    i.targetKinds ?? ['http'],
    i.streamTokensPerSecond ?? DEFAULT_STREAM_TOKENS_PER_SECOND,
    mean,
  );
  // What the largest function holds at FIRE_CPU_USE of its CPU, and what a lane's connections hold.
  const cpuBound = (MAX_FIRE_MEMORY_MB / ONE_VCPU_MB) * FIRE_CPU_USE * (1000 / cpuMs);
  const laneRate = Math.max(1, Math.floor(Math.min(cpuBound, (CONNECTION_USE * connections) / mean)));
  const lanes = Math.max(1, Math.ceil(i.peakRequestsPerSecond / laneRate));
  const ramp = rampSecondsTo(i.targets * lanes);
  const slot = i.slotSeconds ?? derivedSlotSeconds(i.leadSeconds, i.requestTimeoutSeconds, ramp);
  const rate = i.peakRequestsPerSecond / lanes;
  const laneVcpus = (Math.min(rate, laneRate) * cpuMs) / 1000;
  const slowest = tail.expectedTailSeconds(rate, slot);
  const invocation = i.leadSeconds + slot + slowest + 1;
  const maxConcurrency = Math.max(2, peakLanes(i.targets * lanes, slot, i.leadSeconds, tail.tailSurvival(rate, slot)));
  const timeoutSeconds = Math.min(
    LAMBDA_MAX_SECONDS,
    Math.ceil(i.leadSeconds + ramp + slot + i.requestTimeoutSeconds + AFTER_TIMEOUT_SECONDS),
  );
  return {
    slotSeconds: slot,
    laneRequestsPerSecond: laneRate,
    lanesPerSlot: lanes,
    maxShardRequests: Math.max(1, Math.ceil(laneRate * slot)),
    batchSize: 1,
    memoryMb: Math.min(
      MAX_FIRE_MEMORY_MB,
      Math.max(MIN_FIRE_MEMORY_MB, Math.ceil((ONE_VCPU_MB * laneVcpus) / FIRE_CPU_USE)),
    ),
    timeoutSeconds,
    visibilityTimeoutSeconds: timeoutSeconds + 60,
    maxConcurrency,
    connectionsPerTarget: connections,
    meanResponseSeconds: Math.round(mean * 100) / 100,
    slowestResponseSeconds: Math.round(slowest * 10) / 10,
    invocationSeconds: Math.round(invocation * 10) / 10,
    cpuMsPerRequest: Math.round(cpuMs * 100) / 100,
    laneVcpus: Math.round(laneVcpus * 1000) / 1000,
    rampSeconds: ramp,
    maxLeadSeconds: Math.max(i.leadSeconds, timeoutSeconds - slot - i.requestTimeoutSeconds - AFTER_TIMEOUT_SECONDS),
  };
}
