/** What report.html's charts share: the page's data, colours, metric names and uPlot options. */
import type uPlot from 'uplot';
import { COMPARED_METRICS, type ComparedMetricTag, type TargetComparison } from '../../compare/types';
import { METRIC_NAMES } from '../labels';
import { NO_VALUE } from '../precision';
import { isNum } from '../shown';
import type { ReportData } from '../types';
import { fmt } from './numbers';

/** The page's data and what every chart derives from it. */
export interface ReportPage {
  data: ReportData;
  /** The comparisons shown (comparisonsOf). */
  comps: TargetComparison[];
  colorOf(name: string): string;
}

export const METRICS: Record<string, { name: string; unit: string }> = Object.fromEntries(
  COMPARED_METRICS.map((m) => [m.tag, { name: METRIC_NAMES[m.tag], unit: m.unit }]),
);

/** The metric a chart element draws (its data-metric), as a tag. */
export const metricTag = (el: HTMLElement) => el.dataset.metric as ComparedMetricTag;

/** `#rrggbb` at opacity `a`. */
export function alpha(hex: string, a: number): string {
  const n = parseInt(hex.slice(1), 16);
  return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + a + ')';
}

export function pctAxis(label: string): uPlot.Axis {
  return { label, size: 56, values: (_u, ticks) => ticks.map((v) => Math.round(v * 100) + '%') };
}

export const pctValue = (_u: uPlot, v: unknown) => (isNum(v) ? (v * 100).toFixed(1) + '%' : NO_VALUE);
export const numValue = (_u: uPlot, v: unknown) => fmt(v);
/** A legend value with the decimals of the interval the values go with (the table's), or significant digits without one. */
export const numValueWith =
  (decimals: number | null) =>
  (_u: uPlot, v: unknown): string =>
    fmt(v, decimals);

/** Options every chart of the page starts from; the caller adds its scales, series and axes. */
export function baseOpts(el: HTMLElement, height: number) {
  return {
    width: Math.max(280, el.clientWidth),
    height,
    cursor: { drag: { x: true, y: false } },
    legend: { live: true },
  };
}
