/**
 * The capture-replay command line as a commander program, built without being run: the bin
 * (bin/capture-replay.ts) parses process.argv with it, and scripts/gen-cli-docs.ts reads it to
 * write docs/cli.md. Every command's implementation is imported lazily by its action, so
 * `--help` stays instant and a usage error never pays for undici or the core.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_COMPARE_OPTIONS } from '../core/compare/types';
import { buildMockSageMakerProgram, buildMockServerProgram } from '../mocks/cli';
import { decimalNumber, MAX_RESAMPLES, parseGoodput, parseRehearsal, parseWorkers, usageErrors } from './cli-usage';
import { parseTimeFlag } from './time-flag';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** A numeric flag: a decimal number (decimalNumber: `0x2` is refused, not read as 2) that passes `check`. */
function number(name: string, check: (n: number) => boolean, rule: string) {
  return (raw: string): number => {
    const value = decimalNumber(raw);
    if (!Number.isFinite(value) || !check(value)) {
      throw new InvalidArgumentError(`${name} must be ${rule} (got "${raw}")`);
    }
    return value;
  };
}

const nonNegative = (name: string) => number(name, (n) => n >= 0, 'a number >= 0');
const positive = (name: string) => number(name, (n) => n > 0, 'a number > 0');
const positiveInt = (name: string) => number(name, (n) => Number.isInteger(n) && n > 0, 'a whole number > 0');
const fraction = (name: string) => number(name, (n) => n > 0 && n <= 1, 'a number in (0, 1]');
const effect = (name: string) => number(name, (n) => n >= 0 && n < 1, 'a fraction in [0, 1), e.g. 0.02 for 2 %');
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];
function goodput(raw: string, previous: Record<string, number> | undefined): Record<string, number> {
  const slos = parseGoodput(raw);
  if (typeof slos === 'string') throw new InvalidArgumentError(slos);
  return { ...previous, ...slos };
}

/** A duration as `500ms`, `90s`, `3m`, `1h` (a bare number is seconds), in ms. */
function durationArg(name: string) {
  return (raw: string): number => {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
    const ms = m
      ? Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
      : NaN;
    if (!(ms > 0))
      throw new InvalidArgumentError(`${name} must be a duration > 0 such as 90s, 3m or 1h (got "${raw}")`);
    return ms;
  };
}

/** A parser of `auto` or a number: a string other than `auto` is what is wrong. */
function autoOr(parse: (raw: string) => number | 'auto' | string) {
  return (raw: string): number | 'auto' => {
    const value = parse(raw);
    if (typeof value === 'string' && value !== 'auto') throw new InvalidArgumentError(value);
    return value;
  };
}
const workers = autoOr(parseWorkers);

const FAIL_ON = ['worse', 'changed', 'inconclusive'] as const;
function failOn(raw: string): string[] {
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = list.filter((v) => !(FAIL_ON as readonly string[]).includes(v));
  if (list.length === 0 || bad.length > 0)
    throw new InvalidArgumentError(`--fail-on takes ${FAIL_ON.join(', ')} (comma-separated), got "${raw}"`);
  return list;
}

/** The comparison options shared by `replay` (two targets or more) and `compare`. */
function comparisonOptions(command: Command): Command {
  return command
    .option(
      '--min-effect <fraction>',
      'smallest relative change called better or worse (0.02 = 2 %)',
      effect('--min-effect'),
      DEFAULT_COMPARE_OPTIONS.minEffect,
    )
    .option(
      '--resamples <n>',
      'bootstrap resamples for the confidence intervals',
      number(
        '--resamples',
        (n) => Number.isInteger(n) && n > 0 && n <= MAX_RESAMPLES,
        `a whole number from 1 to ${MAX_RESAMPLES}`,
      ),
      DEFAULT_COMPARE_OPTIONS.resamples,
    )
    .option(
      '--fail-on <verdicts>',
      `exit 3 when any comparison verdict is one of these (${FAIL_ON.join(', ')}), e.g. to gate a deployment in CI`,
      failOn,
    );
}

