#!/usr/bin/env node
/**
 * capture-replay CLI. Thin: parses arguments with the program lambdas/local/program.ts builds
 * (every command and option is defined there), which loads each implementation lazily.
 *
 * Exit codes: 0 run done (a target that took none of the capture is named, not a failure
 * when another replayed); 1 the run could not be done (bad input, a target not reachable,
 * nothing replayable, no target replayed anything, every request to a target failed, error
 * rate above --max-error-rate: lambdas/local/exit-policy.ts); 2 usage
 * error (one line naming the flag, one line pointing to --help); 3 a comparison verdict
 * matched --fail-on (e.g. B is worse than A); 130/143 stopped by SIGINT/SIGTERM. An error of
 * ours that ends a command exits with lambdas/core/errors.ts exitCodeOf.
 */
import { CaptureReplayError, exitCodeOf } from '../lambdas/core/errors';
import { USAGE_EXIT } from '../lambdas/local/cli-usage';
import { buildProgram } from '../lambdas/local/program';
import { terminalLine } from '../lambdas/local/terminal-text';

// No command at all: a short usage, not a demo nobody asked for.
if (process.argv.length <= 2) {
  process.stderr.write(
    [
      'Usage: capture-replay <command> [options]',
      '',
      '  replay <captures-path> --url <base-url>   replay captures on their original timing',
      '  replay <captures-path> --target A=<url> --target B=<url>   ... and compare A and B',
      '  compare <results-dir-A> <results-dir-B>   compare the results of two runs',
      '  schedule-now <schedule> --queue-url <url> run a deployed scheduled A/B now',
      '  verify-deploy                             prove a deployed stack replays (sample in, report link out)',
      "  link --run <run-id>                       a presigned link to a deployed run's report.html",
      '  demo                                      the bundled sample against bundled mocks',
      '',
      "Run 'capture-replay --help' for every command, 'capture-replay <command> --help' for its options.",
      '',
    ].join('\n'),
  );
  process.exit(USAGE_EXIT);
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  // An error of ours that a command let through: its message alone, and its exit code
  // (lambdas/core/errors.ts exitCodeOf); anything else is a bug, shown with its stack.
  if (!(error instanceof CaptureReplayError)) throw error;
  process.stderr.write(`capture-replay: ${terminalLine(error.message)}\n`);
  process.exit(exitCodeOf(error));
}
