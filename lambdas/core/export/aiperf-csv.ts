/**
 * profile_export_aiperf.csv exactly as AIPerf's MetricsCsvExporter writes it
 * (src/aiperf/exporters/metrics_csv_exporter.py), byte for byte. The format, rule by rule:
 * renderAiperfCsv.
 */
import type { Aggregates } from '../metrics/aggregate';
import { METRIC_BY_TAG } from '../metrics/registry';
import type { StatSummary } from '../metrics/stats';

const STAT_COLUMNS = [
  'avg',
  'min',
  'max',
  'sum',
  'p1',
  'p5',
  'p10',
  'p25',
  'p50',
  'p75',
  'p90',
  'p95',
  'p99',
  'std',
] as const satisfies readonly (keyof StatSummary)[];

/** Units AIPerf leaves out of the row name: the header already says it is a count. */
const UNITLESS = new Set(['requests', 'count']);

const EOL = '\r\n';

function cell(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function name(tag: string, unit: string): string {
  const header = METRIC_BY_TAG.get(tag)?.header ?? tag;
  return cell(unit === '' || UNITLESS.has(unit.toLowerCase()) ? header : `${header} (${unit})`);
}

/**
 * Python's `f"{x:.2f}"`: the exact binary value rounded half to even (JavaScript's toFixed
 * rounds an exact tie up: 0.625 -> "0.63" where Python writes "0.62"), the sign kept on a
 * negative value that rounds to zero.
 */
export function pythonFixed2(x: number): string {
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const abs = Math.abs(x);
  if (abs >= 1e21) return sign + abs.toFixed(2); // not reached by any metric; toFixed goes exponential there
  const [whole = '0', frac = ''] = abs.toFixed(100).split('.'); // exact: a double's expansion ends well before 100 digits
  let cents = BigInt(whole + frac.slice(0, 2));
  const rest = frac.slice(2).replace(/0+$/, '');
  if (rest > '5' || (rest === '5' && cents % 2n === 1n)) cents += 1n;
  const digits = cents.toString().padStart(3, '0');
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** AIPerf's `_format_number` for a value of the given Python type. */
export function formatNumber(value: number | bigint | null, type: 'int' | 'float'): string {
  if (value === null) return '';
  if (typeof value === 'bigint') return value.toString();
  if (!Number.isFinite(value)) return '';
  return type === 'int' && Number.isInteger(value) ? value.toFixed(0) : pythonFixed2(value);
}

const byTag = <T>(entries: Record<string, T>): [string, T][] =>
  Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The CSV, as AIPerf writes it:
 * - record metrics with statistics, header `Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std`
 *   (AIPerf's STAT_KEYS, common/constants.py), then a blank line, then run-level metrics
 *   under `Metric,Value`; a section is left out when it has no rows (and so is the blank line);
 * - rows sorted by metric tag;
 * - the name is the metric's header, followed by ` (unit)` unless the unit is `count` or
 *   `requests`;
 * - numbers as `_format_number` does: an integer without decimals, any other number with two
 *   (`f"{float(value):.2f}"`, so a whole float reads `3.00`), an empty cell for no value.
 *   Which values are integers follows AIPerf's types: record-metric statistics are floats
 *   (metric_dicts.metric_result_from_array), run-level scalars are ints where the metric is
 *   `BaseAggregateMetric[int]` (counts, timestamps: registry `scalar: 'int'`), floats
 *   otherwise. Epoch-ns timestamps are written exactly (bigint);
 * - lines end with \r\n, Python csv.writer's default; a cell is quoted only when it holds a
 *   comma, a quote or a line break (QUOTE_MINIMAL).
 */
export function renderAiperfCsv(agg: Aggregates): string {
  const sections: string[][] = [];
  const records = byTag(agg.records);
  if (records.length > 0) {
    const lines = [['Metric', ...STAT_COLUMNS].join(',')];
    for (const [tag, { unit, stats }] of records)
      lines.push([name(tag, unit), ...STAT_COLUMNS.map((c) => formatNumber(stats[c], 'float'))].join(','));
    sections.push(lines);
  }
  const exact: Record<string, bigint | null> = {
    min_request_timestamp: agg.minRequestNs,
    max_response_timestamp: agg.maxResponseNs,
  };
  const scalars = byTag(agg.derived);
  if (scalars.length > 0) {
    const lines = ['Metric,Value'];
    for (const [tag, { unit, value }] of scalars) {
      const type = METRIC_BY_TAG.get(tag)?.scalar ?? 'float';
      lines.push([name(tag, unit), formatNumber(tag in exact ? (exact[tag] ?? null) : value, type)].join(','));
    }
    sections.push(lines);
  }
  return sections.map((lines) => lines.join(EOL) + EOL).join(EOL);
}
