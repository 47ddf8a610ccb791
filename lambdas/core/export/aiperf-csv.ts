/**
 * profile_export_aiperf.csv: section 1, one row per record metric (`Header (unit)` then
 * avg,min,max,sum,p1..p99,std); a blank line; section 2, `Metric,Value` for run-level
 * metrics. Numbers have two decimals like AIPerf's CSV, except exact integer ns timestamps.
 */
import type { Aggregates } from '../metrics/aggregate';
import { METRICS } from '../metrics/registry';
import type { StatSummary } from '../metrics/stats';

const STAT_COLUMNS = ['avg', 'min', 'max', 'sum', 'p1', 'p5', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99', 'std'] as const satisfies readonly (keyof StatSummary)[];

function cell(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function num(value: number | null): string {
  return value === null || !Number.isFinite(value) ? '' : value.toFixed(2);
}

export function renderAiperfCsv(agg: Aggregates): string {
  const lines = [['Metric', ...STAT_COLUMNS].join(',')];
  for (const spec of METRICS) {
    const entry = spec.kind === 'record' ? agg.records[spec.tag] : undefined;
    if (!entry) continue;
    lines.push([cell(`${spec.header} (${entry.unit})`), ...STAT_COLUMNS.map((c) => num(entry.stats[c]))].join(','));
  }
  lines.push('', 'Metric,Value');
  for (const spec of METRICS) {
    const entry = spec.kind === 'derived' ? agg.derived[spec.tag] : undefined;
    if (!entry) continue;
    const exact = spec.tag === 'min_request_timestamp' ? agg.minRequestNs : spec.tag === 'max_response_timestamp' ? agg.maxResponseNs : undefined;
    lines.push([cell(`${spec.header} (${entry.unit})`), exact !== undefined ? (exact?.toString() ?? '') : num(entry.value)].join(','));
  }
  return lines.join('\n') + '\n';
}
