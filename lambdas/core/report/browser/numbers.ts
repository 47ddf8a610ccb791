/** How a chart's legend shows a number (both pages' browser scripts): as the tables do (precision.ts). */
import { formatNumber } from '../precision';

/**
 * A number for a legend: with `decimals` when the chart's values go with an interval (the
 * decimals the table shows them with), else three significant digits; an en dash for none.
 */
export function fmt(v: unknown, decimals?: number | null): string {
  return formatNumber(v, decimals);
}
