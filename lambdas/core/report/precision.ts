/**
 * How many digits a number is shown with, shared by the markup (format.ts) and the pages'
 * browser scripts (legends): an estimate with an interval gets the decimals the interval's
 * width supports (two significant digits of the width, so `[−0.000395, +0.00324]` reads
 * `[−0.0004, +0.0032]`), and the values it is the difference of get the same; a number with
 * no interval gets three significant digits. No Node and no DOM here: both sides import it.
 */

/** The true minus sign the pages write. */
export const MINUS = '\u2212';
/** What the pages write for no value. */
export const NO_VALUE = '\u2013';

/** The most decimals shown: past this a width is noise of floating point, not of the data. */
const MAX_DECIMALS = 12;

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Decimals that give `width` (an interval's high minus low) two significant digits, never
 * fewer than 0 (whole numbers are not rounded to tens); null for no width (a missing bound,
 * or an interval of one point), where the value keeps its own significant digits.
 */
export function decimalsForWidth(width: number | null | undefined): number | null {
  if (!isFiniteNumber(width) || width <= 0) return null;
  return Math.min(MAX_DECIMALS, Math.max(0, 1 - Math.floor(Math.log10(width))));
}

/** The decimals an interval supports (decimalsForWidth of its width), null without both bounds. */
export function decimalsOf(
  iv: { ci_low: number | null; ci_high: number | null } | null | undefined,
  scale = 1,
): number | null {
  if (!iv || !isFiniteNumber(iv.ci_low) || !isFiniteNumber(iv.ci_high)) return null;
  return decimalsForWidth(Math.abs(iv.ci_high - iv.ci_low) * scale);
}

/** `x` with exactly `decimals` decimals, en-US grouping, a true minus sign; a value that rounds to zero has no sign. */
export function fixed(x: number, decimals: number): string {
  const d = Math.min(MAX_DECIMALS, Math.max(0, Math.round(decimals)));
  const s = x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  if (/^-[0.,]*$/.test(s)) return s.slice(1);
  return s.replace(/^-/, MINUS);
}

/** Without an interval: whole numbers as they are, whole from 1,000, one decimal from 100, two from 1, three significant digits below. */
export function significant(x: number): string {
  const a = Math.abs(x);
  if (Number.isInteger(x) || a >= 1000) return fixed(x, 0);
  if (a >= 100) return fixed(x, 1);
  if (a >= 1) return fixed(x, 2);
  // Three significant digits below 1, trailing zeros dropped (0.5, 0.0102).
  return String(Number(x.toPrecision(3))).replace(/^-/, MINUS);
}

/** A number for a page: with `decimals` when given (an interval's), else significant(); NO_VALUE when not a number. */
export function formatNumber(x: unknown, decimals?: number | null): string {
  if (!isFiniteNumber(x)) return NO_VALUE;
  return decimals === null || decimals === undefined ? significant(x) : fixed(x, decimals);
}
