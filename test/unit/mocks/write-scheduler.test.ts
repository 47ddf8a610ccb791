/**
 * The mocks' write scheduler in precise mode: never early, and the last stretch before each
 * write waited out in naps, a few turns of the event loop, not a spin of hundreds of turns
 * holding a core (bench/RESULTS.md, "Mock server under load").
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WriteScheduler } from '../../../lambdas/mocks/write-scheduler';

afterEach(() => vi.restoreAllMocks());

/**
 * Runs `count` writes `gapMs` apart through a precise scheduler: how early the earliest ran (ms; positive: early),
 * and the turns of the event loop it asked for.
 */
async function stream(count: number, gapMs: number): Promise<{ earliestMs: number; turns: number; ran: number }> {
  const turns = vi.spyOn(globalThis, 'setImmediate');
  const scheduler = new WriteScheduler(1.5);
  const start = performance.now() + 5;
  let ran = 0;
  let earliestMs = -Infinity;
  await new Promise<void>((resolve) => {
    const next = (k: number) => {
      const due = start + k * gapMs;
      scheduler.at(due, () => {
        earliestMs = Math.max(earliestMs, due - performance.now());
        ran++;
        if (k + 1 < count) next(k + 1);
        else resolve();
      });
    };
    next(0);
  });
  scheduler.stop();
  return { earliestMs, turns: turns.mock.calls.length, ran };
}

describe('WriteScheduler, precise', () => {
  it('runs every write at or after its due time, napping through the last 1.5 ms before each', async () => {
    // A token every 5 ms for 1 s. Naps of at most 0.2 ms take ~8 turns per write (fewer when a
    // nap oversleeps on a busy machine); a setImmediate spin took hundreds.
    const { earliestMs, turns, ran } = await stream(200, 5);
    expect(ran).toBe(200);
    expect(earliestMs).toBeLessThanOrEqual(0);
    expect(turns / ran, 'turns of the event loop per write').toBeLessThan(20);
  });
});