const EXIT_CODES = `
Exit codes:
  0        the run was done (a target that took none of the capture, e.g. a
           chat target on CSV records, is named but does not fail a run
           another replayed)
  1        it could not be done (missing captures, a target not reachable, no
           replayable record, none left by --sample or --amplify, no target
           replayed anything, every request to a target failed, error rate
           above --max-error-rate, a cancelled or unfinished run given to
           compare)
  2        usage error
  3        a comparison verdict matched --fail-on
  130/143  stopped by SIGINT (Ctrl-C) / SIGTERM; what was done is written`;

/** How each request is sent: `replay` and `capacity` alike. */
function requestOptions(command: Command): Command {
  return command
    .option('--path <path>', 'chat completions path under the base URL', '/v1/chat/completions')
    .option('--streaming', 'force `stream: true` (and stream_options.include_usage) to measure TTFT and ITL', false)
    .option('--model <name>', 'override the `model` field of every request')
    .option('--api-key-env <var>', 'name of the environment variable holding a bearer API key (none sent without it)');
}

const startOffsetOption = () =>
  new Option('--start-offset <ms>', 'skip requests before this offset from the first capture (inclusive)').argParser(
    nonNegative('--start-offset'),
  );

/** The replay's pace: `replay` and `capacity` alike. */
function paceOptions(command: Command): Command {
  return command
    .option('--time-scale <x>', 'replay speed: 2 = twice as fast, 0.5 = half speed', positive('--time-scale'), 1)
    .addOption(
      new Option(
        '--intra-second <policy>',
        'requests captured in the same whole second: spread evenly or fire together',
      )
        .choices(['spread', 'burst'])
        .default('spread'),
    );
}

/** How the schedule is fired: `replay` and `capacity` alike. */
function firingOptions(command: Command): Command {
  return command
    .option(
      '--max-in-flight <n>',
      'cap on concurrent requests (a request held by the cap is late; its lag says so)',
      positiveInt('--max-in-flight'),
    )
    .option(
      '--workers <n|auto>',
      'fire threads, each with its own connections: auto = this thread up to ~2,500 requests/s at the busiest ' +
        'second, else one per ~2,500/s up to the cores less one; --max-in-flight is split between them',
      workers,
      'auto',
    )
    .addOption(
      new Option(
        '--wait <mode>',
        'precise: each request within a fraction of a ms of its due time (0.2 ms naps for the last 1.5 ms ' +
          'before each); coarse: timers only, requests ~1 ms late at the median and a few ms at p99, never early',
      )
        .choices(['precise', 'coarse'])
        .default('precise'),
    )
    .option(
      '--rehearsal <n|auto>',
      'requests each firing thread sends per target to an in-process sink before the first due time (twice, a ' +
        'full garbage collection between, when every target connects without TLS in under 3 ms), so that the ' +
        'first requests do not run through cold code; nothing reaches the target (0: none); auto = twice the ' +
        "thread's share of the busiest second of the plan, at least 64, at most 2,000 and at most the requests " +
        'the thread sends a target',
      autoOr(parseRehearsal),
      'auto',
    )
    .option('--timeout <ms>', 'per-request timeout', positive('--timeout'), 600_000)
    .option('--lead <ms>', 'delay from start-up to the first request', nonNegative('--lead'), 500)
    .option(
      '--late-tolerance <ms>',
      'lateness beyond which --late-policy applies (default: none, every request is fired however late, its lag recorded)',
      nonNegative('--late-tolerance'),
    )
    .addOption(
      new Option('--late-policy <policy>', 'what to do with a request later than --late-tolerance')
        .choices(['fire', 'drop'])
        .default('fire'),
    );
}

const GOODPUT_HELP =
  "goodput SLOs as AIPerf spells them: space-separated metric:value pairs in the metric's unit (ms for " +
  'latencies), e.g. "time_to_first_token:200 inter_token_latency:50"';

/** What the run checks first and keeps of the answers: `replay` and `capacity` alike. */
function checkOptions(command: Command): Command {
  return command
    .option(
      '--no-preflight',
      'do not check that every target can be reached (TCP connect; SageMaker: region and credentials) before the schedule starts',
    )
    .option(
      '--no-response-excerpts',
      'keep no response text in records and error summaries (error messages name the status and type only)',
    );
}

