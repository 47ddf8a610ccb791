/**
 * The one JSON writer of every export. Two disciplines live here and nowhere else:
 * - bigint (epoch ns) is written as an exact integer: a float would round
 *   1759522419158355424 to ...5500, and AIPerf writes exact integers;
 * - NaN and ±Infinity become null. JSON.stringify would do the same silently; doing it here
 *   on purpose keeps one place responsible, and the metrics code returns null for undefined
 *   values anyway, so a null in an export always means "not defined", never a lost number.
 * Byte arrays are refused: a request body must never leak into an export by accident.
 */
const MARK = '\u0000bigint:';
const MARKED = /"\\u0000bigint:(-?\d+)"/g;

export function stringifyJson(value: unknown, space?: number): string {
  const text = JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (typeof v === 'bigint') return MARK + v.toString();
      if (typeof v === 'number' && !Number.isFinite(v)) return null;
      if (v instanceof Uint8Array) throw new Error('refusing to export raw bytes (a request or response body?)');
      return v;
    },
    space,
  );
  return text.replace(MARKED, '$1');
}
