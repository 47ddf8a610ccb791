import { describe, expect, it } from 'vitest';
import { hourPartitions, windowProblem, windowRange, zonedToUtc } from '../../../lambdas/core/scheduled-runs/window';

const at = (iso: string) => Date.parse(iso);

describe('capture windows', () => {
  it('lastHours: the hours before the fire time', () => {
    expect(windowRange({ lastHours: 1 }, at('2026-11-24T02:00:00Z'), 'UTC')).toEqual({
      startMs: at('2026-11-24T01:00:00Z'),
      endMs: at('2026-11-24T02:00:00Z'),
    });
  });

  it("yesterday 14:00-15:00 in the schedule's timezone, across a DST change", () => {
    // Fired 2026-03-30 02:00 in Paris (UTC+2 since the 29th): yesterday 14:00 was already CEST.
    expect(windowRange({ daysAgo: 1, from: '14:00', to: '15:00' }, at('2026-03-30T00:00:00Z'), 'Europe/Paris')).toEqual(
      { startMs: at('2026-03-29T12:00:00Z'), endMs: at('2026-03-29T13:00:00Z') },
    );
    // Winter: UTC+1.
    expect(windowRange({ daysAgo: 1, from: '14:00', to: '15:00' }, at('2026-01-15T01:00:00Z'), 'Europe/Paris')).toEqual(
      { startMs: at('2026-01-14T13:00:00Z'), endMs: at('2026-01-14T14:00:00Z') },
    );
    // The fire date is the local one: 23:30 UTC on the 14th is already the 15th in Tokyo.
    expect(windowRange({ daysAgo: 0, from: '00:00', to: '01:00' }, at('2026-01-14T23:30:00Z'), 'Asia/Tokyo')).toEqual({
      startMs: at('2026-01-14T15:00:00Z'),
      endMs: at('2026-01-14T16:00:00Z'),
    });
  });

  it('a range that ends at or before its start ends on the next day', () => {
    expect(windowRange({ daysAgo: 1, from: '22:00', to: '02:00' }, at('2026-06-10T05:00:00Z'), 'UTC')).toEqual({
      startMs: at('2026-06-09T22:00:00Z'),
      endMs: at('2026-06-10T02:00:00Z'),
    });
  });

  it('DST gap and fold: a missing time moves forward, a repeated one takes the earlier instant', () => {
    expect(zonedToUtc(2026, 3, 29, 2, 30, 'Europe/Paris')).toBe(at('2026-03-29T01:30:00Z')); // 02:30 does not exist: 03:30 CEST
    expect(zonedToUtc(2026, 10, 25, 2, 30, 'Europe/Paris')).toBe(at('2026-10-25T00:30:00Z')); // 02:30 CEST, the first one
  });

  it('refuses what is not a window', () => {
    expect(windowProblem({ lastHours: 0 })).toMatch(/lastHours/);
    expect(windowProblem({ lastHours: 1.5 })).toMatch(/whole number/);
    expect(windowProblem({ daysAgo: 1, from: '24:00', to: '01:00' })).toMatch(/from must be HH:MM/);
    expect(() => windowRange({ daysAgo: -1, from: '01:00', to: '02:00' }, 0, 'UTC')).toThrow(/daysAgo/);
  });
});

describe('hour partitions', () => {
  it('lists every UTC hour the window touches, and the one after', () => {
    expect(hourPartitions({ startMs: at('2026-11-23T23:30:00Z'), endMs: at('2026-11-24T01:00:00Z') })).toEqual([
      '2026/11/23/23',
      '2026/11/24/00',
      '2026/11/24/01',
    ]);
    expect(hourPartitions({ startMs: at('2026-11-24T01:00:00Z'), endMs: at('2026-11-24T02:00:00Z') })).toEqual([
      '2026/11/24/01',
      '2026/11/24/02',
    ]);
  });
});
