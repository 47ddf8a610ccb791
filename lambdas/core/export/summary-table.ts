/**
 * The console summary: per-metric statistics, the run-level scalars, then the run's
 * accounting. It fits the terminal: 80 columns unless told otherwise (the CLI passes the
 * terminal's width when stdout is one). Labels and units are short; when the statistics
 * still do not fit, columns are left out, least telling first (std, min, p90, avg, max;
 * p50 and p99 always stay), and a line says which: every statistic is in
 * profile_export_aiperf.json and .csv.
 */
import type { Aggregates } from '../metrics/aggregate';
import { METRICS } from '../metrics/registry';
import type { StatSummary } from '../metrics/stats';
import type { RunManifest } from '../types';

export const DEFAULT_WIDTH = 80;

/** AIPerf's column order. */
const COLUMNS = ['avg', 'min', 'max', 'p99', 'p90', 'p50', 'std'] as const satisfies readonly (keyof StatSummary)[];
type Column = (typeof COLUMNS)[number];
/** The order columns are left out in when the table is too wide. */
const DROP_ORDER: readonly Column[] = ['std', 'min', 'p90', 'avg', 'max'];

/** Console labels: shorter than AIPerf's headers (which the CSV keeps). */
const LABELS: Record<string, string> = {
  time_to_first_token: 'Time to first token',
  time_to_second_token: 'Time to 2nd token',
  request_latency: 'Request latency',
  inter_token_latency: 'Inter-token latency',
  output_token_throughput_per_user: 'Tokens/s/user',
  output_sequence_length: 'Output tokens',
  input_sequence_length: 'Input tokens',
  schedule_lag: 'Schedule lag',
  output_token_throughput: 'Output token throughput',
  request_throughput: 'Request throughput',
  goodput: 'Goodput',
  request_count: 'Requests succeeded',
  error_request_count: 'Requests failed',
  benchmark_duration: 'Benchmark duration',
};
const UNITS: Record<string, string> = {
  ms: 'ms',
  tokens: 'tok',
  'tokens/sec/user': 'tok/s',
  'tokens/sec': 'tok/s',
  'requests/sec': 'req/s',
  requests: '',
  sec: 's',
};

function label(tag: string, header: string, unit: string): string {
  const u = UNITS[unit] ?? unit;
  return `${LABELS[tag] ?? header}${u ? ` (${u})` : ''}`;
}

/** Two decimals; whole numbers plain where asked (counts read better as 3 than 3.00). */
function fmt(value: number | null | undefined, plainIntegers = false): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'N/A';
  if (plainIntegers && Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

const INDENT = '  ';
/** Narrowest numeric column: keeps short columns from crowding each other. */
const MIN_COLUMN = 6;

function statsTable(rows: { label: string; stats: StatSummary }[], width: number): string[] {
  const labelWidth = Math.max('Metric'.length, ...rows.map((r) => r.label.length));
  const cells = new Map<Column, string[]>(COLUMNS.map((c) => [c, rows.map((r) => fmt(r.stats[c]))]));
  const columnWidth = (c: Column) => Math.max(MIN_COLUMN, c.length, ...(cells.get(c) as string[]).map((s) => s.length));
  let shown: Column[] = [...COLUMNS];
  const total = () => INDENT.length + labelWidth + shown.reduce((sum, c) => sum + 1 + columnWidth(c), 0);
  const dropped: Column[] = [];
  for (const c of DROP_ORDER) {
    if (total() <= width) break;
    shown = shown.filter((s) => s !== c);
    dropped.push(c);
  }
  const line = (first: string, rest: string[]) =>
    INDENT +
    first.padEnd(labelWidth) +
    rest.map((text, i) => ' ' + text.padStart(columnWidth(shown[i] as Column))).join('');
  const out = [
    line('Metric', shown),
    line(
      '-'.repeat(labelWidth),
      shown.map((c) => '-'.repeat(columnWidth(c))),
    ),
  ];
  rows.forEach((r, k) =>
    out.push(
      line(
        r.label,
        shown.map((c) => (cells.get(c) as string[])[k] as string),
      ),
    ),
  );
  if (dropped.length > 0)
    out.push(
      ...wrap(
        `(${dropped.join(', ')} left out to fit ${width} columns: all are in profile_export_aiperf.json)`,
        width - INDENT.length,
      ).map((l) => INDENT + l),
    );
  return out;
}

/**
 * `text` in lines of at most `width` characters, broken after a comma when it can be (a list
 * item stays whole), else between words; a longer word gets its own line.
 */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  const pieces = text.split(/(?<=,) /).flatMap((item) => (item.length > width ? item.split(' ') : [item]));
  for (const piece of pieces) {
    if (current && current.length + 1 + piece.length > width) {
      lines.push(current);
      current = piece;
    } else current = current ? `${current} ${piece}` : piece;
  }
  if (current) lines.push(current);
  return lines;
}

