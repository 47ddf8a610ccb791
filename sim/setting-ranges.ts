/**
 * The values the simulator can run, per setting (RANGES, CHOICES, NULLABLE), and the one check
 * of a whole set of settings against them (validateSettings): every problem at once, one line
 * each, naming the setting, its flag when the command sets it, its range and why.
 */
import { ConfigurationError, EXIT_CODES } from '../lambdas/core/errors';
import type { SimSettings } from './settings';

/** A setting the simulator refuses: its message is one line per problem, for the user; a usage error. */
export class SettingsError extends ConfigurationError {
  override readonly name: string = 'SettingsError';
  override readonly exitCode: number = EXIT_CODES.usage;
}

/**
 * The leaves that may be unset: a function's MaximumConcurrency and reserved concurrency (not the event source's own
 * ceiling, aws.esm.maxConcurrency).
 */
export const NULLABLE = new Set(
  (['fire', 'ingest', 'collect'] as const).flatMap((f) => [
    `stack.${f}.maxConcurrency`,
    `stack.${f}.reservedConcurrency`,
  ]),
);

/** The settings that take one of a few words. */
export const CHOICES: Record<string, readonly string[]> = {
  'workload.arrivals': ['even', 'poisson'],
  'stack.latePolicy': ['fire', 'drop'],
  'stack.eventSourceMode': ['standard', 'provisioned'],
};

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
    why:
      'seconds of capture, up to a day: Data Capture writes a file an hour at most, and a message due further ' +
      'ahead hops every 15 minutes, each hop an invocation to simulate',
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
  const kind = r.whole ? 'a whole number' : 'a number';
  return `${kind} ${r.above ? 'above' : 'from'} ${fmt(r.min)} ${r.above ? 'and at most' : 'to'} ${fmt(r.max)}`;
}

/** The problem with `value` for the setting at `path` (null: none), in one line naming the setting, its range and why. */
export function rangeProblem(path: string, value: number): string | null {
  const r = RANGES[path];
  if (!r) return `${path} has no range (a bug in sim/setting-ranges.ts)`;
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
      'workload.latencyP99S (--latency-p99) must be >= workload.latencyP50S (--latency-p50): a lognormal needs ' +
        `p99 >= p50 (got p50 ${w.latencyP50S}, p99 ${w.latencyP99S})`,
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
