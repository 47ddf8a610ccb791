/**
 * `npm run sim -- --rate <per target> --targets <n> --seconds <n> --latency-p50 <s>
 * --latency-p99 <s> [--lead-seconds n] [--account-concurrency n] [--idle-before <minutes>]
 * [--seed n] [--target-kind http|sagemaker] [--set path=value ...] [--table]`: one simulated run of the pipeline's AWS side,
 * the report as JSON on stdout and as a table on stderr (or only the table on stdout with
 * `--table`). A bad flag is a one-line error and exit 2. docs/simulator.md explains the output.
 */
import { exitCodeOf } from '../lambdas/core/errors';
import { Command, InvalidArgumentError, Option } from 'commander';
import { simulate } from './engine';
import { checkMemory, type MemoryLimit } from './memory';
import { report, table } from './report';
import { applyOverrides } from './overrides';
import { validateSettings } from './setting-ranges';
import { settingsFor } from './settings';
import { deployable } from './stack-check';

const positive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!(Number.isFinite(n) && n > 0)) throw new InvalidArgumentError(`${name} must be a number > 0`);
  return n;
};
const wholeAtLeast = (name: string, min: number) => (v: string) => {
  const n = Number(v);
  if (!(Number.isInteger(n) && n >= min)) throw new InvalidArgumentError(`${name} must be a whole number >= ${min}`);
  return n;
};
const nonNegative = (name: string) => (v: string) => {
  const n = Number(v);
  if (!(Number.isFinite(n) && n >= 0)) throw new InvalidArgumentError(`${name} must be a number >= 0`);
  return n;
};

export function program(): Command {
  return new Command('sim')
    .description(
      "Simulates the pipeline's AWS side for a traffic: lateness at the server, expired, lost, throttled, concurrency and cost",
    )
    .requiredOption('--rate <n>', 'requests per second per target', positive('--rate'))
    .requiredOption('--targets <n>', 'targets', wholeAtLeast('--targets', 1))
    .requiredOption('--seconds <n>', 'length of the capture, seconds', positive('--seconds'))
    .requiredOption('--latency-p50 <s>', "the target's median response time, seconds", positive('--latency-p50'))
    .requiredOption(
      '--latency-p99 <s>',
      "the target's 99th percentile response time, seconds",
      positive('--latency-p99'),
    )
    .option('--lead-seconds <n>', "the stack's leadSeconds (default: the config's)", wholeAtLeast('--lead-seconds', 1))
    .option(
      '--peak-latency-seconds <n>',
      "the stack's peakLatencySeconds (default: the config's)",
      positive('--peak-latency-seconds'),
    )
    .option(
      '--account-concurrency <n>',
      "the account's Lambda concurrency quota",
      wholeAtLeast('--account-concurrency', 1),
      1000,
    )
    .option('--idle-before <minutes>', 'minutes the pipeline was idle before the run', nonNegative('--idle-before'), 60)
    .option('--seed <n>', 'random seed', wholeAtLeast('--seed', 0), 1)
    .addOption(
      new Option('--arrivals <kind>', 'requests per capture second').choices(['even', 'poisson']).default('even'),
    )
    .addOption(
      new Option(
        '--target-kind <kind>',
        "the targets' kind: the fire function's memory and its measured lateness depend on it",
      )
        .choices(['http', 'sagemaker'])
        .default('http'),
    )
    .option(
      '--set <path=value>',
      'change one setting (repeatable), e.g. aws.esm.growthPerMinute=1000',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--table', 'print only the table, on stdout')
    .showHelpAfterError(false);
}

interface Flags {
  rate: number;
  targets: number;
  seconds: number;
  latencyP50: number;
  latencyP99: number;
  leadSeconds?: number;
  peakLatencySeconds?: number;
  accountConcurrency: number;
  idleBefore: number;
  seed: number;
  arrivals: 'even' | 'poisson';
  targetKind: 'http' | 'sagemaker';
  set: string[];
  table?: boolean;
}

/**
 * The command on `argv`: 0 with the report; 2 with one line on a flag or setting it refuses (a
 * value outside the range the simulator can run, the configuration's refusal of the traffic, a
 * run too large for `memory`: by default this machine's free memory); 1 with one line on a
 * failure of its own (the measured lateness file, a bug).
 */
export function run(
  argv: readonly string[],
  out: (s: string) => void,
  err: (s: string) => void,
  memory?: MemoryLimit,
): number {
  const cmd = program().exitOverride();
  cmd.configureOutput({ writeOut: out, writeErr: err });
  let flags: Flags;
  try {
    flags = cmd.parse([...argv], { from: 'user' }).opts<Flags>();
  } catch (e) {
    const code = (e as { code?: string }).code;
    return code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 2;
  }
  try {
    const { settings: base, problems: configProblems } = settingsFor({
      ratePerTarget: flags.rate,
      targets: flags.targets,
      seconds: flags.seconds,
      latencyP50S: flags.latencyP50,
      latencyP99S: flags.latencyP99,
      accountConcurrency: flags.accountConcurrency,
      idleBeforeMinutes: flags.idleBefore,
      seed: flags.seed,
      arrivals: flags.arrivals,
      targetKind: flags.targetKind,
      ...(flags.leadSeconds !== undefined ? { leadSeconds: flags.leadSeconds } : {}),
      ...(flags.peakLatencySeconds !== undefined ? { peakLatencySeconds: flags.peakLatencySeconds } : {}),
    });
    const settings = applyOverrides(base, flags.set);
    validateSettings(settings);
    const { settings: ran, problems } = deployable(settings, configProblems);
    checkMemory(ran, memory);
    const t0 = performance.now();
    const result = report(simulate(ran), problems, performance.now() - t0);
    if (flags.table) out(table(result) + '\n');
    else {
      out(JSON.stringify(result, null, 2) + '\n');
      err(table(result) + '\n');
    }
    return 0;
  } catch (e) {
    err(`sim: ${e instanceof Error ? e.message.split('\n').join('; ') : String(e)}\n`);
    return exitCodeOf(e);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = run(
    process.argv.slice(2),
    (s) => process.stdout.write(s),
    (s) => process.stderr.write(s),
  );
}
