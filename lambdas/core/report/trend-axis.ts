/**
 * The trend page's x axis: each run's scheduled time in epoch seconds, on a numeric scale (one
 * slot per run, not a calendar). Its ticks fall on whole seconds, minutes, hours or days
 * (TIME_INCRS, uPlot's `incrs`), and each label carries what tells it from its neighbours:
 * the time of day when the runs span under a day (with seconds when ticks are under a minute
 * apart), the date too when they span more. A schedule run every few minutes has labels
 * that differ, not a row of the same date.
 */

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;

/** Tick spacings in seconds: whole units of a clock and a calendar. */
export const TIME_INCRS = [
  1,
  2,
  5,
  10,
  15,
  30,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
  28 * DAY,
  56 * DAY,
  91 * DAY,
  182 * DAY,
  364 * DAY,
];

/** `YYYY-MM-DD HH:MM:SS` of an epoch second, UTC. */
function isoSeconds(t: number): string {
  return new Date(t * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * The labels of `ticks` (epoch s) for runs spanning `spanSeconds`: `HH:MM` (or `HH:MM:SS`)
 * under a day, `MM-DD HH:MM` beyond; more digits whenever two labels would read the same.
 */
export function timeTickLabels(ticks: readonly number[], spanSeconds: number): string[] {
  const gaps = ticks.slice(1).map((t, i) => t - (ticks[i] as number));
  const step = gaps.length > 0 ? Math.min(...gaps) : Infinity;
  const forms: [start: number, end: number][] =
    spanSeconds < DAY
      ? [
          [11, 16],
          [11, 19],
          [5, 19],
        ]
      : [
          [5, 16],
          [5, 19],
          [0, 19],
        ];
  const first = step < MINUTE && spanSeconds < DAY ? 1 : 0;
  for (const [start, end] of forms.slice(first)) {
    const labels = ticks.map((t) => isoSeconds(t).slice(start, end));
    if (new Set(labels).size === labels.length) return labels;
  }
  return ticks.map(isoSeconds);
}

/** A run's scheduled time on hover: to the minute, to the second when it is not on one (local runs made seconds apart). */
export function hoverTime(t: number): string {
  return isoSeconds(t).slice(0, t % 60 === 0 ? 16 : 19);
}

/** The axis title: the date named once when the runs fall on one UTC day and the ticks show only the time. */
export function timeAxisTitle(firstSeconds: number, lastSeconds: number): string {
  const day = (t: number) => isoSeconds(t).slice(0, 10);
  return lastSeconds - firstSeconds < DAY && day(firstSeconds) === day(lastSeconds)
    ? `scheduled time (UTC, ${day(firstSeconds)})`
    : 'scheduled time (UTC)';
}
