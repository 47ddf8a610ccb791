/**
 * Everything a simulated run depends on, in one plain object, each value with where it comes
 * from: the user's workload, the stack as deployed for it (lib/config.ts's defaults and
 * lib/sizing.ts's `deriveFireSizing`, and the numbers of lib/stack-constants.ts, wired as
 * lib/stateless.ts wires them), and the model of AWS (sim/aws/defaults.ts; sim/aws/*.ts cite the
 * documentation behind each rule; values marked "assumed" are not documented and are ours to
 * question). `--set path=value` changes any leaf for a what-if (sim/overrides.ts), within the
 * ranges the simulator can run (sim/setting-ranges.ts).
 */
import {
  DeploymentConfigError,
  deploymentConfigSchema,
  parseDeploymentConfig,
  type DeploymentConfig,
} from '../lib/config';
import { DEFAULT_ACCOUNT_CONCURRENCY } from '../lib/concurrency';
import { fireSizingOf } from '../lib/sizing';
import {
  COLLECT_BATCHING_WINDOW_SECONDS,
  EVENT_SOURCE_BATCH_SIZE,
  EVENT_SOURCE_CONCURRENCY,
  FUNCTION_MEMORY_MB,
  FUNCTION_TIMEOUT_SECONDS,
  MAX_RECEIVE_COUNT,
  sixTimesVisibilitySeconds,
} from '../lib/stack-constants';
import { DEFAULT_SHARDING } from '../lambdas/core/pipeline/shards';
import { awsModelDefaults } from './aws/defaults';
import type { Lognormal } from './random';
import { describeRow, ownLatenessOf, readMeasured, rowFor, type OwnLateness } from './measured';
import { checkRange, SettingsError } from './setting-ranges';

export interface WorkloadSettings {
  /** Requests per second per target. */
  ratePerTarget: number;
  targets: number;
  seconds: number;
  /** `even`: exactly the rate each second (the moto benchmark's capture); `poisson`: drawn per second. */
  arrivals: 'even' | 'poisson';
  /** Request body bytes as captured (test/support/capture-gen.ts's default: 1,300). */
  bodyBytes: number;
  /** Bytes per capture line: what the ingest reads (capture-gen: 1,024 MB / 479,612 records). */
  recordBytes: number;
  /** The target's response time (to the last byte), seconds: a lognormal through p50 and p99. */
  latencyP50S: number;
  latencyP99S: number;
}

export interface FunctionSettings {
  memoryMb: number;
  timeoutS: number;
  /** The event source's BatchSize. */
  batchSize: number;
  /** The event source's MaximumBatchingWindowInSeconds (the stack sets none: 0). */
  batchingWindowS: number;
  /** The event source's MaximumConcurrency (standard mode); null when not set. */
  maxConcurrency: number | null;
  /** ReservedConcurrentExecutions; null when not reserved. */
  reservedConcurrency: number | null;
  visibilityTimeoutS: number;
}

export interface StackSettings {
  leadS: number;
  slotS: number;
  /** GRACE_MS: the fire loop's expiry (a request reached later than this after its due time is dropped). */
  graceS: number;
  requestTimeoutS: number;
  lateToleranceMs: number;
  latePolicy: 'fire' | 'drop';
  maxShardRequests: number;
  /** A shard message's budget: a lane larger than this travels by reference (lambdas/core/pipeline/shards.ts). */
  maxMessageBytes: number;
  connectionsPerTarget: number;
  /** The schedulers deliver each slot's shards along the event source's ramp (false: every message at the lead, for a what-if). */
  ramp: boolean;
  /** The replay queue's redrive policy (lib/stateful.ts). */
  maxReceiveCount: number;
  fire: FunctionSettings;
  ingest: FunctionSettings;
  collect: FunctionSettings;
  /** The fire event source's mode: `standard` or `provisioned` (ProvisionedPollerConfig). */
  eventSourceMode: 'standard' | 'provisioned';
  minPollers: number;
  maxPollers: number;
}

