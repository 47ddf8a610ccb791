/**
 * A request's deadline: its timeout or the caller's cancellation, and nothing left behind
 * once the request has ended (AbortSignal.timeout + AbortSignal.any kept a timer and a
 * composite signal alive for the whole timeout: 54 bytes of heap a request,
 * bench/request-deadline.ts).
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { requestDeadline } from '../../../lambdas/adapters/request-deadline';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it('times out with a TimeoutError and says so', () => {
  const d = requestDeadline(1000);
  vi.advanceTimersByTime(999);
  expect(d.signal.aborted).toBe(false);
  vi.advanceTimersByTime(1);
  expect(d.signal.aborted).toBe(true);
  expect(d.timedOut).toBe(true);
  expect((d.signal.reason as DOMException).name).toBe('TimeoutError');
});

it("the caller's cancellation aborts it with the caller's reason, not as a timeout", () => {
  const cancel = new AbortController();
  const d = requestDeadline(1000, cancel.signal);
  cancel.abort('stop');
  expect(d.signal.aborted).toBe(true);
  expect(d.signal.reason).toBe('stop');
  expect(d.timedOut).toBe(false);
  expect(requestDeadline(1000, cancel.signal).signal.aborted).toBe(true); // already cancelled
});

it('released: no timer left, and neither a late timeout nor a later cancellation reaches it', () => {
  const cancel = new AbortController();
  const d = requestDeadline(1000, cancel.signal);
  expect(vi.getTimerCount()).toBe(1);
  d.release();
  expect(vi.getTimerCount()).toBe(0);
  vi.advanceTimersByTime(5000);
  cancel.abort();
  expect(d.signal.aborted).toBe(false);
  expect(d.timedOut).toBe(false);
});
