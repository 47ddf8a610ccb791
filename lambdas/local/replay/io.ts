import { stripUrlCredentials } from '../../core/redact';
import { terminalLine } from '../terminal-text';

/** Where the replay command writes: the summary tables to stdout, everything else to stderr. */
export interface CommandIo {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

/**
 * Why the run cannot go on, one line on stderr (what a target or a capture put in it escaped, a URL's credentials
 * removed); the exit code 1.
 */
export function fail(io: CommandIo, message: string): number {
  io.err.write(`capture-replay: ${terminalLine(stripUrlCredentials(message))}\n`);
  return 1;
}

/** An error's message, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
