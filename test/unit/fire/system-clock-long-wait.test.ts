/**
 * A due time further than Node's longest timer (2^31 - 1 ms, ~24.8 days): the system clock
 * waits in capped steps. Uncapped, the timer fired at once with a TimeoutOverflowWarning, and
 * the wait loop went round every millisecond, flooding stderr (a capture spanning years).
 */
import { describe, expect, it } from 'vitest';
import { createSystemClock } from '../../../lambdas/adapters/system-clock';

describe('system clock: waits longer than a timer can', () => {
  it('neither warns nor spins, and still stops on its signal', async () => {
    const clock = createSystemClock();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const abort = new AbortController();
      const due = clock.nowNs() + 30n * 86_400n * 1_000_000_000n; // 30 days
      const waiting = clock.waitUntil(due, abort.signal);
      const started = process.cpuUsage();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const cpuMs = (process.cpuUsage(started).user + process.cpuUsage(started).system) / 1000;
      abort.abort();
      await expect(waiting).rejects.toThrow();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('TimeoutOverflowWarning');
      expect(cpuMs).toBeLessThan(80); // not a millisecond loop
    } finally {
      process.off('warning', onWarning);
    }
  });
});
