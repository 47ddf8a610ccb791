/**
 * capture-replay's errors: one hierarchy, each class one kind of failure. Every one says
 * whether a retry can help (`retryable`: the Lambda handlers fail an SQS record for a retry
 * only then, isRetryable) and what the CLI exits with (`exitCode`, exitCodeOf; docs/cli.md),
 * and keeps what it was caused by (ES2022 `cause`). An error outside the hierarchy (an AWS
 * SDK error, a bug) is retried by the handlers and exits 1 from the CLI.
 */

/** The CLI's exit codes that errors map to (docs/cli.md "Exit codes"). */
export const EXIT_CODES = { failed: 1, usage: 2, SIGINT: 130, SIGTERM: 143 } as const;

/**
 * The base class: a message for a person, no stack trace needed to act on it.
 *
 * @example
 * try { await work(); } catch (error) { if (isRetryable(error)) throw error; log.error(String(error)); }
 */
export abstract class CaptureReplayError extends Error {
  /** Whether doing the same again may succeed (an SQS record is then failed, for a retry). */
  abstract readonly retryable: boolean;
  /** What the CLI exits with when this error ends a command. */
  readonly exitCode: number = EXIT_CODES.failed;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Bad input, or a request that cannot run (a malformed message, an unknown schedule, a target
 * or bucket the deployment lacks): count it, report it, acknowledge it; retrying cannot help.
 *
 * @example
 * if (!schedule) throw new PermanentError(`no schedule named ${name} in this deployment`);
 */
export class PermanentError extends CaptureReplayError {
  override readonly name: string = 'PermanentError';
  readonly retryable = false;
}

/**
 * What the user configured is wrong (the deployment's config, the simulator's settings):
 * every problem said at once, one a line; nothing runs until it is fixed.
 *
 * @example
 * if (problems.length > 0) throw new ConfigurationError(problems.join('\n'));
 */
export class ConfigurationError extends CaptureReplayError {
  override readonly name: string = 'ConfigurationError';
  readonly retryable = false;
}

/**
 * A capture object changed since the event that named it (S3 answered 412 to If-Match): its
 * successor has an event of its own, so this one is acknowledged, not retried.
 *
 * @example
 * throw new CaptureSupersededError(`s3://${bucket}/${key} is no longer version ${etag}`, { cause: error });
 */
export class CaptureSupersededError extends CaptureReplayError {
  override readonly name: string = 'CaptureSupersededError';
  readonly retryable = false;
}

/**
 * Where captures were looked for holds none (no Data Capture partitions, no such object): a
 * problem with the location, said as such.
 *
 * @example
 * throw new CaptureLocationError(`s3://${bucket}/${prefix} holds no Data Capture partitions`);
 */
export class CaptureLocationError extends CaptureReplayError {
  override readonly name: string = 'CaptureLocationError';
  readonly retryable = false;
}

/**
 * A response stream was stopped at a frame: a message prelude claiming more than the limit
 * (`oversized`), or bytes that are not a prelude (`malformed`). The same answer would be
 * refused again.
 *
 * @example
 * throw new FrameGuardError('oversized', `a message of ${n} bytes is over the ${limit}-byte limit`);
 */
export class FrameGuardError extends CaptureReplayError {
  override readonly name: string = 'FrameGuardError';
  readonly retryable = false;

  constructor(
    readonly kind: 'oversized' | 'malformed',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * What a CLI command cannot do, said in one line (no stack trace): the command prints it and
 * exits 1.
 *
 * @example
 * throw new CommandProblem(describeAwsError(error, 'read the stack outputs'), { cause: error });
 */
export class CommandProblem extends CaptureReplayError {
  override readonly name: string = 'CommandProblem';
  readonly retryable = false;
}

/**
 * A step of the capacity search could not be run: its replay exited `stepExitCode` and said
 * why in `said` (shown only then).
 *
 * @example
 * if (code !== 0) throw new StepFailed(code, said.text());
 */
export class StepFailed extends CommandProblem {
  override readonly name: string = 'StepFailed';

  constructor(
    readonly stepExitCode: number,
    readonly said: string,
  ) {
    super(`a step failed (exit ${stepExitCode})`);
  }
}

/**
 * The command was stopped by a signal: it exits 130 (SIGINT) or 143 (SIGTERM), what was done
 * written. Retrying is the user's call, not the code's.
 *
 * @example
 * if (interrupt.code() !== null) throw new InterruptedError(interrupt.code());
 */
export class InterruptedError extends CaptureReplayError {
  override readonly name: string = 'InterruptedError';
  readonly retryable = false;
  override readonly exitCode: number;

  constructor(exitCode: number) {
    super(exitCode === EXIT_CODES.SIGTERM ? 'stopped by SIGTERM' : 'stopped by SIGINT');
    this.exitCode = exitCode;
  }
}

/**
 * Whether a failure is final: an error of the hierarchy that no retry can help, so an SQS
 * record is acknowledged (and logged). Any other (AWS, network, a bug) may pass with a retry.
 */
export function isFinal(error: unknown): error is CaptureReplayError {
  return error instanceof CaptureReplayError && !error.retryable;
}

/** The CLI's one exit policy for an error that ends a command: the error's own code, else 1. */
export function exitCodeOf(error: unknown): number {
  return error instanceof CaptureReplayError ? error.exitCode : EXIT_CODES.failed;
}
