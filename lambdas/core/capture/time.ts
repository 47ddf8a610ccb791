/**
 * A capture's `inferenceTime`, read by hand: a regex plus Date.parse cost a quarter of a
 * JSON.parse per line (bench/parse-throughput.ts), and Date.parse rolls impossible dates
 * (Feb 30) over silently. Also what makes a time implausible for a capture.
 */

/**
 * Plausible inferenceTimes: not before Amazon SageMaker's launch (2017-11-29, UTC), and not
 * more than a day ahead of the clock of the machine that reads the capture (clock skew and
 * time zones fit a day; a year 9999 would schedule a run of thousands of years).
 */
export const EARLIEST_PLAUSIBLE_TIME_MS = Date.UTC(2017, 10, 29);
export const MAX_FUTURE_MS = 24 * 3600 * 1000;

/** Value of `len` ASCII digits at `at`, or -1. */
function digits(text: string, at: number, len: number): number {
  let v = 0;
  for (let i = at; i < at + len; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return -1;
    v = v * 10 + d;
  }
  return v;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil); Date.UTC maps years 0-99 to 19xx. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * Epoch ms of an ISO-8601 instant `YYYY-MM-DDTHH:MM:SS`, an optional fraction (1-9 digits),
 * then `Z` or an offset `±HH`, `±HHMM`, `±HH:MM`; null for anything else. Years are taken as
 * written (0050 is 0050, not 1950 as `Date.UTC` would make it). `subSecond` follows the
 * TEXT: true when a fractional part is written at all, `.000` included (that writer gave the
 * time to the millisecond: it is exact and kept); false for `...:18Z`, the whole seconds
 * SageMaker writes, which the intra-second policy spreads.
 */
export function parseInferenceTime(text: string): { epochMs: number; subSecond: boolean } | null {
  const n = text.length;
  if (
    n < 20 ||
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58
  )
    return null;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  let i = 19;
  let fractionNs = 0;
  const fraction = text.charCodeAt(i) === 46;
  if (fraction) {
    const start = ++i;
    while (i < n && i - start < 10) {
      const d = text.charCodeAt(i) - 48;
      if (!(d >= 0 && d <= 9)) break;
      fractionNs = fractionNs * 10 + d;
      i++;
    }
    const count = i - start;
    if (count === 0 || count > 9) return null;
    fractionNs *= 10 ** (9 - count);
  }
  let offsetMinutes = 0;
  const sign = text.charCodeAt(i);
  if (sign === 90 /* Z */) {
    if (i !== n - 1) return null;
  } else if (sign === 43 || sign === 45) {
    const rest = n - i - 1;
    const oh = digits(text, i + 1, 2);
    const om =
      rest === 2
        ? 0
        : rest === 4
          ? digits(text, i + 3, 2)
          : rest === 5 && text.charCodeAt(i + 3) === 58
            ? digits(text, i + 4, 2)
            : -1;
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return null;
    offsetMinutes = (sign === 43 ? 1 : -1) * (oh * 60 + om);
  } else return null;
  const seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
  return { epochMs: seconds * 1000 + fractionNs / 1e6, subSecond: fraction };
}

/** Why a parsed time cannot be a capture's, or null (see EARLIEST_PLAUSIBLE_TIME_MS). */
export function implausibleTime(epochMs: number, nowMs: number): string | null {
  if (epochMs < EARLIEST_PLAUSIBLE_TIME_MS) return 'is before 2017-11-29, when SageMaker launched';
  if (epochMs > nowMs + MAX_FUTURE_MS)
    return `is more than a day ahead of this machine's clock (${new Date(nowMs).toISOString()})`;
  return null;
}
