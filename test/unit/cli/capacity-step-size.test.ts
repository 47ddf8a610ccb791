/**
 * How many requests a capacity step may plan (lambdas/local/capacity/step-size.ts, issue 32
 * finding 11): three quarters of the heap at about 12 KB a request, lowered by
 * CAPTURE_REPLAY_MAX_STEP_REQUESTS; the largest factor that fits on the resolution's grid.
 */
import { describe, expect, it } from 'vitest';
import {
  largestFactorFor,
  maxStepRequests,
  memoryText,
  plannedRequests,
} from '../../../lambdas/local/capacity/step-size';

describe('the size of a capacity step', () => {
  it('is three quarters of the heap at 12 KB a request; the variable only lowers it', () => {
    const heap = 4 * 1024 ** 3;
    expect(maxStepRequests({}, heap)).toBe(262_144);
    expect(maxStepRequests({ CAPTURE_REPLAY_MAX_STEP_REQUESTS: '100' }, heap)).toBe(100);
    expect(maxStepRequests({ CAPTURE_REPLAY_MAX_STEP_REQUESTS: '1e12' }, heap)).toBe(262_144);
    expect(maxStepRequests({ CAPTURE_REPLAY_MAX_STEP_REQUESTS: '0' }, heap)).toBe(
      'CAPTURE_REPLAY_MAX_STEP_REQUESTS must be a whole number >= 1 (got "0")',
    );
  });

  it('plans n at 1x, ceil(k n) above, about k n below', () => {
    expect([
      plannedRequests(21, 1),
      plannedRequests(21, 2.5),
      plannedRequests(21, 0.5),
      plannedRequests(1800, 1000),
    ]).toEqual([21, 53, 11, 1_800_000]);
  });

  it('gives the largest factor on the resolution grid whose step fits, or null', () => {
    expect(largestFactorFor(21, 100, 0.25)).toBe(4.75);
    expect(plannedRequests(21, 4.75)).toBeLessThanOrEqual(100);
    expect(largestFactorFor(1800, 262_144, 0.1)).toBe(145.6);
    // Below one resolution: the grid of 0.001.
    expect(largestFactorFor(1_000_000, 250_000, 0.5)).toBe(0.25);
    expect(largestFactorFor(1e9, 100, 0.1)).toBeNull();
    expect(memoryText(1_800_000 * 12 * 1024)).toBe('22.1 GB');
    expect(memoryText(42 * 12 * 1024)).toBe('1 MB');
  });
});