/** Label, value pairs; values wrapped under their column when long. */
function pairs(rows: [string, string][], width: number, alignRight: boolean): string[] {
  const labelWidth = Math.max(...rows.map(([l]) => l.length));
  const valueWidth = Math.max(...rows.map(([, v]) => v.length));
  const room = Math.max(20, width - INDENT.length - labelWidth - 2);
  return rows.flatMap(([l, v]) => {
    const parts = alignRight && v.length <= room ? [v.padStart(Math.min(valueWidth, room))] : wrap(v, room);
    return parts.map((part, i) => (INDENT + (i === 0 ? l : '').padEnd(labelWidth) + '  ' + part).trimEnd());
  });
}

export interface SummaryTableOptions {
  title?: string;
  /** Columns available (the terminal's width); default 80. */
  width?: number;
}

export function renderSummaryTable(
  agg: Aggregates,
  manifest: RunManifest & { scheduleLag: StatSummary | null; wireLag?: StatSummary | null },
  options: SummaryTableOptions = {},
): string {
  const width = Math.max(40, Math.floor(options.width ?? DEFAULT_WIDTH));
  const statRows: { label: string; stats: StatSummary }[] = [];
  for (const spec of METRICS) {
    const entry = spec.kind === 'record' && spec.console ? agg.records[spec.tag] : undefined;
    if (entry) statRows.push({ label: label(spec.tag, spec.header, entry.unit), stats: entry.stats });
  }
  const scalarRows: [string, string][] = [];
  for (const spec of METRICS) {
    const entry = spec.kind === 'derived' && spec.console ? agg.derived[spec.tag] : undefined;
    if (entry) scalarRows.push([label(spec.tag, spec.header, entry.unit), fmt(entry.value, true)]);
  }
  const drops = Object.entries(manifest.droppedByReason).map(([reason, n]) => `${reason} ${n}`);
  const failures = Object.entries(manifest.failedByType).map(([type, n]) => `${type} ${n}`);
  const notScheduled = Object.entries(manifest.notScheduledByReason).map(([reason, n]) => `${reason} ${n}`);
  const lag = manifest.scheduleLag;
  const accounting: [string, string][] = [
    ['Scheduled', String(manifest.scheduled)],
    ['Succeeded', String(manifest.succeeded)],
    ['Failed', failures.length ? `${manifest.failed} (${failures.join(', ')})` : String(manifest.failed)],
    ['Dropped', drops.length ? `${manifest.dropped} (${drops.join(', ')})` : String(manifest.dropped)],
    ['Not scheduled', notScheduled.length ? notScheduled.join(', ') : '0'],
    ['Balanced', manifest.balanced ? 'yes' : 'NO'],
    [
      'Schedule lag (ms)',
      lag ? `p50 ${fmt(lag.p50)}, p99 ${fmt(lag.p99)}, max ${fmt(lag.max)}` : 'N/A (nothing fired)',
    ],
  ];
  // Due -> on the wire: what the server sees of our lateness (absent when no client could tell).
  const wire = manifest.wireLag;
  if (wire) accounting.push(['Wire lag (ms)', `p50 ${fmt(wire.p50)}, p99 ${fmt(wire.p99)}, max ${fmt(wire.max)}`]);
  const lines = [options.title ?? 'capture-replay'];
  lines.push(
    ...(statRows.length > 0
      ? statsTable(statRows, width)
      : [`${INDENT}(no successful requests: no latency statistics)`]),
  );
  if (scalarRows.length > 0) lines.push('', ...pairs(scalarRows, width, true));
  lines.push('', ...pairs(accounting, width, false));
  return lines.join('\n');
}
