/**
 * The trend page's x-axis labels (trend-axis.ts): runs minutes apart get the time of day, each
 * label different from its neighbours (the page's labels were `MM-DD HH:MM`, the same for
 * every tick within a minute); runs over days get the date.
 */
import { describe, expect, it } from 'vitest';
import { hoverTime, TIME_INCRS, timeAxisTitle, timeTickLabels } from '../../../lambdas/core/report/trend-axis';

const at = (iso: string) => Date.parse(iso) / 1000;
const T0 = at('2026-11-26T20:00:00Z');

describe('timeTickLabels', () => {
  it('runs minutes apart, ticks 20 s apart: time of day with seconds, no two the same', () => {
    const ticks = [0, 20, 40, 60, 80, 100].map((s) => T0 + s);
    expect(timeTickLabels(ticks, 240)).toEqual([
      '20:00:00',
      '20:00:20',
      '20:00:40',
      '20:01:00',
      '20:01:20',
      '20:01:40',
    ]);
  });

  it('runs minutes apart, ticks on whole minutes: HH:MM', () => {
    const ticks = [0, 5, 10, 15].map((m) => T0 + m * 60);
    expect(timeTickLabels(ticks, 15 * 60)).toEqual(['20:00', '20:05', '20:10', '20:15']);
  });

  it('runs over days: the date and the time', () => {
    const ticks = [0, 1, 2].map((d) => T0 + d * 86_400);
    expect(timeTickLabels(ticks, 3 * 86_400)).toEqual(['11-26 20:00', '11-27 20:00', '11-28 20:00']);
  });

  it('adds digits rather than repeat a label', () => {
    // Under a day but the same time of day on two dates (the axis padding can reach past a day).
    const labels = timeTickLabels([T0, T0 + 86_400], 3600);
    expect(new Set(labels).size).toBe(2);
    expect(labels).toEqual(['11-26 20:00:00', '11-27 20:00:00']);
  });

  it('the tick spacings are whole seconds, minutes, hours or days', () => {
    for (const incr of TIME_INCRS) expect([1, 2, 5, 10, 15, 30].includes(incr) || incr % 60 === 0).toBe(true);
    expect([...TIME_INCRS].sort((a, b) => a - b)).toEqual(TIME_INCRS);
  });
});

describe('timeAxisTitle', () => {
  it('names the day once when every run is on it', () => {
    expect(timeAxisTitle(T0, T0 + 600)).toBe('scheduled time (UTC, 2026-11-26)');
    expect(timeAxisTitle(T0, T0 + 5 * 3600)).toBe('scheduled time (UTC)');
    expect(timeAxisTitle(T0, T0 + 2 * 86_400)).toBe('scheduled time (UTC)');
  });
});

describe('hoverTime', () => {
  it('to the minute, to the second for runs made seconds apart', () => {
    expect(hoverTime(T0)).toBe('2026-11-26 20:00');
    expect(hoverTime(T0 + 30)).toBe('2026-11-26 20:00:30');
  });
});
