/** `--rehearsal auto` (core/fire/rehearsal.ts) and the flag's parser (local/cli-usage.ts). */
import { describe, expect, it } from 'vitest';
import { AUTO_REHEARSAL_MOST, autoRehearsalRequests, REHEARSAL_BODIES } from '../../../lambdas/core/fire/rehearsal';
import { parseRehearsal } from '../../../lambdas/local/cli-usage';

describe('autoRehearsalRequests', () => {
  it.each([
    // A few requests a second: every body shape once, no more.
    [0, 1, 1000, REHEARSAL_BODIES],
    [3, 1, 1000, REHEARSAL_BODIES],
    [32, 1, 1000, REHEARSAL_BODIES],
    [33, 1, 1000, 66],
    // Twice the busiest second, up to the count measured at 1,000-2,000/s.
    [100, 1, 10_000, 200],
    [999, 1, 10_000, 1998],
    [1000, 1, 10_000, AUTO_REHEARSAL_MOST],
    [5000, 1, 100_000, AUTO_REHEARSAL_MOST],
    // Each thread's share of the busiest second, rounded up.
    [1000, 2, 10_000, 1000],
    [1001, 2, 10_000, 1002],
    [5000, 4, 100_000, AUTO_REHEARSAL_MOST],
    // Never more than the thread sends a target: a run of one request rehearses one.
    [1, 1, 1, 1],
    [32, 1, 32, 32],
    [1000, 2, 600, 300],
    [3, 1, 0, 0],
  ])('busiest second %i, %i thread(s), largest plan %i: %i', (busiest, threads, largestPlan, expected) => {
    expect(autoRehearsalRequests(busiest, threads, largestPlan)).toBe(expected);
  });
});

describe('parseRehearsal', () => {
  it.each([
    ['auto', 'auto'],
    [' AUTO ', 'auto'],
    ['0', 0],
    ['2000', 2000],
  ])('%j is %j', (raw, value) => {
    expect(parseRehearsal(raw)).toBe(value);
  });

  it.each(['-1', '2.5', 'many', ''])('%j is a usage error that names the flag', (raw) => {
    expect(parseRehearsal(raw)).toBe(`--rehearsal must be auto or a whole number >= 0 (got "${raw}")`);
  });
});
