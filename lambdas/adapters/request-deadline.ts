/**
 * One request's abort signal: its own whole-request timeout or the caller's cancellation,
 * whichever comes first, released the moment the request ends.
 *
 * `AbortSignal.timeout(ms)` with `AbortSignal.any([...])` does the same, but its timer and
 * the composite signal live until the timeout would have fired (10 minutes at the default
 * --timeout), whatever became of the request: at 1,000 requests/s that is hundreds of
 * thousands of live timers and signals, which every garbage collection walks. Here the
 * timer is cleared and the listener removed when the request is done.
 */
export interface RequestDeadline {
  readonly signal: AbortSignal;
  /** True once the timeout (not the caller) aborted the request. */
  readonly timedOut: boolean;
  /** Clears the timer and the listener on the caller's signal; call once the request has ended. */
  release(): void;
}

export function requestDeadline(timeoutMs: number, cancel?: AbortSignal): RequestDeadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no complete response within ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  // As AbortSignal.timeout's: a pending request's socket keeps the process alive, not its timer.
  timer.unref();
  const onCancel = () => controller.abort(cancel?.reason);
  if (cancel?.aborted) onCancel();
  else cancel?.addEventListener('abort', onCancel, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    release() {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
    },
  };
}