export interface AwsModelSettings {
  accountConcurrency: number;
  /** Reserved concurrency must leave this much unreserved in the account. */
  unreservedMinimum: number;
  esm: {
    initialConcurrency: number;
    /**
     * Batches the event source adds a minute while messages wait (standard mode): AWS documents
     * "up to 300", a ceiling; the schedulers plan for half of it (sqs-delay.ts
     * PLANNED_RAMP_PER_MINUTE). Set it lower to see a slower source: more than 0.
     */
    growthPerMinute: number;
    /** The most an SQS event source invokes at once without MaximumConcurrency. */
    maxConcurrency: number;
    /** Assumed: how long an event source with nothing waiting keeps its scale before stepping down. */
    scaleDownAfterS: number;
    /** Assumed: from a message being visible to a waiting poller handing it to Lambda. */
    pickupMs: number;
    /** Assumed: an idle poller's long poll (SQS's maximum wait). */
    idleLongPollS: number;
    /** Pollers of an idle event source: 5, or as few as 2 without MaximumConcurrency. */
    idlePollersWithMax: number;
    idlePollersWithoutMax: number;
  };
  /** Provisioned mode: invokes and bytes a second per poller, and concurrency added a minute (documented "up to 1,000"; more than 0). */
  provisioned: { invokesPerPoller: number; bytesPerPollerPerS: number; growthPerMinute: number };
  lambda: {
    scalePer10s: number;
    /** Assumed: Lambda's own time to start a warm invocation. */
    invokeOverheadMs: number;
    /** Assumed: creating an execution environment before INIT runs (not billed). */
    coldPlatformMs: number;
    /** Assumed: how long an idle execution environment is kept. */
    envReclaimMinutes: number;
    /** INIT durations (ms), measured here (bench/init-duration.ts, bench/RESULTS.md). */
    init: { fire: Lognormal; ingest: Lognormal; collect: Lognormal };
  };
  sqs: {
    /**
     * Assumed: a delayed message becomes receivable up to this long after its delay (uniform).
     * Not documented; 0 by default (as moto): messages sent together with one delay are then
     * received together. docs/simulator.md shows what 1 s of jitter changes.
     */
    delayJitterMaxMs: number;
    /** Assumed: one SendMessageBatch of up to 1 MiB, round trip. */
    sendBatchMs: number;
    /**
     * Assumed for AWS (not documented): a ReceiveMessage's round trip, from its issue (or, for
     * a long poll that waited, from the first message it returns becoming visible) to the
     * poller holding its messages; what becomes visible meanwhile is returned by it
     * (sim/consumer.ts, with a batching window). moto's on this machine is measured
     * (docs/simulator.md).
     */
    receiveRoundTripMs: number;
  };
  s3: {
    /**
     * One S3 request's round trip, ms: the median (documented: "tens of milliseconds" for
     * small requests), and its 99th percentile (assumed), a lognormal through both (sim/aws/s3.ts).
     */
    requestMs: number;
    requestP99Ms: number;
    /** Assumed: one GET's transfer rate, MB/s (a shard's parts are read 16 at a time). */
    getMBps: number;
  };
}

export interface HandlerSettings {
  /**
   * The fire handler's own lateness at the server once its invocation is on time, ms, at the
   * quantiles bench:fire-lateness measured (sim/measured.ts: drawn by interpolating between them).
   */
  ownLateness: OwnLateness;
  /** Where `ownLateness` comes from: the measurement's row, command and date. */
  ownLatenessSource: string;
  /** The fire function's memory it was measured at (the report says when the stack's differs). */
  ownLatenessMemoryMb: number;
  /** Ingest pass 1 (parse and index), MB/s. */
  ingestParseMBps: number;
  /**
   * The fire stage decoding a shard's requests (JSON, schema, base64 bodies), MB of wire text per
   * second of one vCPU: measured (docs/simulator.md, the model's inputs).
   */
  fireDecodeMBpsPerVcpu: number;
  /** Assumed: from the capture landing to its notification being receivable on the ingest queue. */
  notifyMs: number;
}