const runIdOption = () => new Option('--run-id <id>', 'run id (default: UTC timestamp + random suffix)');

/** The run's figures as the pipeline's CloudWatch metrics: `replay`, `compare` and `capacity` alike (cloudwatch-output.ts). */
function cloudWatchOptions(command: Command, where: string): Command {
  return command
    .option(
      '--cloudwatch <namespace>',
      'write the figures the pipeline writes as CloudWatch metrics (EMF documents, one a line) to ' +
        `cloudwatch-emf.jsonl in ${where}, in this namespace (the pipeline's default: capture-replay)`,
    )
    .option(
      '--cloudwatch-stack <name>',
      "their Stack dimension (default: local); a deployed stack's name puts them on its dashboard",
    )
    .option(
      '--cloudwatch-publish',
      "also send them to CloudWatch with PutMetricData (the AWS SDK's default credentials and Region; needs cloudwatch:PutMetricData)",
      false,
    );
}

/** A point in time (time-flag.ts), relative forms from now, in epoch ms. */
function timeArg(name: string) {
  return (raw: string): number => {
    const value = parseTimeFlag(name, raw, Date.now());
    if (typeof value === 'string') throw new InvalidArgumentError(value);
    return value;
  };
}

/** The captured window by time, and the region of s3:// captures (captures-source.ts). */
function capturesOptions(command: Command): Command {
  return command
    .option(
      '--from <time>',
      'replay the captures whose inferenceTime is at or after this: ISO 8601 with a zone ' +
        '(2026-04-29T10:00:00Z) or before now (-2h, -90m, -1d); with s3:// captures only the hour partitions ' +
        'from here on are read',
      timeArg('--from'),
    )
    .option(
      '--to <time>',
      'and before this (same forms, e.g. now or -1h); instead of --start-offset/--end-offset',
      timeArg('--to'),
    )
    .option(
      '--region <region>',
      "region of s3:// captures' bucket (default: the AWS SDK default chain, as the AWS CLI finds it)",
    );
}

function addReplay(program: Command): void {
  const replay = usageErrors(program.command('replay'), 'replay')
    .description(
      'replay a capture file or a folder of them (e.g. from `aws s3 sync`) against one OpenAI-compatible ' +
        'server or SageMaker endpoint, or several to compare them',
    )
    .argument(
      '<captures-path>',
      'a .jsonl capture file or a folder of them (searched recursively), or s3://<bucket>/<prefix> (Data ' +
        'Capture read in place: only the hour partitions of the window, see --from/--to)',
    )
    .option(
      '--url <base-url>',
      'one target: server base URL, e.g. http://localhost:8000, or sagemaker:<endpoint>[?region=...] for a SageMaker endpoint',
    )
    .option(
      '--target <name=url>',
      'a target to compare, e.g. --target A=http://a:8000 --target B=sagemaker:<endpoint> (repeat; the first is the baseline)',
      collect,
    )
    .option('--target-name <name>', 'name of the target in results', 'target')
    .addOption(
      new Option(
        '--dispatch <mode>',
        'several targets: each request to all at its due time, or the whole schedule to one target after another',
      )
        .choices(['parallel', 'sequential'])
        .default('parallel'),
    )
    .option('--out <dir>', 'output folder; results go to <dir>/<run-id>/<target-name>/', 'capture-replay-out')
    .option(
      '--overwrite',
      'replace the results of an earlier run with the same --run-id in --out (removed first, whole); without it such a run is refused',
      false,
    );
  requestOptions(replay)
    .addOption(startOffsetOption())
    .option(
      '--end-offset <ms>',
      'skip requests after this offset from the first capture (inclusive)',
      nonNegative('--end-offset'),
    );
  capturesOptions(replay);
  paceOptions(replay)
    .option('--limit <n>', 'replay at most the first n requests of the window', positiveInt('--limit'))
    .option('--sample <rate>', 'replay a deterministic random fraction of requests', fraction('--sample'))
    .option(
      '--amplify <k>',
      "k times the captured traffic over the same time: each request's copies spread through the gap to the " +
        'next request (fractional k too; below 1, a sample as --sample)',
      positive('--amplify'),
    )
    .option('--seed <n>', 'seed for --sample (and --amplify below 1)', positiveInt('--seed'), 1);
  firingOptions(replay)
    .option(
      '--max-error-rate <rate>',
      'exit 1 when the failed fraction of fired requests exceeds this',
      fraction('--max-error-rate'),
    )
    .addOption(runIdOption())
    .option('--goodput <slos>', GOODPUT_HELP, goodput);
  checkOptions(replay).option('--no-progress', 'no progress bar even on a terminal');
  cloudWatchOptions(replay, "the run's folder");
  comparisonOptions(replay).action(async (capturesPath: string, options: Record<string, unknown>) => {
    const { replayCommand } = await import('./replay/command');
    process.exitCode = await replayCommand({ capturesPath, ...options } as Parameters<typeof replayCommand>[0]);
  });
}

