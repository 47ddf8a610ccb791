/**
 * Whether AWS and synth accept the stack's settings, and the nearest settings AWS does accept,
 * which the simulator then runs (a refused stack does not deploy at all; the simulation shows
 * what the nearest deployable one would do, and says it changed them).
 *
 * The rules, each with its source (DOCUMENTED, ASSUMED or MEASURED):
 * docs/simulator-model.md#what-aws-and-synth-accept.
 */
import { deploymentConfigSchema, FIRE_BUDGET_SECONDS } from '../lib/config';
import type { FunctionSettings, SimSettings } from './settings';

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

export function deployable(
  settings: SimSettings,
  configProblems: readonly string[] = [],
): { settings: SimSettings; problems: string[] } {
  const s = structuredClone(settings);
  // Synth's word on the configuration settings the stack holds is said again below, of the values that run (an
  // override may have changed them).
  const ownKeys = CONFIG_SETTINGS.map(([key]) => `synth refuses: captureReplay.${key}:`);
  const problems: string[] = configProblems.filter((p) => !ownKeys.some((k) => p.startsWith(k)));
  const fire = s.stack.fire;
  if (s.stack.eventSourceMode === 'provisioned') {
    if (fire.maxConcurrency !== null) {
      problems.push('provisioned mode and MaximumConcurrency are mutually exclusive: MaximumConcurrency dropped');
      fire.maxConcurrency = null;
    }
    const min = clamp(s.stack.minPollers, 2, 200);
    const max = clamp(s.stack.maxPollers, Math.max(2, min), 2000);
    if (min !== s.stack.minPollers || max !== s.stack.maxPollers)
      problems.push(
        `pollers ${s.stack.minPollers}-${s.stack.maxPollers} outside 2-200 / 2-2,000: ran with ${min}-${max}`,
      );
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
    problems.push(
      `reserved concurrency ${fire.reservedConcurrency} leaves less than ${s.aws.unreservedMinimum} ` +
        `unreserved of the account's ${s.aws.accountConcurrency}`,
    );
    fire.reservedConcurrency = Math.max(0, reservable);
  }
  // The stack reserves what the event source may use (lib/stateless.ts): cut, they stay equal.
  if (
    asked.max !== null &&
    asked.max === asked.reserved &&
    fire.maxConcurrency !== null &&
    fire.reservedConcurrency !== null
  ) {
    fire.maxConcurrency = fire.reservedConcurrency = Math.max(
      2,
      Math.min(fire.maxConcurrency, fire.reservedConcurrency),
    );
  }
  if (fire.maxConcurrency !== asked.max || fire.reservedConcurrency !== asked.reserved)
    problems.push(
      `ran with MaximumConcurrency ${fire.maxConcurrency ?? 'unset'} and reserved concurrency ${fire.reservedConcurrency ?? 'none'}`,
    );
  for (const [name, fn] of Object.entries({ fire, ingest: s.stack.ingest, collect: s.stack.collect }))
    problems.push(...functionProblems(name, fn));
  if (!Number.isInteger(s.stack.maxReceiveCount) || s.stack.maxReceiveCount > 1000) {
    const ran = clamp(Math.round(s.stack.maxReceiveCount), 1, 1000);
    problems.push(
      `the replay queue's maxReceiveCount ${s.stack.maxReceiveCount} is outside SQS's 1-1,000: ran with ${ran}`,
    );
    s.stack.maxReceiveCount = ran;
  }
  problems.unshift(...synthProblems(s));
  return { settings: s, problems };
}

const whole = (v: number, lo: number, hi: number) => clamp(Math.round(v), lo, hi);

/** A function and its queue and event source against AWS's limits: the problems, each with what ran; `fn` is set to what AWS accepts. */
function functionProblems(name: string, fn: FunctionSettings): string[] {
  const problems: string[] = [];
  const fix = <K extends 'memoryMb' | 'timeoutS' | 'batchingWindowS' | 'batchSize' | 'visibilityTimeoutS'>(
    key: K,
    ran: number,
    why: string,
  ) => {
    if (fn[key] === ran) return;
    problems.push(`the ${name} function's ${why} (got ${fn[key]}): ran with ${ran}`);
    fn[key] = ran;
  };
  fix('memoryMb', whole(fn.memoryMb, 128, 10_240), 'memory is 128-10,240 whole MB in Lambda');
  fix('timeoutS', whole(fn.timeoutS, 1, 900), 'timeout is 1-900 whole seconds in Lambda');
  fix('batchingWindowS', whole(fn.batchingWindowS, 0, 300), 'batching window is 0-300 whole seconds in Lambda');
  const most = fn.batchingWindowS >= 1 ? 10_000 : 10;
  fix(
    'batchSize',
    whole(fn.batchSize, 1, most),
    `batch size is 1-${most.toLocaleString('en-US')}${most === 10 ? ' without a batching window' : ''} in Lambda`,
  );
  fix(
    'visibilityTimeoutS',
    whole(Math.max(fn.visibilityTimeoutS, fn.timeoutS), 0, 43_200),
    "queue's visibility timeout is 0-43,200 whole seconds in SQS, and at least the function's timeout for Lambda's event source",
  );
  if (name !== 'fire' && fn.maxConcurrency !== null && (fn.maxConcurrency < 2 || fn.maxConcurrency > 1000)) {
    const ran = clamp(fn.maxConcurrency, 2, 1000);
    problems.push(
      `the ${name} event source's MaximumConcurrency ${fn.maxConcurrency} is outside AWS's 2-1,000: ran with ${ran}`,
    );
    fn.maxConcurrency = ran;
  }
  return problems;
}

/** The deployment configuration's settings the stack holds, by their names in it. */
const CONFIG_SETTINGS = [
  ['leadSeconds', (s: SimSettings) => s.stack.leadS],
  ['slotSeconds', (s: SimSettings) => s.stack.slotS],
  ['graceSeconds', (s: SimSettings) => s.stack.graceS],
  ['requestTimeoutSeconds', (s: SimSettings) => s.stack.requestTimeoutS],
  ['lateToleranceMs', (s: SimSettings) => s.stack.lateToleranceMs],
  ['accountConcurrency', (s: SimSettings) => s.aws.accountConcurrency],
] as const;

/** What synth says of the stack's configuration settings, in its words ("synth refuses: captureReplay.leadSeconds: ..."). */
function synthProblems(s: SimSettings): string[] {
  const problems: string[] = [];
  for (const [key, value] of CONFIG_SETTINGS) {
    const parsed = deploymentConfigSchema.shape[key].safeParse(value(s));
    if (!parsed.success)
      problems.push(`synth refuses: captureReplay.${key}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  const total = s.stack.leadS + s.stack.slotS + s.stack.requestTimeoutS;
  if (problems.length === 0 && total > FIRE_BUDGET_SECONDS) {
    problems.push(
      `synth refuses: captureReplay.requestTimeoutSeconds: leadSeconds + slotSeconds + requestTimeoutSeconds ` +
        `= ${total} s: at most ${FIRE_BUDGET_SECONDS} s fit in one fire invocation`,
    );
  }
  return problems;
}
