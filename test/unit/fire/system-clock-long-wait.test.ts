/**
 * A due time further than Node's longest timer (2^31 - 1 ms, ~24.8 days): the system clock
 * waits in capped steps. Uncapped, the timer fired at once with a TimeoutOverflowWarning, and
 * the wait loop went round every millisecond, flooding stderr (a capture spanning years).
 *
 * The wait is judged by the timers set while it runs (an async hook sees each one created),
 * not by the process's CPU time: this file shares its process with others, whose leftovers
 * (a collection, a closing server) land in any CPU window.
 */
import { createHook } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { createSystemClock } from '../../../lambdas/adapters/system-clock';

const MAX_TIMER_MS = 2 ** 31 - 1;

describe('system clock: waits longer than a timer can', () => {
  it('neither warns nor spins, and still stops on its signal', async () => {
    const clock = createSystemClock();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    const timerMs: number[] = [];
    const timers = createHook({
      init(_id, type, _trigger, resource) {
        if (type === 'Timeout') timerMs.push((resource as { _idleTimeout: number })._idleTimeout);
      },
    });
    process.on('warning', onWarning);
    timers.enable();
    try {
      const abort = new AbortController();
      const due = clock.nowNs() + 30n * 86_400n * 1_000_000_000n; // 30 days
      const waiting = clock.waitUntil(due, abort.signal);
      await new Promise((resolve) => setTimeout(resolve, 100));
      abort.abort();
      await expect(waiting).rejects.toThrow();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('TimeoutOverflowWarning');
      // One timer as long as Node allows; an overflowed one fires after 1 ms, and a loop
      // of them would have set ~100 in this window.
      expect(timerMs.filter((ms) => ms === MAX_TIMER_MS)).toHaveLength(1);
      expect(timerMs.filter((ms) => ms <= 1).length).toBeLessThan(10);
    } finally {
      timers.disable();
      process.off('warning', onWarning);
    }
  });
});