function addCapacity(program: Command): void {
  const capacity = usageErrors(program.command('capacity'), 'capacity')
    .description(
      "find how many times today's traffic each target sustains: replay a window of the captures at growing " +
        'factors (then bisection) until the goodput or error objectives fail, each step a full replay with its ' +
        'own results',
    )
    .argument(
      '<captures-path>',
      'a .jsonl capture file or a folder of them (searched recursively), or s3://<bucket>/<prefix> (Data ' +
        'Capture read in place: only the hour partitions of the window, see --from/--to)',
    )
    .requiredOption(
      '--target <name=url>',
      'a target to search, e.g. --target A=http://a:8000 --target B=http://b:8000 (repeat; each is searched on its own)',
      collect,
    )
    .option(
      '--out <dir>',
      'output folder; the search goes to <dir>/<run-id>/ (capacity.json, report.html, steps/)',
      'capture-replay-out',
    )
    .option(
      '--overwrite',
      'replace the results of an earlier run or search with the same --run-id in --out (removed first, whole); ' +
        'without it such a run is refused',
      false,
    )
    .requiredOption('--goodput <slos>', `the objectives: ${GOODPUT_HELP}`, goodput)
    .option(
      '--min-goodput <share>',
      'a factor is sustained when at least this share of its requests meets every SLO',
      fraction('--min-goodput'),
      0.99,
    )
    .option(
      '--max-error-rate <rate>',
      'and when less than this share of its requests fails',
      fraction('--max-error-rate'),
      0.01,
    )
    .addOption(
      new Option(
        '--window <duration>',
        'how much of the captured traffic each step replays, from --start-offset or --from (or up to --to): 90s, 3m, 1h',
      )
        .argParser(durationArg('--window'))
        .default(180_000, '3m'),
    )
    .option('--start-factor <k>', 'the first factor tried (at least 0.001)', positive('--start-factor'), 1)
    .option(
      '--growth <x>',
      'each step multiplies the factor by this while the objectives are met (at least 1.01)',
      number('--growth', (n) => n > 1, 'a number > 1'),
      2,
    )
    .option(
      '--resolution <k>',
      'bisection stops when the sustained and the failing factor are this close (at least 0.001)',
      positive('--resolution'),
      0.1,
    )
    .option('--max-factor <k>', 'no factor above this is tried', positive('--max-factor'), 64)
    .option(
      '--cooldown <s>',
      "pause between steps, so that one step's load does not spill into the next",
      nonNegative('--cooldown'),
      5,
    )
    .option(
      '--max-client-lag <ms>',
      'a step whose requests left this replayer later than this (p90 of wire lag) is client-limited: the search stops there',
      positive('--max-client-lag'),
      100,
    )
    .option(
      '--together',
      'search the targets together: a step sends its load to every target that wants that factor (default: one target at a time)',
      false,
    );
  requestOptions(capacity).addOption(startOffsetOption());
  capturesOptions(capacity);
  paceOptions(capacity).option('--seed <n>', 'seed for factors below 1 (a sample)', positiveInt('--seed'), 1);
  firingOptions(capacity).addOption(runIdOption());
  checkOptions(capacity).option('--no-progress', 'no progress bar even on a terminal');
  cloudWatchOptions(capacity, "the search's folder (each target's sustained factor)");
  capacity.action(async (capturesPath: string, options: Record<string, unknown>) => {
    const { capacityCommand } = await import('./capacity/command');
    process.exitCode = await capacityCommand({ capturesPath, ...options } as Parameters<typeof capacityCommand>[0]);
  });
}

