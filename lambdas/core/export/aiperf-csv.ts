/**
 * profile_export_aiperf.csv in AIPerf's two-section layout: record metrics with statistics
 * (`Metric,avg,min,max,sum,p1..p99,std`), a blank line, then run-level metrics
 * (`Metric,Value`). As in AIPerf's CSV exporter: rows sorted by metric tag; the name written
 * `Header (unit)` except for plain counts (unit `requests`); numbers with two decimals; an
 * empty cell for a value that is not defined; a section left out when it has no rows.
 * Epoch-ns timestamps are written exactly (bigint), as AIPerf writes its integers.
 * Lines end with \n (AIPerf's Python writer uses \r\n; every CSV reader accepts both).
 */
import type { Aggregates } from '../metrics/aggregate';
import { METRIC_BY_TAG } from '../metrics/registry';
import type { StatSummary } from '../metrics/stats';

const STAT_COLUMNS = ['avg', 'min', 'max', 'sum', 'p1', 'p5', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99', 'std'] as const satisfies readonly (keyof StatSummary)[];

/** Units AIPerf leaves out of the row name: the header already says it is a count. */
const UNITLESS = new Set(['requests', 'count']);

function cell(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function name(tag: string, unit: string): string {
  const header = METRIC_BY_TAG.get(tag)?.header ?? tag;
  return cell(UNITLESS.has(unit.toLowerCase()) ? header : `${header} (${unit})`);
}

/**
 * Statistics and scalars are floats in AIPerf (its request_count reads 20.0), so they get two
 * decimals even when whole; only the exact ns timestamps are integers.
 */
function num(value: number | bigint | null): string {
  if (value === null) return '';
  if (typeof value === 'bigint') return value.toString();
  return Number.isFinite(value) ? value.toFixed(2) : '';
}

const byTag = <T>(entries: Record<string, T>): [string, T][] => Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

export function renderAiperfCsv(agg: Aggregates): string {
  const sections: string[][] = [];
  const records = byTag(agg.records);
  if (records.length > 0) {
    const lines = [['Metric', ...STAT_COLUMNS].join(',')];
    for (const [tag, { unit, stats }] of records) lines.push([name(tag, unit), ...STAT_COLUMNS.map((c) => num(stats[c]))].join(','));
    sections.push(lines);
  }
  const exact: Record<string, bigint | null> = { min_request_timestamp: agg.minRequestNs, max_response_timestamp: agg.maxResponseNs };
  const scalars = byTag(agg.derived);
  if (scalars.length > 0) {
    const lines = ['Metric,Value'];
    for (const [tag, { unit, value }] of scalars) lines.push([name(tag, unit), tag in exact ? num(exact[tag] ?? null) : num(value)].join(','));
    sections.push(lines);
  }
  return sections.map((lines) => lines.join('\n') + '\n').join('\n');
}
