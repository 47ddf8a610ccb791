/** How a chart's legend and axes show a number (both pages' browser scripts). */
import { isNum } from '../shown';

/** A number for a legend or an axis: en-US grouping from 1,000, three significant digits below 1. */
export function fmt(v: unknown): string {
  if (!isNum(v)) return '--';
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  if (a >= 100) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return String(Number(v.toPrecision(3)));
}