function addCompare(program: Command): void {
  const compare = usageErrors(program.command('compare'), 'compare')
    .description(
      "compare the results folders of two runs or more (ours, or AIPerf's profile_export.jsonl folders): " +
        'paired when they replayed the same captures',
    )
    .argument(
      '<results-dirs...>',
      'results folders (<out>/<run-id>/<target>/), the first the baseline; a run folder with several targets stands for all of them',
    )
    .option('--out <dir>', 'where to write comparison.json and report.html (default: print only)')
    .addOption(
      new Option(
        '--pairing <mode>',
        'paired: by capture request; unpaired: distributions only; auto: paired when most requests match',
      )
        .choices(['auto', 'paired', 'unpaired'])
        .default('auto'),
    )
    .option('--names <list>', 'comma-separated names for the folders (default: the folder names)')
    .option(
      '--overwrite',
      "replace the comparison.json and report.html already in --out (a run folder's own, say); without it they are never replaced",
      false,
    )
    .option(
      '--allow-partial',
      'compare a run that was cancelled or has not finished (no run_manifest.json): refused without it, its ' +
        'verdict being on part of the run only',
      false,
    );
  cloudWatchOptions(compare, '--out');
  comparisonOptions(compare).action(async (dirs: string[], options: Record<string, unknown>) => {
    const { compareCommand } = await import('./compare/command');
    process.exitCode = await compareCommand({ dirs, ...options } as Parameters<typeof compareCommand>[0]);
  });
}

function addTrend(program: Command): void {
  usageErrors(program.command('trend'), 'trend')
    .description(
      "write a schedule's trend page (what the pipeline writes to schedules/<name>/index.html) from its " +
        'history.jsonl, downloaded, or from a folder of runs made with replay (or downloaded from runs/)',
    )
    .argument(
      '<history-or-runs>',
      "a schedule's history.jsonl, or a folder of run folders (<run-id>/<target>/run_manifest.json): a history line is built for each run",
    )
    .option('--out <file>', 'where to write the page (default: index.html beside the history, or in the runs folder)')
    .option(
      '--schedule <name>',
      "the schedule's name on the page (default: the history's; for runs, the folder's name); with a history, only its lines",
    )
    .action(async (source: string, options: { out?: string; schedule?: string }) => {
      const { trendCommand } = await import('./trend-command');
      process.exitCode = await trendCommand({ source, ...options });
    });
}

function addScheduleNow(program: Command): void {
  usageErrors(program.command('schedule-now'), 'schedule-now')
    .description(
      "run a deployed schedule's A/B comparison now (or as at --at), without waiting for its cron: sends its " +
        "plan message to the stack's plan queue",
    )
    .argument('<schedule>', 'the schedule name, as in the deployment config')
    .option('--queue-url <url>', 'the plan queue: the stack output PlanQueueUrl')
    .option(
      '--at <time>',
      'the scheduled time to act as, as --from takes it: ISO 8601 with a zone (2026-11-23T02:00:00Z) or before ' +
        'now (-1h, -1d); not after now (default: now); the window is taken relative to it',
    )
    .option('--region <region>', 'the stack region (default: the AWS SDK default chain)')
    .option('--print', 'print the message (and an aws CLI command to send it) instead of sending it', false)
    .action(async (schedule: string, options: { queueUrl?: string; at?: string; region?: string; print: boolean }) => {
      const { scheduleNowCommand } = await import('./schedule-now');
      process.exitCode = await scheduleNowCommand({ schedule, ...options });
    });
}

