/**
 * AWS list prices, us-east-1, as the simulator bills a run. The official pages render their
 * tables from data at view time; the figures below were read from the pages' worked examples
 * and checked against the sources bench/pipeline-cost.ts lists. Free tiers, data transfer and
 * CloudWatch Logs are left out (documented in docs/simulator.md).
 */
export const PRICES = {
  /**
   * Lambda arm64 duration, first 7.5 billion GB-s a month. Duration includes INIT: "Duration
   * charges apply to code that runs in the handler of a function as well as initialization
   * code that is declared outside of the handler" (https://aws.amazon.com/lambda/pricing/),
   * since 1 August 2025 for on-demand ZIP functions on managed runtimes
   * (https://aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase/).
   */
  lambdaArmPerGbSecond: 0.0000133334,
  /** https://aws.amazon.com/lambda/pricing/ */
  lambdaPerRequest: 0.2 / 1e6,
  /**
   * Provisioned mode for an SQS event source: one Event Poller Unit per poller, billed per
   * second with a one-minute minimum; "The EPU price is $0.00925 per EPU-hour" (the page's
   * SQS example, US East). https://aws.amazon.com/lambda/pricing/
   */
  sqsEventPollerUnitHour: 0.00925,
  /**
   * Standard queue, first 100 billion requests a month; every 64 KB chunk of a payload is one
   * request. https://aws.amazon.com/sqs/pricing/
   */
  sqsPerRequest: 0.4 / 1e6,
  /** S3 Standard PUT, COPY, POST, LIST per request. https://aws.amazon.com/s3/pricing/ */
  s3PutClass: 0.005 / 1000,
  /** S3 Standard GET and all other requests. https://aws.amazon.com/s3/pricing/ */
  s3GetClass: 0.0004 / 1000,
} as const;

/** 30 days, the month the idle figures are quoted for. */
export const SECONDS_PER_MONTH = 30 * 24 * 3600;
