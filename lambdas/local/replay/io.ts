import { exitCodeOf } from '../../core/errors';
import { stripUrlCredentials } from '../../core/redact';
import { terminalLine } from '../terminal-text';

/** Where the replay command writes: the summary tables to stdout, everything else to stderr. */
export interface CommandIo {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

/**
 * Why the run cannot go on, one line on stderr (what a target or a capture put in it escaped, a
 * URL's credentials removed): a message, or what was thrown, whose exit code is exitCodeOf's
 * (core/errors.ts: 1 unless the error says otherwise).
 */
export function fail(io: CommandIo, problem: unknown): number {
  const message = typeof problem === 'string' ? problem : messageOf(problem);
  io.err.write(`capture-replay: ${terminalLine(stripUrlCredentials(message))}\n`);
  return exitCodeOf(problem);
}

/** An error's message, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