/** `verify-deploy` and `link`: a deployed stack, found by its outputs (stack-outputs.ts). */
function addDeployment(program: Command): void {
  const stackOptions = (command: Command) =>
    command
      // No default value: with --outputs, the file's only stack is taken when none is named.
      .option('--stack <name>', "the stack's name: the deployment config's stackName (default: CaptureReplay)")
      .option('--region <region>', "the stack's region (default: the AWS SDK default chain, as the AWS CLI finds it)")
      .option(
        '--outputs <file>',
        'read the stack outputs from this file (`cdk deploy --outputs-file`) instead of CloudFormation',
      );
  const verify = usageErrors(program.command('verify-deploy'), 'verify-deploy')
    .description(
      "prove a deployment replays: drop the bundled sample capture under the stack's capture prefix, wait for " +
        'its run, print where the results are and a link to its report.html',
    )
    .option('--timeout <seconds>', 'how long to wait for the run and its report', positive('--timeout'), 300)
    .option('--clean', 'remove the sample capture from the capture bucket once its run has read it', false);
  stackOptions(verify).action(
    async (options: { stack?: string; region?: string; outputs?: string; timeout: number; clean: boolean }) => {
      const { verifyDeployCommand } = await import('./verify-deploy');
      process.exitCode = await verifyDeployCommand(options);
    },
  );
  const link = usageErrors(program.command('link'), 'link')
    .description(
      "print a presigned HTTPS link to a run's report.html, a target's result files or a schedule's trend page, to open in a browser",
    )
    .argument(
      '[s3-uri]',
      'any object of the results (s3://<bucket>/<key>); a folder stands for its report.html or index.html',
    )
    .option('--run <run-id>', "the run's report.html (runs/<run-id>/report.html in the stack's results bucket)")
    .option('--target <name>', "with --run: that target's result files instead")
    .option('--schedule <name>', "the schedule's trend page (schedules/<name>/index.html)")
    .option(
      '--expires <seconds>',
      'how long the link works (at most 604800, 7 days; never longer than the credentials that sign it)',
      number(
        '--expires',
        (n) => Number.isInteger(n) && n >= 1 && n <= 604_800,
        'a whole number of seconds from 1 to 604800',
      ),
      3600,
    );
  stackOptions(link).action(
    async (
      uri: string | undefined,
      options: {
        run?: string;
        target?: string;
        schedule?: string;
        stack?: string;
        region?: string;
        outputs?: string;
        expires: number;
      },
    ) => {
      const { linkCommand } = await import('./link');
      process.exitCode = await linkCommand({ uri, ...options });
    },
  );
}

/** The bundled mocks (lambdas/mocks/cli.ts builds their commands, servers loaded when they run) and the demo. */
function addMocksAndDemo(program: Command): void {
  program.addCommand(buildMockServerProgram());
  program.addCommand(buildMockSageMakerProgram());

  usageErrors(program.command('demo'), 'demo')
    .description(
      'replay the bundled capture sample against the bundled mocks, no network, no AWS (what `npm start` ' +
        'runs): its chat requests as an A/B run, the mock server against the mock SageMaker runtime (set 5 ms ' +
        'slower to first token on purpose), its tabular requests as a run of their own',
    )
    .option('--out <dir>', 'output folder', 'capture-replay-out')
    .option('--no-progress', 'no progress bar even on a terminal')
    .option(
      '--capacity',
      'instead: a capacity search in a few seconds, two mock servers of known capacity (one generation slot ' +
        'and two) on a capture written for it',
      false,
    )
    .action(async (options: { out: string; progress: boolean; capacity: boolean }) => {
      if (options.capacity) {
        const { capacityDemoCommand } = await import('./capacity/demo');
        process.exitCode = await capacityDemoCommand(options);
        return;
      }
      const { demoCommand } = await import('./demo-command');
      process.exitCode = await demoCommand(options);
    });
}

/** The whole program: every command, its options and help texts. Parsing is the caller's. */
export function buildProgram(): Command {
  const program: Command = usageErrors(new Command(), '', () => program.commands.map((c: Command) => c.name()))
    .name('capture-replay')
    .description(
      'Replay SageMaker Data Capture traffic against an endpoint on its original timing, with AIPerf-compatible results.',
    )
    .version(VERSION, '-V, --version', 'print the version and exit')
    .addHelpText('after', EXIT_CODES);
  addReplay(program);
  addCapacity(program);
  addCompare(program);
  addTrend(program);
  addScheduleNow(program);
  addDeployment(program);
  addMocksAndDemo(program);
  return program;
}