export interface SimSettings {
  workload: WorkloadSettings;
  stack: StackSettings;
  aws: AwsModelSettings;
  handler: HandlerSettings;
  /** Minutes since the pipeline last ran: event source scaled back, environments reclaimed. */
  idleBeforeMinutes: number;
  seed: number;
}

export interface SimOptions {
  ratePerTarget: number;
  targets: number;
  seconds: number;
  latencyP50S: number;
  latencyP99S: number;
  leadSeconds?: number;
  accountConcurrency?: number;
  idleBeforeMinutes?: number;
  seed?: number;
  arrivals?: 'even' | 'poisson';
  /** The deployment's declared response times at peak (lib/config.ts `peakLatencySeconds`, the p99, and `peakLatencyMedianSeconds`). */
  peakLatencySeconds?: number;
  peakLatencyMedianSeconds?: number;
  /** lib/config.ts `slotSeconds` (default: derived by the sizing). */
  slotSeconds?: number;
  /** lib/config.ts `requestTimeoutSeconds` and `graceSeconds` (default: the config's). */
  requestTimeoutSeconds?: number;
  graceSeconds?: number;
  /** The targets' kind: an OpenAI-compatible HTTP endpoint (default) or a SageMaker endpoint (the sizing and the measured lateness differ). */
  targetKind?: 'http' | 'sagemaker';
}

/**
 * The deployment configuration for this traffic: the config's defaults with the workload's
 * peak. When the configuration's own checks refuse it (synth would stop), their messages are
 * the problems, and the settings are the schema's defaults without those checks, so the
 * simulation can still show what such a stack would do.
 */
function configFor(o: SimOptions): { config: DeploymentConfig; problems: string[] } {
  const base = {
    peakRequestsPerSecond: o.ratePerTarget,
    accountConcurrency: o.accountConcurrency ?? DEFAULT_ACCOUNT_CONCURRENCY,
    ...(o.peakLatencySeconds !== undefined ? { peakLatencySeconds: o.peakLatencySeconds } : {}),
    ...(o.peakLatencyMedianSeconds !== undefined ? { peakLatencyMedianSeconds: o.peakLatencyMedianSeconds } : {}),
    ...(o.slotSeconds !== undefined ? { slotSeconds: o.slotSeconds } : {}),
    ...(o.requestTimeoutSeconds !== undefined ? { requestTimeoutSeconds: o.requestTimeoutSeconds } : {}),
    ...(o.graceSeconds !== undefined ? { graceSeconds: o.graceSeconds } : {}),
    targets: Array.from({ length: o.targets }, (_, i) =>
      o.targetKind === 'sagemaker'
        ? { name: `t${i}`, kind: 'sagemaker' as const, endpointName: `endpoint-${i}` }
        : { name: `t${i}`, url: 'https://target.example.com' },
    ),
  };
  const raw = { ...base, ...(o.leadSeconds !== undefined ? { leadSeconds: o.leadSeconds } : {}) };
  try {
    return { config: parseDeploymentConfig(raw), problems: [] };
  } catch (e) {
    if (!(e instanceof DeploymentConfigError)) throw e;
    const problems = e.message.split('\n- ').slice(1);
    // The schema's defaults without its cross-setting checks; a lead outside its range is kept
    // as asked (within the simulator's own range: the sizing runs on it).
    const defaults = deploymentConfigSchema.safeParse(base);
    if (!defaults.success) {
      // The schema itself refuses the traffic: synth would stop, and no stack can be sized for it.
      throw new SettingsError(
        `synth refuses this traffic, and the simulator sizes the stack as synth does: ${(problems.length > 0 ? problems : [e.message]).join('; ')}`,
      );
    }
    if (o.leadSeconds !== undefined) checkRange('stack.leadS', o.leadSeconds);
    const config = { ...defaults.data, ...(o.leadSeconds !== undefined ? { leadSeconds: o.leadSeconds } : {}) };
    return { config, problems: (problems.length > 0 ? problems : [e.message]).map((p) => `synth refuses: ${p}`) };
  }
}

