/**
 * The model of AWS a simulation runs by default (sim/settings.ts AwsModelSettings): each
 * figure AWS documents, cited here or in the module that models it (sim/aws/*.ts), and each
 * one that is not, marked ASSUMED there and ours to question. None of them is the stack's:
 * the stack's own numbers are lib/stack-constants.ts's and lib/sizing.ts's.
 */
import { DEFAULT_ACCOUNT_CONCURRENCY, LAMBDA_MIN_UNRESERVED } from '../../lib/concurrency';
import type { AwsModelSettings } from '../settings';

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
 * The SQS event source's scaling (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html,
 * sim/aws/event-source.ts): five batches at first, up to 300 more invokes a minute, at most
 * 1,250 without MaximumConcurrency; idle, five pollers, as few as 2 without it. Provisioned
 * mode: 10 invokes and 1 MB/s a poller, up to 1,000 concurrency added a minute
 * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventsourcemapping.html).
 */
const EVENT_SOURCE: Pick<AwsModelSettings, 'esm' | 'provisioned'> = {
  esm: {
    initialConcurrency: 5,
    growthPerMinute: 300,
    maxConcurrency: 1250,
    scaleDownAfterS: 60,
    pickupMs: 20,
    // SQS's longest long poll, 20 s (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html).
    idleLongPollS: 20,
    idlePollersWithMax: 5,
    idlePollersWithoutMax: 2,
  },
  provisioned: { invokesPerPoller: 10, bytesPerPollerPerS: 1_000_000, growthPerMinute: 1000 },
};

/**
 * The model of AWS for an account of `accountConcurrency` (default: a default account's,
 * lib/concurrency.ts). Lambda: 1,000 new execution environments every 10 s, 100 left
 * unreserved (https://docs.aws.amazon.com/lambda/latest/dg/scaling-behavior.html,
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html; sim/aws/lambda.ts).
 * S3: a small request's median in the tens of ms (sim/aws/s3.ts cites it); SQS: sim/aws/sqs.ts.
 */
export function awsModelDefaults(accountConcurrency = DEFAULT_ACCOUNT_CONCURRENCY): AwsModelSettings {
  return {
    accountConcurrency,
    unreservedMinimum: LAMBDA_MIN_UNRESERVED,
    ...structuredClone(EVENT_SOURCE),
    lambda: {
      scalePer10s: 1000,
      invokeOverheadMs: 5,
      coldPlatformMs: 100,
      envReclaimMinutes: 10,
      init: structuredClone(MEASURED_INIT_MS),
    },
    sqs: { delayJitterMaxMs: 0, sendBatchMs: 30, receiveRoundTripMs: 20 },
    s3: { requestMs: 20, requestP99Ms: 100, getMBps: 90 },
  };
}
