/** The pages' colours: shared by the markup (swatches, bars) and the browser scripts (series, bands). */
import type { Verdict } from '../compare/types';

/** Target colours, by the target's position in `ReportData.targets` (the baseline first). */
export const SERIES_COLORS = [
  '#2563eb',
  '#ea580c',
  '#16a34a',
  '#9333ea',
  '#db2777',
  '#0891b2',
  '#a16207',
  '#4b5563',
] as const;
/** Difference charts: the median's and the mean's interval bands. */
export const P50_BAND_COLOR = '#7c3aed';
export const MEAN_BAND_COLOR = '#0d9488';

/** Marker colours of the verdicts on the trend page, as report.html's badges. */
export const VERDICT_COLORS: Record<Verdict, string> = {
  worse: '#dc2626',
  better: '#16a34a',
  no_difference: '#6b7280',
  inconclusive: '#f59e0b',
  changed: '#2563eb',
};