/**
 * The stack for this traffic as `cdk synth` builds it: the config's defaults with the
 * workload's peak, the fire function's settings from deriveFireSizing, the others from
 * lib/stack-constants.ts as lib/stateless.ts sets them (test/unit/sim/stack.test.ts holds the
 * two together against a synthesized template).
 */
export function stackFor(o: SimOptions): { stack: StackSettings; problems: string[] } {
  const { config, problems } = configFor(o);
  const sizing = fireSizingOf(config);
  const maxConcurrency = config.maxFireConcurrency ?? sizing.maxConcurrency;
  /** A function and its queue and event source as lib/stateless.ts and lib/capture-replay-stack.ts set them. */
  const own = (fn: 'ingest' | 'collect'): FunctionSettings => ({
    memoryMb: FUNCTION_MEMORY_MB[fn],
    timeoutS: FUNCTION_TIMEOUT_SECONDS[fn],
    batchSize: EVENT_SOURCE_BATCH_SIZE[fn],
    // The stack sets a batching window on the collect event source only; without one it is SQS's 0.
    batchingWindowS: fn === 'collect' ? COLLECT_BATCHING_WINDOW_SECONDS : 0,
    maxConcurrency: EVENT_SOURCE_CONCURRENCY[fn],
    reservedConcurrency: null,
    visibilityTimeoutS: sixTimesVisibilitySeconds(FUNCTION_TIMEOUT_SECONDS[fn]),
  });
  const stack: StackSettings = {
    leadS: config.leadSeconds,
    slotS: sizing.slotSeconds,
    graceS: config.graceSeconds,
    requestTimeoutS: config.requestTimeoutSeconds,
    lateToleranceMs: config.lateToleranceMs,
    latePolicy: config.latePolicy,
    maxShardRequests: sizing.maxShardRequests,
    maxMessageBytes: DEFAULT_SHARDING.maxMessageBytes,
    connectionsPerTarget: sizing.connectionsPerTarget,
    ramp: true,
    maxReceiveCount: MAX_RECEIVE_COUNT,
    fire: {
      memoryMb: sizing.memoryMb,
      timeoutS: sizing.timeoutSeconds,
      batchSize: sizing.batchSize,
      batchingWindowS: 0,
      maxConcurrency,
      reservedConcurrency: config.reserveFireConcurrency ? maxConcurrency : null,
      visibilityTimeoutS: sizing.visibilityTimeoutSeconds,
    },
    ingest: own('ingest'),
    collect: own('collect'),
    // What-ifs (--set): the stack's fire event source runs in standard mode; pollers within AWS's 2-200 / 2-2,000.
    eventSourceMode: 'standard',
    minPollers: 2,
    maxPollers: 200,
  };
  return { stack, problems };
}

/** The settings for these options, and the configuration's objections to the stack (empty: synth accepts it). */
export function settingsFor(o: SimOptions): { settings: SimSettings; problems: string[] } {
  const { stack, problems } = stackFor(o);
  const measured = readMeasured();
  const laneMax = stack.maxShardRequests / stack.slotS;
  const row = rowFor(
    measured,
    o.ratePerTarget / Math.max(1, Math.ceil(o.ratePerTarget / laneMax - 1e-9)),
    o.targetKind === 'sagemaker' ? 'sagemaker' : 'sse',
  );
  const settings: SimSettings = {
    workload: {
      ratePerTarget: o.ratePerTarget,
      targets: o.targets,
      seconds: o.seconds,
      arrivals: o.arrivals ?? 'even',
      bodyBytes: 1300,
      recordBytes: 2239,
      latencyP50S: o.latencyP50S,
      latencyP99S: o.latencyP99S,
    },
    stack,
    aws: awsModelDefaults(o.accountConcurrency),
    handler: {
      ownLateness: ownLatenessOf(row),
      ownLatenessSource: describeRow(measured, row),
      ownLatenessMemoryMb: row.memoryMb,
      ingestParseMBps: 75,
      fireDecodeMBpsPerVcpu: 150,
      notifyMs: 1000,
    },
    idleBeforeMinutes: o.idleBeforeMinutes ?? 60,
    seed: o.seed ?? 1,
  };
  return { settings, problems };
}
