/**
 * The precise wait yields to the event loop before it naps. undici writes a request on a
 * reused keep-alive socket from a setImmediate (it first lets the idle socket's pending bytes
 * be read), so a wait for the next due time that napped first held the request just sent off
 * the wire for a nap: at 200-2,000 requests/s its wire lag p50 was 0.41-0.50 ms, 0.20 ms once
 * the turn comes first (bench:lateness). Checked by order, not by time: the check-phase
 * callback queued before the wait must run before the first nap.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { createSystemClock } from '../../../lambdas/adapters/system-clock';

afterEach(() => {
  vi.restoreAllMocks();
});

it('a setImmediate queued before a precise wait runs before the wait naps', async () => {
  const clock = createSystemClock();
  type Wait = (array: Int32Array, index: number, value: number, timeout?: number) => string;
  const realWait = Atomics.wait.bind(Atomics) as Wait;
  let events: string[] = [];
  const recordingWait: Wait = (array, index, value, timeout) => {
    events.push('nap');
    return realWait(array, index, value, timeout);
  };
  vi.spyOn(Atomics, 'wait').mockImplementation(recordingWait as unknown as typeof Atomics.wait);
  // A wait that found its due time already past when its turn came (a starved process) never
  // naps and shows nothing: tried again, up to ten times, until one naps.
  for (let attempt = 0; attempt < 10 && !events.includes('nap'); attempt++) {
    events = [];
    // What a send leaves for the check phase (undici's idle-socket validation, then the write).
    setImmediate(() => events.push('write'));
    // Due within the nap window (1.5 ms): the wait naps in slices until then.
    await clock.waitUntil(clock.nowNs() + 1_200_000n);
  }
  expect(events).toContain('nap');
  expect(events[0]).toBe('write');
});
