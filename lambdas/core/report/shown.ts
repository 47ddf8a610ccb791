/**
 * What report.html shows, decided once for the markup (which charts the page has) and for the
 * page's browser script (what each chart draws): the comparisons, each target's colour, the
 * distributions behind an ECDF. No Node and no DOM here: both sides import it.
 */
import {
  COMPARED_METRICS,
  type ComparedMetricTag,
  type ComparisonDocument,
  type MetricComparison,
  type TargetComparison,
} from '../compare/types';
import { SERIES_COLORS } from './palette';
import type { ReportData } from './types';

/** The comparisons shown: every target against the first, or the top-level one alone. */
export function comparisonsOf(doc: ComparisonDocument | null): TargetComparison[] {
  if (!doc) return [];
  return doc.comparisons.length > 0 ? doc.comparisons : [doc];
}

/** Whether a value is a number the page can show (JSON turns the rest into null). */
export const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export const hasValues = (a: readonly (number | null)[] | null | undefined): boolean => !!a && a.some(isNum);

/** The page's targets in order: the runs', or a capacity search's when the page has no run of its own. */
function targetNames(data: ReportData): string[] {
  return data.targets.length > 0 || !data.capacity
    ? data.targets.map((t) => t.summary.name)
    : data.capacity.targets.map((t) => t.name);
}

/** A target's colour by its position among the targets (the baseline first); an unknown name gets the next one. */
export function colorOf(data: ReportData, name: string): string {
  const names = targetNames(data);
  const i = names.indexOf(name);
  return SERIES_COLORS[(i < 0 ? names.length : i) % SERIES_COLORS.length] as string;
}

export function metricOf(c: TargetComparison, tag: ComparedMetricTag): MetricComparison | undefined {
  return c.metrics.find((m) => m.tag === tag);
}

/**
 * The distributions of an ECDF of `tag`, one per target that has values: the comparisons'
 * when comparing, else the targets' own quantiles.
 */
export function ecdfSources(
  data: ReportData,
  tag: ComparedMetricTag,
): { name: string; q: readonly (number | null)[] }[] {
  const out: { name: string; q: readonly (number | null)[] }[] = [];
  const add = (name: string, q: readonly (number | null)[] | undefined) => {
    if (q && hasValues(q) && !out.some((s) => s.name === name)) out.push({ name, q });
  };
  const comps = comparisonsOf(data.comparison);
  if (comps.length > 0) {
    for (const c of comps) {
      const m = metricOf(c, tag);
      if (m) {
        add(c.baseline, m.distribution.baseline);
        add(c.candidate, m.distribution.candidate);
      }
    }
  } else {
    for (const t of data.targets) add(t.summary.name, t.quantiles[tag]);
  }
  return out;
}

/** The metrics with a section: the compared ones when comparing, else those any target carries. */
export function shownMetrics(data: ReportData): ComparedMetricTag[] {
  const comps = comparisonsOf(data.comparison);
  return COMPARED_METRICS.map((m) => m.tag).filter((tag) =>
    comps.length > 0
      ? comps.some((c) => metricOf(c, tag))
      : data.targets.some((t) => hasValues(t.quantiles[tag]) || hasValues(t.series.metrics[tag])),
  );
}
