/**
 * A scheduled A/B run's window of captured traffic: which instants it covers, evaluated at
 * the schedule's fire time in its timezone, and which of Data Capture's hour partitions
 * (`<prefix><endpoint>/<variant>/yyyy/mm/dd/hh/`, always UTC) can hold its records.
 *
 * Two forms:
 *   - `{ lastHours: N }`: [fire time - N hours, fire time);
 *   - `{ daysAgo: D, from: "HH:MM", to: "HH:MM" }`: that day's wall-clock range in the
 *     schedule's timezone, D days before the fire date (0 = the fire date itself); `to` at or
 *     before `from` ends on the next day ("22:00"-"02:00").
 * Records are selected by their inferenceTime within the window; the partitions are only
 * where to look. A capture file lands in the partition of the hour it was written, a little
 * after its first record, so the hour after the window is listed too.
 */

export type CaptureWindow = { lastHours: number } | { daysAgo: number; from: string; to: string };

export interface WindowRange {
  /** Inclusive start, epoch ms. */
  startMs: number;
  /** Exclusive end, epoch ms. */
  endMs: number;
}

const HOUR_MS = 3_600_000;
const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** What is wrong with a window, or null. */
export function windowProblem(window: CaptureWindow): string | null {
  if ('lastHours' in window) {
    return Number.isInteger(window.lastHours) && window.lastHours >= 1 && window.lastHours <= 168
      ? null
      : 'lastHours must be a whole number from 1 to 168';
  }
  if (!Number.isInteger(window.daysAgo) || window.daysAgo < 0 || window.daysAgo > 31)
    return 'daysAgo must be a whole number from 0 to 31';
  if (!HH_MM.test(window.from)) return `from must be HH:MM (got "${window.from}")`;
  if (!HH_MM.test(window.to)) return `to must be HH:MM (got "${window.to}")`;
  return null;
}

/** The timezone's offset from UTC at an instant, in ms (positive east of Greenwich). */
export function zoneOffsetMs(epochMs: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(epochMs);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - (epochMs - (epochMs % 1000));
}

/** The instant of a wall-clock time in a timezone (the earlier one in a DST fold; a DST gap moves forward). */
export function zonedToUtc(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  timeZone: string,
): number {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  // The offsets a day either side cover both sides of any transition near this time.
  const candidates = [
    guess - zoneOffsetMs(guess - 86_400_000, timeZone),
    guess - zoneOffsetMs(guess + 86_400_000, timeZone),
    guess - zoneOffsetMs(guess, timeZone),
  ];
  // A candidate is right when it shows the asked wall time: both in a fold (take the earlier),
  // neither in a gap (take the later: the time the clocks jumped to).
  const valid = candidates.filter((c) => c + zoneOffsetMs(c, timeZone) === guess);
  return valid.length > 0 ? Math.min(...valid) : Math.max(...candidates);
}

/** The window's instants for a schedule firing at `fireMs` in `timeZone` (an IANA name, e.g. `UTC`, `Europe/Paris`). */
export function windowRange(window: CaptureWindow, fireMs: number, timeZone: string): WindowRange {
  const problem = windowProblem(window);
  if (problem) throw new Error(`window: ${problem}`);
  if ('lastHours' in window) return { startMs: fireMs - window.lastHours * HOUR_MS, endMs: fireMs };
  // The fire date in the schedule's timezone, then D days back, at the wall-clock times.
  const local = new Date(fireMs + zoneOffsetMs(fireMs, timeZone));
  const day = new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() - window.daysAgo));
  const [fh, fm] = window.from.split(':').map(Number) as [number, number];
  const [th, tm] = window.to.split(':').map(Number) as [number, number];
  const startMs = zonedToUtc(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), fh, fm, timeZone);
  const nextDay = th * 60 + tm <= fh * 60 + fm ? 1 : 0;
  const endMs = zonedToUtc(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate() + nextDay, th, tm, timeZone);
  return { startMs, endMs };
}

/** `yyyy/mm/dd/hh` of every UTC hour partition that can hold the window's records, in order. */
export function hourPartitions(range: WindowRange): string[] {
  const out: string[] = [];
  const first = Math.floor(range.startMs / HOUR_MS) * HOUR_MS;
  // The hour after the window: files are written a little after their first record.
  const last = Math.floor((range.endMs - 1) / HOUR_MS) * HOUR_MS + HOUR_MS;
  for (let t = first; t <= last; t += HOUR_MS) {
    const d = new Date(t);
    const two = (n: number) => String(n).padStart(2, '0');
    out.push(`${d.getUTCFullYear()}/${two(d.getUTCMonth() + 1)}/${two(d.getUTCDate())}/${two(d.getUTCHours())}`);
  }
  return out;
}
