/**
 * The stack's own numbers: what lib/ sets on the ingest, collect and plan functions, their
 * event sources and the queues (the fire function's come from the configuration through
 * lib/sizing.ts). Free of aws-cdk-lib, so that the simulator (sim/settings.ts) reads the same
 * figures the stack deploys (test/unit/deploy/stack-constants.test.ts holds it to that).
 */

/** Function timeouts, seconds: a 1 GB capture file is read twice (index, then ranges) within the ingest's. */
export const FUNCTION_TIMEOUT_SECONDS = { ingest: 900, collect: 300, plan: 900 } as const;

/**
 * Function memory, MB. Ingest: a capture file's index is what it holds while reading the file twice
 * (bench/RESULTS.md, "Ingest of a 1 GB capture file"). Plan: single-threaded and CPU-bound; 3008 MB
 * leaves room for windows of millions of requests within the 15 minutes (bench/RESULTS.md, "Plan
 * function: a one-hour window at 50 requests/s").
 */
export const FUNCTION_MEMORY_MB = { ingest: 3008, collect: 2048, plan: 3008 } as const;

/** The event sources' BatchSize: a capture file, and a plan window, per invocation; collect messages ten at a time. */
export const EVENT_SOURCE_BATCH_SIZE = { ingest: 1, collect: 10, plan: 1 } as const;

/**
 * The other functions' SQS event sources: each runs at most this many invocations at once
 * (MaximumConcurrency). They reserve nothing, so they run from the account's unreserved
 * concurrency (lib/concurrency.ts weighs them).
 */
export const EVENT_SOURCE_CONCURRENCY = {
  /** Capture files: one per invocation, ten at once. */
  ingest: 10,
  collect: 5,
  /** One window per invocation (each may take minutes); two at once is Lambda's floor. */
  plan: 2,
} as const;

/**
 * The collect event source's batching window, seconds (MaximumBatchingWindowInSeconds, 0-300 s,
 * 0 by default for SQS: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html;
 * the other event sources set none). With it, Lambda gathers records and invokes once the
 * window has passed, the batch size is met or the payload reaches 6 MB, whichever comes first
 * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventsourcemapping.html#invocation-eventsourcemapping-batching).
 * A run's end puts a burst of collect messages on the queue, one per lane of the last slot,
 * each sent as its fire invocation finishes: without a window each may be its own
 * invocation, which lists the run's results and finds it still pending, and how many there
 * are depends on timing. Five seconds gathers the lanes of a slot into one look and stays far
 * shorter than the gap to the run's deadline message (the request timeout plus the grace).
 * The collector writes only at a run's end, so the delay holds up nothing, and fewer
 * invocations cost less.
 */
export const COLLECT_BATCHING_WINDOW_SECONDS = 5;

/** Every work queue's redrive policy: a message received this many times without being deleted goes to its dead-letter queue. */
export const MAX_RECEIVE_COUNT = 3;

/** SQS's longest visibility timeout, 12 hours (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html). */
export const SQS_MAX_VISIBILITY_SECONDS = 43_200;

/**
 * The visibility timeout of the ingest, collect and plan queues: AWS's guidance for an SQS
 * event source, six times the function's timeout, at most SQS's 12 hours
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html). The replay
 * queue's is the fire timeout + 60 s instead (lib/sizing.ts says why).
 */
export function sixTimesVisibilitySeconds(timeoutSeconds: number): number {
  return Math.min(SQS_MAX_VISIBILITY_SECONDS, 6 * timeoutSeconds);
}
