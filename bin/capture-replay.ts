/**
 * capture-replay CLI. Thin: parses arguments and lazily loads the implementation, so
 * `--help` stays instant and a usage error never pays for undici or the core.
 *
 * Exit codes: 0 run done; 1 the run could not be done (bad input, nothing replayable, every
 * request failed, error rate above --max-error-rate); 2 usage error.
 */
import { Command, InvalidArgumentError, Option } from 'commander';

function number(name: string, check: (n: number) => boolean, rule: string) {
  return (raw: string): number => {
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value) || !check(value)) {
      throw new InvalidArgumentError(`${name} must be ${rule} (got "${raw}")`);
    }
    return value;
  };
}

const nonNegative = (name: string) => number(name, (n) => n >= 0, 'a number >= 0');
const positive = (name: string) => number(name, (n) => n > 0, 'a number > 0');
const positiveInt = (name: string) => number(name, (n) => Number.isInteger(n) && n > 0, 'a whole number > 0');
const fraction = (name: string) => number(name, (n) => n > 0 && n <= 1, 'a number in (0, 1]');

const program = new Command()
  .name('capture-replay')
  .description('Replay SageMaker Data Capture traffic against an endpoint on its original timing, with AIPerf-compatible results.')
  .showHelpAfterError()
  .exitOverride((err) => {
    // commander uses 1 for usage errors; keep 1 for "the run could not be done".
    process.exit(err.exitCode === 0 ? 0 : 2);
  });

program
  .command('replay')
  .description('replay a capture file or a folder of them (e.g. from `aws s3 sync`) against an OpenAI-compatible server')
  .argument('<captures-path>', 'a .jsonl capture file or a folder of them (searched recursively)')
  .requiredOption('--url <base-url>', 'server base URL, e.g. http://localhost:8000')
  .option('--out <dir>', 'output folder; results go to <dir>/<run-id>/<target-name>/', 'capture-replay-out')
  .option('--path <path>', 'chat completions path under the base URL', '/v1/chat/completions')
  .option('--target-name <name>', 'name of the target in results', 'target')
  .option('--streaming', 'force `stream: true` (and stream_options.include_usage) to measure TTFT and ITL', false)
  .option('--model <name>', 'override the `model` field of every request')
  .option('--api-key-env <var>', 'name of the environment variable holding a bearer API key (none sent without it)')
  .option('--start-offset <ms>', 'skip requests before this offset from the first capture (inclusive)', nonNegative('--start-offset'))
  .option('--end-offset <ms>', 'skip requests after this offset from the first capture (inclusive)', nonNegative('--end-offset'))
  .option('--time-scale <x>', 'replay speed: 2 = twice as fast, 0.5 = half speed', positive('--time-scale'), 1)
  .addOption(
    new Option('--intra-second <policy>', 'requests captured in the same whole second: spread evenly or fire together')
      .choices(['spread', 'burst'])
      .default('spread'),
  )
  .option('--limit <n>', 'replay at most the first n requests of the window', positiveInt('--limit'))
  .option('--sample <rate>', 'replay a deterministic random fraction of requests', fraction('--sample'))
  .option('--seed <n>', 'seed for --sample', positiveInt('--seed'), 1)
  .option('--max-in-flight <n>', 'cap on concurrent requests (a request held by the cap is late; its lag says so)', positiveInt('--max-in-flight'))
  .option('--timeout <ms>', 'per-request timeout', positive('--timeout'), 600_000)
  .option('--lead <ms>', 'delay from start-up to the first request', nonNegative('--lead'), 500)
  .option('--late-tolerance <ms>', 'lateness beyond which --late-policy applies', nonNegative('--late-tolerance'))
  .addOption(new Option('--late-policy <policy>', 'what to do with a request later than --late-tolerance').choices(['fire', 'drop']).default('fire'))
  .option('--max-error-rate <rate>', 'exit 1 when the failed fraction of fired requests exceeds this', fraction('--max-error-rate'))
  .option('--run-id <id>', 'run id (default: UTC timestamp + random suffix)')
  .option('--no-progress', 'no progress bar even on a terminal')
  .action(async (capturesPath: string, options: Record<string, unknown>) => {
    const { replayCommand } = await import('../lambdas/local/replay-command');
    process.exitCode = await replayCommand({ capturesPath, ...options } as Parameters<typeof replayCommand>[0]);
  });

program
  .command('mock-server')
  .description('run the bundled OpenAI-compatible mock server (prints {"url": ...} when listening)')
  .allowUnknownOption(true)
  .helpOption(false)
  .argument('[args...]')
  .action(async (args: string[]) => {
    const { runMockServerCli } = await import('../lambdas/local/mock-server');
    await runMockServerCli(args);
  });

program
  .command('demo', { isDefault: true, hidden: true })
  .description('replay the bundled capture sample against the bundled mock server (what `npm start` runs)')
  .option('--out <dir>', 'output folder', 'capture-replay-out')
  .option('--no-progress', 'no progress bar even on a terminal')
  .action(async (options: { out: string; progress: boolean }) => {
    const { demoCommand } = await import('../lambdas/local/replay-command');
    process.exitCode = await demoCommand(options);
  });

await program.parseAsync(process.argv);
