/**
 * How the CLI stops on SIGINT (Ctrl-C) and SIGTERM without losing the run:
 *
 * 1. first signal: no new request is sent (those not yet due are counted `aborted`); the
 *    requests in flight get `graceMs` to finish, then are cancelled (recorded with
 *    `was_cancelled: true`, code 499, `cancellation_time_ns`); every file is written;
 * 2. second signal: the requests still in flight are cancelled at once; every file is still
 *    written;
 * 3. third signal: exit at once, writing nothing more (files already written are whole: the
 *    store renames complete files into place; a target without `run_manifest.json` did not
 *    finish).
 *
 * The exit code is 128 + the first signal's number, as a shell reports a process killed by
 * it: 130 for SIGINT, 143 for SIGTERM.
 */
import { EXIT_CODES } from '../core/errors';

export const INTERRUPT_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
export type InterruptSignal = (typeof INTERRUPT_SIGNALS)[number];

/** Exit codes of an interrupted run (128 + signal number). */
export const INTERRUPT_EXIT: Record<InterruptSignal, number> = {
  SIGINT: EXIT_CODES.SIGINT,
  SIGTERM: EXIT_CODES.SIGTERM,
};

/** Default time requests in flight get to finish after the first signal. */
export const DEFAULT_CANCEL_GRACE_MS = 5_000;

export interface RunInterrupt {
  /** Aborted at the first signal: stop scheduling. */
  readonly stop: AbortSignal;
  /** Aborted after the grace (or at the second signal): cancel requests in flight. */
  readonly cancel: AbortSignal;
  /** The first signal received, null while none was. */
  readonly received: InterruptSignal | null;
  /** 130 / 143 once a signal was received, else null. */
  exitCode(): number | null;
  /** Removes the handlers (the process's default behaviour is back). */
  dispose(): void;
}

export interface InterruptOptions {
  graceMs?: number;
  stderr: NodeJS.WritableStream;
  /** Ends the process on the third signal; tests replace it. */
  exit?: (code: number) => void;
  /** The emitter signals come from; tests replace it. */
  source?: Pick<NodeJS.Process, 'on' | 'removeListener'>;
}

export function installInterrupt(options: InterruptOptions): RunInterrupt {
  const graceMs = options.graceMs ?? DEFAULT_CANCEL_GRACE_MS;
  const source = options.source ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const stop = new AbortController();
  const cancel = new AbortController();
  let received: InterruptSignal | null = null;
  let count = 0;
  let timer: NodeJS.Timeout | null = null;
  const say = (text: string) => options.stderr.write(`\ncapture-replay: ${text}\n`);

  const cancelNow = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!cancel.signal.aborted) cancel.abort(new Error('cancelled by signal'));
  };

  const onSignal = (signal: InterruptSignal) => {
    count++;
    if (count === 1) {
      received = signal;
      say(
        `${signal}: no new requests (those not yet sent are counted as aborted); requests in flight get ` +
          `${(graceMs / 1000).toFixed(1)} s to finish, ` +
          `then are cancelled; the results are written. Again: cancel them now. A third time: quit without writing.`,
      );
      stop.abort(new Error(`stopped by ${signal}`));
      if (graceMs <= 0) cancelNow();
      else {
        timer = setTimeout(cancelNow, graceMs);
        timer.unref();
      }
    } else if (count === 2) {
      say(
        `${signal} again: cancelling the requests in flight; writing the results (a third signal quits without writing)`,
      );
      cancelNow();
    } else {
      say(
        `${signal} a third time: quitting now; the results are not written (a target folder without run_manifest.json did not finish)`,
      );
      exit(INTERRUPT_EXIT[received ?? signal]);
    }
  };
  const handlers = INTERRUPT_SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, handler] of handlers) source.on(signal, handler);

  return {
    stop: stop.signal,
    cancel: cancel.signal,
    get received() {
      return received;
    },
    exitCode: () => (received ? INTERRUPT_EXIT[received] : null),
    dispose() {
      if (timer) clearTimeout(timer);
      timer = null;
      for (const [signal, handler] of handlers) source.removeListener(signal, handler);
    },
  };
}
