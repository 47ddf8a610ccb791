/**
 * The one error hierarchy (lambdas/core/errors.ts): every class is a CaptureReplayError and an
 * Error, has its own name, keeps its cause, says whether a retry can help (the handlers
 * acknowledge a final one: isFinal) and what the CLI exits with (exitCodeOf).
 */
import { describe, expect, it } from 'vitest';
import {
  CaptureLocationError,
  CaptureReplayError,
  CaptureSupersededError,
  CommandProblem,
  ConfigurationError,
  EXIT_CODES,
  exitCodeOf,
  FrameGuardError,
  InterruptedError,
  isFinal,
  PermanentError,
  StepFailed,
} from '../../lambdas/core/errors';
import { USAGE_EXIT } from '../../lambdas/local/cli-usage';
import { INTERRUPT_EXIT } from '../../lambdas/local/interrupt';
import { fail } from '../../lambdas/local/replay/io';
import { DeploymentConfigError } from '../../lib/config';

const cause = new Error('the SDK said no');
/** One of each kind, its name, and the CLI's exit code for it. */
const KINDS: [CaptureReplayError, string, number][] = [
  [new PermanentError('not a shard message', { cause }), 'PermanentError', 1],
  [new ConfigurationError('targets: required', { cause }), 'ConfigurationError', 1],
  [new DeploymentConfigError('targets: required', { cause }), 'DeploymentConfigError', 1],
  [new CaptureSupersededError('s3://b/k is no longer version e1', { cause }), 'CaptureSupersededError', 1],
  [new CaptureLocationError('s3://b/p holds no partitions', { cause }), 'CaptureLocationError', 1],
  [new FrameGuardError('oversized', 'a message over the limit', { cause }), 'FrameGuardError', 1],
  [new CommandProblem('could not read the stack', { cause }), 'CommandProblem', 1],
  [new StepFailed(7, 'capture-replay: fire worker 3 did not start\n'), 'StepFailed', 1],
  [new InterruptedError(INTERRUPT_EXIT.SIGINT), 'InterruptedError', 130],
  [new InterruptedError(INTERRUPT_EXIT.SIGTERM), 'InterruptedError', 143],
];

describe('the error hierarchy', () => {
  it.each(KINDS)('%s: one of ours, named, final, with its exit code', (error, name, exitCode) => {
    expect(error).toBeInstanceOf(CaptureReplayError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(String(error)).toBe(`${name}: ${error.message}`);
    expect(error.retryable).toBe(false);
    expect(isFinal(error)).toBe(true);
    expect(exitCodeOf(error)).toBe(exitCode);
  });

  it('keeps the cause it was given (ES2022), none when given none', () => {
    for (const [error] of KINDS.slice(0, 7)) expect(error.cause).toBe(cause);
    expect(new PermanentError('bad').cause).toBeUndefined();
    expect('cause' in new PermanentError('bad')).toBe(false);
  });

  it('the subclasses are what their kind is', () => {
    expect(new DeploymentConfigError('x')).toBeInstanceOf(ConfigurationError);
    expect(new StepFailed(2, '')).toBeInstanceOf(CommandProblem);
    expect(new PermanentError('x')).not.toBeInstanceOf(ConfigurationError);
    const step = new StepFailed(7, 'said');
    expect([step.stepExitCode, step.said, step.message]).toEqual([7, 'said', 'a step failed (exit 7)']);
    expect(new FrameGuardError('malformed', 'not a prelude').kind).toBe('malformed');
    expect(new InterruptedError(143).message).toBe('stopped by SIGTERM');
  });

  it('an error outside the hierarchy is retried by the handlers and exits 1', () => {
    for (const error of [
      new Error('socket hang up'),
      Object.assign(new Error('Throttled'), { name: 'ThrottlingException' }),
      'a string',
      undefined,
    ]) {
      expect(isFinal(error)).toBe(false);
      expect(exitCodeOf(error)).toBe(1);
    }
  });

  it("the CLI's exit codes are the ones its usage errors and signals use", () => {
    expect(EXIT_CODES).toEqual({ failed: 1, usage: 2, SIGINT: 130, SIGTERM: 143 });
    expect(USAGE_EXIT).toBe(EXIT_CODES.usage);
    expect(INTERRUPT_EXIT).toEqual({ SIGINT: EXIT_CODES.SIGINT, SIGTERM: EXIT_CODES.SIGTERM });
  });

  it("the replay commands' fail says the problem on one line and exits with its code", () => {
    const said: string[] = [];
    const io = { out: process.stdout, err: { write: (s: string) => said.push(s) } } as unknown as Parameters<
      typeof fail
    >[0];
    expect(fail(io, 'no capture files under ./captures')).toBe(1);
    expect(fail(io, new InterruptedError(EXIT_CODES.SIGTERM))).toBe(143);
    expect(fail(io, new Error('socket hang up'))).toBe(1);
    expect(said).toEqual([
      'capture-replay: no capture files under ./captures\n',
      'capture-replay: stopped by SIGTERM\n',
      'capture-replay: socket hang up\n',
    ]);
  });
});
