/** `--rehearsal auto` (core/fire/rehearsal.ts) and the flag's parser (local/cli-usage.ts). */
import { describe, expect, it } from 'vitest';
import { AUTO_REHEARSAL_MOST, autoRehearsalRequests, REHEARSAL_BODIES } from '../../../lambdas/core/fire/rehearsal';
import { parseRehearsal } from '../../../lambdas/local/cli-usage';

describe('autoRehearsalRequests', () => {
  it.each([
    // A few requests a second: every body shape once, no more.
    [0, 1, REHEARSAL_BODIES],
    [3, 1, REHEARSAL_BODIES],
    [32, 1, REHEARSAL_BODIES],
    [33, 1, 66],
    // Twice the busiest second, up to the count measured at 1,000-2,000/s.
    [100, 1, 200],
    [999, 1, 1998],
    [1000, 1, AUTO_REHEARSAL_MOST],
    [5000, 1, AUTO_REHEARSAL_MOST],
    // Each thread's share of the busiest second, rounded up.
    [1000, 2, 1000],
    [1001, 2, 1002],
    [5000, 4, AUTO_REHEARSAL_MOST],
  ])('busiest second %i, %i thread(s): %i', (busiest, threads, expected) => {
    expect(autoRehearsalRequests(busiest, threads)).toBe(expected);
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
