/**
 * Everything a simulated run depends on, in one plain object, each value with where it comes
 * from: the user's workload, the stack as deployed for it (lib/config.ts's defaults and
 * lib/sizing.ts's `deriveFireSizing`, wired as lib/stateless.ts wires them), and the model of
 * AWS (sim/aws/*.ts cite the documentation behind each rule; values marked "assumed" are not
 * documented and are ours to question). `--set path=value` changes any leaf for a what-if.
 */
import {
  DeploymentConfigError,
  deploymentConfigSchema,
  parseDeploymentConfig,
  type DeploymentConfig,
} from '../lib/config';
import { fireSizingOf } from '../lib/sizing';
import { DEFAULT_SHARDING } from '../lambdas/core/pipeline/shards';
import type { Lognormal } from './random';
import { describeRow, ownLatenessOf, readMeasured, rowFor, type OwnLateness } from './measured';

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
 * INIT (Node's start + the bundle's require) of the synthesized bundles, lognormals fitted to
 * 41 cold loads each on this machine (bench/init-duration.ts; bench/RESULTS.md, "Cold-start
 * INIT of the bundles": medians 1.35-1.53 s on a busy machine, ~0.2 s idle).
 */
export const MEASURED_INIT_MS: AwsModelSettings['lambda']['init'] = {
  fire: { mu: 7.2621, sigma: 0.3087 },
  ingest: { mu: 7.2529, sigma: 0.3148 },
  collect: { mu: 7.3305, sigma: 0.3031 },
};

/**
 * The deployment configuration for this traffic: the config's defaults with the workload's
 * peak. When the configuration's own checks refuse it (synth would stop), their messages are
 * the problems, and the settings are the schema's defaults without those checks, so the
 * simulation can still show what such a stack would do.
 */
function configFor(o: SimOptions): { config: DeploymentConfig; problems: string[] } {
  const base = {
    peakRequestsPerSecond: o.ratePerTarget,
    accountConcurrency: o.accountConcurrency ?? 1000,
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
 * workload's peak, the fire function's settings from deriveFireSizing, the others as
 * lib/stateless.ts sets them (test/unit/sim/stack.test.ts holds the two together).
 */
export function stackFor(o: SimOptions): { stack: StackSettings; problems: string[] } {
  const { config, problems } = configFor(o);
  const sizing = fireSizingOf(config);
  const maxConcurrency = config.maxFireConcurrency ?? sizing.maxConcurrency;
  const sixTimes = (s: number) => Math.min(43_200, 6 * s);
  // lib/stateless.ts's FUNCTION_TIMEOUTS and COLLECT_BATCHING_WINDOW (imported, they would load the CDK).
  const ingestTimeoutS = 900;
  const collectTimeoutS = 300;
  const collectBatchingWindowS = 5;
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
    maxReceiveCount: 3,
    fire: {
      memoryMb: sizing.memoryMb,
      timeoutS: sizing.timeoutSeconds,
      batchSize: sizing.batchSize,
      batchingWindowS: 0,
      maxConcurrency,
      reservedConcurrency: config.reserveFireConcurrency ? maxConcurrency : null,
      visibilityTimeoutS: sizing.visibilityTimeoutSeconds,
    },
    ingest: {
      memoryMb: 3008,
      timeoutS: ingestTimeoutS,
      batchSize: 1,
      batchingWindowS: 0,
      maxConcurrency: 10,
      reservedConcurrency: null,
      visibilityTimeoutS: sixTimes(ingestTimeoutS),
    },
    collect: {
      memoryMb: 2048,
      timeoutS: collectTimeoutS,
      batchSize: 10,
      batchingWindowS: collectBatchingWindowS,
      maxConcurrency: 5,
      reservedConcurrency: null,
      visibilityTimeoutS: sixTimes(collectTimeoutS),
    },
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
    aws: {
      accountConcurrency: o.accountConcurrency ?? 1000,
      unreservedMinimum: 100,
      esm: {
        initialConcurrency: 5,
        growthPerMinute: 300,
        maxConcurrency: 1250,
        scaleDownAfterS: 60,
        pickupMs: 20,
        idleLongPollS: 20,
        idlePollersWithMax: 5,
        idlePollersWithoutMax: 2,
      },
      provisioned: { invokesPerPoller: 10, bytesPerPollerPerS: 1_000_000, growthPerMinute: 1000 },
      lambda: {
        scalePer10s: 1000,
        invokeOverheadMs: 5,
        coldPlatformMs: 100,
        envReclaimMinutes: 10,
        init: MEASURED_INIT_MS,
      },
      sqs: { delayJitterMaxMs: 0, sendBatchMs: 30, receiveRoundTripMs: 20 },
      s3: { requestMs: 20, requestP99Ms: 100, getMBps: 90 },
    },
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

type Leaf = number | string | boolean | null;

/**
 * `path=value` overrides (`aws.esm.growthPerMinute=1000`, `stack.fire.batchSize=4`): the path
 * must name an existing leaf and the value must have its type (a number, a string, true/false,
 * or null where the leaf may be null). Every problem is reported at once.
 */
export function applyOverrides(settings: SimSettings, overrides: readonly string[]): SimSettings {
  const copy = structuredClone(settings);
  const problems: string[] = [];
  for (const o of overrides) {
    const eq = o.indexOf('=');
    if (eq <= 0) {
      problems.push(`--set ${o}: expected path=value`);
      continue;
    }
    const path = o.slice(0, eq).split('.');
    const text = o.slice(eq + 1);
    let node: Record<string, unknown> = copy as unknown as Record<string, unknown>;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      if (next === null || typeof next !== 'object') {
        node = {};
        break;
      }
      node = next as Record<string, unknown>;
    }
    const key = path.at(-1) as string;
    if (!Object.hasOwn(node, key) || (typeof node[key] === 'object' && node[key] !== null)) {
      problems.push(`--set ${o}: ${path.join('.')} is not a setting (see docs/simulator.md)`);
      continue;
    }
    const nullable = NULLABLE.has(path.join('.'));
    const value = parseLeaf(text, node[key] as Leaf, nullable);
    if (value === undefined)
      problems.push(
        `--set ${o}: ${path.join('.')} takes a ${node[key] === null ? 'number' : typeof node[key]}${nullable ? ' or null' : ''}`,
      );
    else node[key] = value;
  }
  if (problems.length > 0) throw new SettingsError(problems.join('\n'));
  return copy;
}

/** The leaves that may be unset: a function's MaximumConcurrency and reserved concurrency (not the event source's own ceiling, aws.esm.maxConcurrency). */
const NULLABLE = new Set(
  (['fire', 'ingest', 'collect'] as const).flatMap((f) => [
    `stack.${f}.maxConcurrency`,
    `stack.${f}.reservedConcurrency`,
  ]),
);

function parseLeaf(text: string, current: Leaf, nullable: boolean): Leaf | undefined {
  if (text === 'null') return nullable ? null : undefined;
  if (typeof current === 'number' || current === null) {
    const n = Number(text);
    return text.trim() !== '' && Number.isFinite(n) ? n : undefined;
  }
  if (typeof current === 'boolean') return text === 'true' ? true : text === 'false' ? false : undefined;
  return text;
}

const CHOICES: Record<string, readonly string[]> = {
  'workload.arrivals': ['even', 'poisson'],
  'stack.latePolicy': ['fire', 'drop'],
  'stack.eventSourceMode': ['standard', 'provisioned'],
};

/** A setting the simulator refuses: its message is one line per problem, for the user. */
export class SettingsError extends RangeError {
  override name = 'SettingsError';
}

/**
 * The values the simulator can run, per numeric setting: a finite number from `min` (above it
 * with `above`) to `max`, whole with `whole`, and why the bounds are where they are. These are
 * the model's bounds, not AWS's: a value the model can run and AWS or synth would refuse runs
 * as a stack that is NOT DEPLOYABLE (sim/stack-check.ts). `null` is taken where the setting may
 * be unset (NULLABLE).
 */
export interface SettingRange {
  min: number;
  max: number;
  above?: boolean;
  whole?: boolean;
  why: string;
}

/** The capture parser's line cap (lambdas/core/capture/stream.ts MAX_LINE_BYTES, 128 MiB). */
const MAX_LINE_BYTES = 128 * 1024 * 1024;
const DAY_S = 86_400;
const HOUR_MS = 3_600_000;

function functionRanges(name: 'fire' | 'ingest' | 'collect'): Record<string, SettingRange> {
  const at = `stack.${name}`;
  return {
    [`${at}.memoryMb`]: {
      min: 0,
      above: true,
      max: 1_048_576,
      why: 'memory in MB (Lambda takes 128-10,240: outside it the stack is not deployable)',
    },
    [`${at}.timeoutS`]: {
      min: 0,
      max: DAY_S,
      why: 'seconds (Lambda takes 1-900: outside it the stack is not deployable)',
    },
    [`${at}.batchSize`]: {
      min: 1,
      max: 10_000,
      whole: true,
      why: "the event source's BatchSize: messages an invocation takes",
    },
    [`${at}.batchingWindowS`]: { min: 0, max: 3600, why: 'seconds the event source gathers a batch (AWS takes 0-300)' },
    [`${at}.maxConcurrency`]: {
      min: 0,
      max: 100_000,
      whole: true,
      why: "the event source's MaximumConcurrency (AWS takes 2-1,000), or null",
    },
    [`${at}.reservedConcurrency`]: {
      min: 0,
      max: 1_000_000,
      whole: true,
      why: 'reserved concurrent executions, or null',
    },
    [`${at}.visibilityTimeoutS`]: { min: 0, max: DAY_S, why: 'seconds (SQS takes 0-43,200)' },
  };
}

export const RANGES: Readonly<Record<string, SettingRange>> = {
  'workload.ratePerTarget': {
    min: 0,
    above: true,
    max: 10_000,
    why: 'requests per second a target: the stack is sized for at most 10,000 (peakRequestsPerSecond)',
  },
  'workload.targets': { min: 1, max: 2, whole: true, why: 'the stack replays to one target, or two for A/B' },
  'workload.seconds': {
    min: 0,
    above: true,
    max: DAY_S,
    why: 'seconds of capture, up to a day: Data Capture writes a file an hour at most, and a message due further ahead hops every 15 minutes, each hop an invocation to simulate',
  },
  'workload.bodyBytes': {
    min: 0,
    max: Math.floor((MAX_LINE_BYTES * 3) / 4),
    whole: true,
    why: "a capture line holds its body in base64, within the capture parser's 128 MiB line cap",
  },
  'workload.recordBytes': {
    min: 1,
    max: MAX_LINE_BYTES,
    whole: true,
    why: "bytes a capture line: the capture parser's line cap is 128 MiB",
  },
  'workload.latencyP50S': {
    min: 0,
    above: true,
    max: 3600,
    why: 'seconds: responses are cut at the request timeout (at most 3,600 s here)',
  },
  'workload.latencyP99S': {
    min: 0,
    above: true,
    max: 3600,
    why: 'seconds: responses are cut at the request timeout (at most 3,600 s here)',
  },
  'stack.leadS': {
    min: 0,
    max: 900,
    why: "seconds a fire invocation may wait for its first request: within Lambda's 900 s",
  },
  'stack.slotS': {
    min: 0.001,
    max: 900,
    why: "seconds of due time a shard covers: at least a millisecond, at most Lambda's 900 s",
  },
  'stack.graceS': { min: 0, max: DAY_S, why: 'seconds after its due time a request is still sent' },
  'stack.requestTimeoutS': { min: 0, above: true, max: 3600, why: 'seconds a request may take' },
  'stack.lateToleranceMs': { min: 0, max: HOUR_MS, why: 'ms late before a request counts as late' },
  'stack.maxShardRequests': { min: 1, max: 1_000_000, whole: true, why: 'requests a shard holds: at least one' },
  'stack.maxMessageBytes': {
    min: 1,
    max: 1_047_552,
    whole: true,
    why: "bytes of a shard message: SQS takes 1 MiB, less the 1 KiB the ingest's packBatches keeps for an entry's envelope",
  },
  'stack.connectionsPerTarget': {
    min: 1,
    max: 1_000_000,
    whole: true,
    why: 'connections an invocation holds to a target: at least one sends',
  },
  'stack.maxReceiveCount': {
    min: 1,
    max: 10_000,
    whole: true,
    why: 'receives before the dead-letter queue (SQS takes 1-1,000)',
  },
  ...functionRanges('fire'),
  ...functionRanges('ingest'),
  ...functionRanges('collect'),
  'stack.minPollers': { min: 0, max: 100_000, whole: true, why: 'provisioned pollers (AWS takes 2-200)' },
  'stack.maxPollers': { min: 0, max: 100_000, whole: true, why: 'provisioned pollers (AWS takes 2-2,000)' },
  'aws.accountConcurrency': {
    min: 1,
    max: 1_000_000,
    whole: true,
    why: "the account's concurrent executions, as the deployment configuration takes them",
  },
  'aws.unreservedMinimum': {
    min: 0,
    max: 1_000_000,
    whole: true,
    why: 'concurrency reserved concurrency must leave to the account (documented: 100)',
  },
  'aws.esm.initialConcurrency': {
    min: 0,
    max: 100_000,
    why: 'batches an idle event source starts with (documented: 5)',
  },
  'aws.esm.growthPerMinute': {
    min: 0,
    above: true,
    max: 1_000_000,
    why: 'invocations the event source adds a minute: at 0 it would never grow',
  },
  'aws.esm.maxConcurrency': {
    min: 1,
    max: 100_000,
    whole: true,
    why: 'the most an SQS event source invokes at once (documented: 1,250): at 0 nothing would run',
  },
  'aws.esm.scaleDownAfterS': {
    min: 0,
    max: DAY_S,
    why: 'seconds with nothing waiting before the event source scales back',
  },
  'aws.esm.pickupMs': { min: 0, max: 60_000, why: 'ms from a message ready to the invoke' },
  'aws.esm.idleLongPollS': { min: 1, max: 20, why: 'seconds of an idle long poll: SQS waits 1-20 s' },
  'aws.esm.idlePollersWithMax': { min: 0, max: 1000, whole: true, why: 'pollers of an idle event source' },
  'aws.esm.idlePollersWithoutMax': { min: 0, max: 1000, whole: true, why: 'pollers of an idle event source' },
  'aws.provisioned.invokesPerPoller': {
    min: 1,
    max: 1000,
    whole: true,
    why: 'invocations a provisioned poller holds (documented: 10): at 0 nothing would run',
  },
  'aws.provisioned.bytesPerPollerPerS': {
    min: 0,
    above: true,
    max: 1e12,
    why: 'bytes a second a provisioned poller moves (documented: 1 MB)',
  },
  'aws.provisioned.growthPerMinute': {
    min: 0,
    above: true,
    max: 1_000_000,
    why: 'concurrency provisioned pollers add a minute: at 0 they would never grow',
  },
  'aws.lambda.scalePer10s': {
    min: 1,
    max: 1_000_000,
    why: 'execution environments a function may create every 10 s (documented: 1,000): below 1 none would start',
  },
  'aws.lambda.invokeOverheadMs': { min: 0, max: 60_000, why: 'ms Lambda takes to start a warm invocation' },
  'aws.lambda.coldPlatformMs': { min: 0, max: 600_000, why: 'ms to create an execution environment' },
  'aws.lambda.envReclaimMinutes': {
    min: 0,
    max: 10_080,
    why: 'minutes an idle execution environment is kept, up to a week',
  },
  ...Object.fromEntries(
    (['fire', 'ingest', 'collect'] as const).flatMap((f) => [
      [
        `aws.lambda.init.${f}.mu`,
        { min: -10, max: 10, why: 'ln of the median INIT in ms: e^10 ms is 22 s, past the 10 s Lambda gives INIT' },
      ],
      [
        `aws.lambda.init.${f}.sigma`,
        { min: 0, max: 3, why: 'the spread of ln(INIT): 3 puts the 99th percentile 1,000 times the median' },
      ],
    ]),
  ),
  'aws.sqs.delayJitterMaxMs': { min: 0, max: 60_000, why: 'ms after its delay a message may become visible' },
  'aws.sqs.sendBatchMs': { min: 0, max: 60_000, why: 'ms of a SendMessageBatch' },
  'aws.sqs.receiveRoundTripMs': { min: 0, max: 20_000, why: "ms of a receive: a long poll returns within SQS's 20 s" },
  'aws.s3.requestMs': { min: 0, max: 60_000, why: 'ms of the median S3 request' },
  'aws.s3.requestP99Ms': { min: 0, max: 600_000, why: 'ms of the 99th percentile S3 request' },
  'aws.s3.getMBps': { min: 0, above: true, max: 1_000_000, why: 'MB a second of one GET' },
  ...Object.fromEntries(
    (['minMs', 'p50Ms', 'p90Ms', 'p99Ms', 'p999Ms', 'maxMs'] as const).map((q) => [
      `handler.ownLateness.${q}`,
      {
        min: 0,
        max: HOUR_MS,
        why: "ms of the fire handler's own lateness, up to an hour (past the grace period a request expires anyway)",
      },
    ]),
  ),
  'handler.ownLatenessMemoryMb': {
    min: 0,
    above: true,
    max: 1_048_576,
    why: 'the memory the lateness was measured at, MB',
  },
  'handler.ingestParseMBps': { min: 0, above: true, max: 1_000_000, why: "MB a second of the ingest's pass 1" },
  'handler.fireDecodeMBpsPerVcpu': { min: 0, above: true, max: 1_000_000, why: 'MB of wire text a second of one vCPU' },
  'handler.notifyMs': { min: 0, max: DAY_S * 1000, why: 'ms from the capture landing to its notification' },
  idleBeforeMinutes: {
    min: 0,
    max: 525_600,
    why: 'minutes idle before the run, up to a year (past 10 minutes nothing is warm)',
  },
  seed: { min: 0, max: 0xffff_ffff, whole: true, why: 'the random streams take a 32-bit seed' },
};

/** The command's flag for a setting it sets, named with it in a refusal. */
const FLAGS: Record<string, string> = {
  'workload.ratePerTarget': '--rate',
  'workload.targets': '--targets',
  'workload.seconds': '--seconds',
  'workload.latencyP50S': '--latency-p50',
  'workload.latencyP99S': '--latency-p99',
  'workload.arrivals': '--arrivals',
  'stack.leadS': '--lead-seconds',
  'aws.accountConcurrency': '--account-concurrency',
  idleBeforeMinutes: '--idle-before',
  seed: '--seed',
};

const fmt = (n: number) =>
  Number.isInteger(n) && Math.abs(n) >= 10_000 && Math.abs(n) < 1e15 ? n.toLocaleString('en-US') : String(n);

/** The range in words: "a whole number from 1 to 1,000,000", "a number above 0 and at most 10,000". */
export function describeRange(r: SettingRange): string {
  return `${r.whole ? 'a whole number' : 'a number'} ${r.above ? 'above' : 'from'} ${fmt(r.min)} ${r.above ? 'and at most' : 'to'} ${fmt(r.max)}`;
}

/** The problem with `value` for the setting at `path` (null: none), in one line naming the setting, its range and why. */
export function rangeProblem(path: string, value: number): string | null {
  const r = RANGES[path];
  if (!r) return `${path} has no range (a bug in sim/settings.ts)`;
  const ok =
    Number.isFinite(value) &&
    (r.above ? value > r.min : value >= r.min) &&
    value <= r.max &&
    (!r.whole || Number.isInteger(value));
  if (ok) return null;
  const flag = FLAGS[path];
  return `${path}${flag ? ` (${flag})` : ''} must be ${describeRange(r)}: ${r.why} (got ${value})`;
}

/** Throws the setting's problem, if any. */
export function checkRange(path: string, value: number): void {
  const problem = rangeProblem(path, value);
  if (problem) throw new SettingsError(problem);
}

/**
 * Every problem at once, each in one line: a choice outside its list, a number outside the
 * range the simulator can run (RANGES), and the settings that must agree (a p99 below its
 * median, quantiles out of order).
 */
export function validateSettings(settings: SimSettings): void {
  const problems: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) walk(v, path ? `${path}.${k}` : k);
      return;
    }
    const choices = CHOICES[path];
    if (choices && !choices.includes(node as string))
      problems.push(
        `${path}${FLAGS[path] ? ` (${FLAGS[path]})` : ''} must be one of ${choices.join(', ')} (got ${String(node)})`,
      );
    if (node === null && !NULLABLE.has(path)) problems.push(`${path} cannot be null`);
    if (typeof node === 'number') {
      const problem = rangeProblem(path, node);
      if (problem) problems.push(problem);
    }
  };
  walk(settings, '');
  const w = settings.workload;
  if (w.latencyP99S < w.latencyP50S)
    problems.push(
      `workload.latencyP99S (--latency-p99) must be >= workload.latencyP50S (--latency-p50): a lognormal needs p99 >= p50 (got p50 ${w.latencyP50S}, p99 ${w.latencyP99S})`,
    );
  const s3 = settings.aws.s3;
  if (s3.requestP99Ms < s3.requestMs)
    problems.push(`aws.s3.requestP99Ms must be >= aws.s3.requestMs (got ${s3.requestP99Ms} < ${s3.requestMs})`);
  const own = settings.handler.ownLateness;
  const order = ['minMs', 'p50Ms', 'p90Ms', 'p99Ms', 'p999Ms', 'maxMs'] as const;
  for (let i = 1; i < order.length; i++) {
    const [lo, hi] = [order[i - 1] as (typeof order)[number], order[i] as (typeof order)[number]];
    if (own[hi] < own[lo])
      problems.push(`handler.ownLateness.${hi} must be >= handler.ownLateness.${lo} (got ${own[hi]} < ${own[lo]})`);
  }
  if (problems.length > 0) throw new SettingsError(problems.join('\n'));
}
