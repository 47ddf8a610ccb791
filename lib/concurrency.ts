/**
 * Whether the concurrency a deployment needs fits the account it goes to. Pure: the
 * configuration's check (lib/config.ts) and the stack's event sources (lib/stateless.ts) read
 * the same figures, so what is refused is what would have been deployed.
 *
 * AWS's rules, as documented:
 * - An SQS event source invokes at most 1,000 concurrent instances (ScalingConfig
 *   MaximumConcurrency, 2 to 1,000):
 *   https://docs.aws.amazon.com/lambda/latest/dg/API_ScalingConfig.html
 * - Reserved concurrency can take the account's concurrency "minus 100 for functions that
 *   don't have reserved concurrency"; a default account has 1,000 (new accounts less):
 *   https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html
 */
import { EVENT_SOURCE_CONCURRENCY } from './stack-constants';

/** ScalingConfig.MaximumConcurrency's maximum. */
export const SQS_EVENT_SOURCE_MAX_CONCURRENCY = 1000;
/** What reserved concurrency must leave to the functions without it. */
export const LAMBDA_MIN_UNRESERVED = 100;
/** The Lambda concurrency quota of a default account, per Region. */
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

export interface ConcurrencyInput {
  /** The fire function's maximum concurrency: derived (lib/sizing.ts), or maxFireConcurrency. */
  fireConcurrency: number;
  /** Where the figure comes from, for the message: the setting to change. */
  fireSource: 'peakRequestsPerSecond' | 'maxFireConcurrency';
  /** Reserve the fire function's concurrency (reserveFireConcurrency). */
  reserveFire: boolean;
  accountConcurrency: number;
  /** The ingest event source exists (autoReplay is not false). */
  ingest: boolean;
  /** The plan event source exists (schedules). */
  plan: boolean;
  /** What the peak is, for the message: requests per second per target, and targets. */
  peak: { requestsPerSecond: number; targets: number };
}

export interface ConcurrencyProblem {
  path: 'peakRequestsPerSecond' | 'maxFireConcurrency' | 'accountConcurrency';
  message: string;
}

/** The other functions' event sources together, at their maximum. */
export function otherEventSourcesConcurrency(i: Pick<ConcurrencyInput, 'ingest' | 'plan'>): number {
  return (
    (i.ingest ? EVENT_SOURCE_CONCURRENCY.ingest : 0) +
    EVENT_SOURCE_CONCURRENCY.collect +
    (i.plan ? EVENT_SOURCE_CONCURRENCY.plan : 0)
  );
}

/**
 * The account concurrency quota the deployment needs. Reserved: the fire function's share plus
 * what Lambda keeps unreserved (which must also hold the other functions at their peak).
 * Unreserved: every function at its peak at once, all from the shared pool.
 */
export function neededAccountConcurrency(i: ConcurrencyInput): number {
  const others = otherEventSourcesConcurrency(i);
  return i.reserveFire ? i.fireConcurrency + Math.max(LAMBDA_MIN_UNRESERVED, others) : i.fireConcurrency + others;
}

/** Every way the concurrency does not fit, one line each; none when it does. */
export function concurrencyProblems(i: ConcurrencyInput): ConcurrencyProblem[] {
  const problems: ConcurrencyProblem[] = [];
  const peak = `${i.peak.requestsPerSecond} requests/s to ${i.peak.targets} target${i.peak.targets === 1 ? '' : 's'}`;
  const what =
    i.fireSource === 'peakRequestsPerSecond'
      ? `the fire function needs ${i.fireConcurrency} concurrent executions for ${peak}`
      : `maxFireConcurrency is ${i.fireConcurrency}`;
  if (i.fireConcurrency > SQS_EVENT_SOURCE_MAX_CONCURRENCY) {
    problems.push({
      path: i.fireSource,
      message:
        `${what}, but an SQS event source runs at most ` +
        `${SQS_EVENT_SOURCE_MAX_CONCURRENCY.toLocaleString('en-US')} (MaximumConcurrency): lower ` +
        `peakRequestsPerSecond or peakLatencySeconds`,
    });
  }
  const needed = neededAccountConcurrency(i);
  if (needed > i.accountConcurrency) {
    const others = otherEventSourcesConcurrency(i);
    const why = i.reserveFire
      ? `${i.fireConcurrency} reserved for the fire function at ${peak}, plus the ${LAMBDA_MIN_UNRESERVED} Lambda keeps unreserved`
      : `the fire function at ${i.fireConcurrency} for ${peak}, plus the other functions at ${others}, all unreserved`;
    problems.push({
      path: 'accountConcurrency',
      message:
        `the deployment needs a Lambda concurrency quota of at least ${needed} (${why}) and accountConcurrency ` +
        `is ${i.accountConcurrency}: raise the account's "Concurrent executions" quota (Service Quotas) and ` +
        `set accountConcurrency to it, or lower peakRequestsPerSecond`,
    });
  }
  return problems;
}
