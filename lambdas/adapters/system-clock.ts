import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../ports';

/**
 * Epoch nanoseconds from one wall-clock reading at start-up plus the monotonic hrtime since:
 * monotonic within the process (NTP steps cannot make a latency negative) and comparable
 * across processes on one machine to well under a millisecond.
 */
const originNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
const originHr = process.hrtime.bigint();

export function epochNowNs(): bigint {
  return originNs + (process.hrtime.bigint() - originHr);
}

/** Below this, timers are too coarse: yield to I/O with setImmediate until the instant. */
const SPIN_WINDOW_MS = 1.5;

export const systemClock: Clock = {
  nowNs: epochNowNs,
  async waitUntil(epochNs: bigint, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const remainingMs = Number(epochNs - epochNowNs()) / 1e6;
      if (remainingMs <= 0) return;
      if (remainingMs > SPIN_WINDOW_MS + 0.5) {
        await sleep(remainingMs - SPIN_WINDOW_MS, undefined, signal ? { signal } : undefined);
      } else {
        // setImmediate lets pending socket reads run between checks, so streams in flight
        // are not starved while the loop waits for a precise due time.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  },
};
