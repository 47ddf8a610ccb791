import { describe, expect, it } from 'vitest';
import { ChunkTimes } from '../../../lambdas/adapters/chunk-times';

describe('ChunkTimes', () => {
  it('gives back every time pushed, to the nanosecond, in order, repeats included', () => {
    const times = new ChunkTimes();
    expect(times.toNs()).toEqual([]);
    // A monotonic clock after 100 days up, then chunks over two minutes, two in one network read.
    const base = 8_640_000_000_000_000n;
    const pushed = [base, base + 1n, base + 1n, base + 2_000_000_123n, base + 120_000_000_007n];
    for (const ns of pushed) times.push(ns);
    expect(times.length).toBe(5);
    expect(times.toNs()).toEqual(pushed);
  });
});
