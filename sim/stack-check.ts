/**
 * Whether AWS accepts the stack's settings, and the nearest settings it does accept, which the
 * simulator then runs (a refused stack does not deploy at all; the simulation shows what the
 * nearest deployable one would do, and says it changed them):
 * - An SQS event source's MaximumConcurrency is 2-1,000.
 *   https://docs.aws.amazon.com/lambda/latest/api/API_ScalingConfig.html
 * - Reserved concurrency: "You can reserve up to the Unreserved account concurrency value that
 *   is shown, minus 100 for functions that don't have reserved concurrency."
 *   https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html
 * - Provisioned mode: minimum pollers 2-200, maximum 2-2,000, and not together with
 *   MaximumConcurrency. https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 * - BatchSize of a standard queue: 1-10, up to 10,000 with a batching window of at least 1 s
 *   (MaximumBatchingWindowInSeconds 0-300). https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 */
import type { SimSettings } from './settings';

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

export function deployable(settings: SimSettings, configProblems: readonly string[] = []): { settings: SimSettings; problems: string[] } {
  const s = structuredClone(settings);
  const problems: string[] = [...configProblems];
  const fire = s.stack.fire;
  if (s.stack.eventSourceMode === 'provisioned') {
    if (fire.maxConcurrency !== null) {
      problems.push('provisioned mode and MaximumConcurrency are mutually exclusive: MaximumConcurrency dropped');
      fire.maxConcurrency = null;
    }
    const min = clamp(s.stack.minPollers, 2, 200);
    const max = clamp(s.stack.maxPollers, Math.max(2, min), 2000);
    if (min !== s.stack.minPollers || max !== s.stack.maxPollers) problems.push(`pollers ${s.stack.minPollers}-${s.stack.maxPollers} outside 2-200 / 2-2,000: ran with ${min}-${max}`);
    s.stack.minPollers = min;
    s.stack.maxPollers = max;
  }
  const asked = { max: fire.maxConcurrency, reserved: fire.reservedConcurrency };
  if (fire.maxConcurrency !== null && (fire.maxConcurrency < 2 || fire.maxConcurrency > 1000)) {
    problems.push(`the fire event source's MaximumConcurrency ${fire.maxConcurrency} is outside AWS's 2-1,000`);
    fire.maxConcurrency = clamp(fire.maxConcurrency, 2, 1000);
  }
  const reservable = s.aws.accountConcurrency - s.aws.unreservedMinimum;
  if (fire.reservedConcurrency !== null && fire.reservedConcurrency > reservable) {
    problems.push(`reserved concurrency ${fire.reservedConcurrency} leaves less than ${s.aws.unreservedMinimum} unreserved of the account's ${s.aws.accountConcurrency}`);
    fire.reservedConcurrency = Math.max(0, reservable);
  }
  // The stack reserves what the event source may use (lib/stateless.ts): cut, they stay equal.
  if (asked.max !== null && asked.max === asked.reserved && fire.maxConcurrency !== null && fire.reservedConcurrency !== null) {
    fire.maxConcurrency = fire.reservedConcurrency = Math.max(2, Math.min(fire.maxConcurrency, fire.reservedConcurrency));
  }
  if (fire.maxConcurrency !== asked.max || fire.reservedConcurrency !== asked.reserved) problems.push(`ran with MaximumConcurrency ${fire.maxConcurrency ?? 'unset'} and reserved concurrency ${fire.reservedConcurrency ?? 'none'}`);
  for (const [name, fn] of Object.entries({ fire, ingest: s.stack.ingest, collect: s.stack.collect })) {
    if (!Number.isInteger(fn.batchingWindowS) || fn.batchingWindowS > 300) throw new RangeError(`stack.${name}.batchingWindowS must be a whole number of seconds 0-300 (got ${fn.batchingWindowS})`);
    const most = fn.batchingWindowS >= 1 ? 10_000 : 10;
    if (!Number.isInteger(fn.batchSize) || fn.batchSize < 1 || fn.batchSize > most) throw new RangeError(`stack.${name}.batchSize must be a whole number 1-${most.toLocaleString('en-US')}${most === 10 ? ' without a batching window' : ''} (got ${fn.batchSize})`);
  }
  return { settings: s, problems };
}
