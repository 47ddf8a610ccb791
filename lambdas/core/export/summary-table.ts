/** The console summary: AIPerf's table of statistics, then the run's accounting. */
import type { Aggregates } from '../metrics/aggregate';
import { METRICS } from '../metrics/registry';
import type { StatSummary } from '../metrics/stats';
import type { RunManifest } from '../types';

const COLUMNS = ['avg', 'min', 'max', 'p99', 'p90', 'p50', 'std'] as const satisfies readonly (keyof StatSummary)[];

/** Two decimals; whole numbers plain where asked (counts read better as 3 than 3.00). */
function fmt(value: number | null | undefined, plainIntegers = false): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'N/A';
  if (plainIntegers && Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (l: string, m: string, r: string) => l + widths.map((w) => '─'.repeat(w + 2)).join(m) + r;
  const row = (cells: string[]) => '│' + cells.map((c, i) => ` ${i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)} `).join('│') + '│';
  return [line('┌', '┬', '┐'), row(header), line('├', '┼', '┤'), ...rows.map(row), line('└', '┴', '┘')].join('\n');
}

export function renderSummaryTable(agg: Aggregates, manifest: RunManifest & { scheduleLag: StatSummary | null }, options: { title?: string } = {}): string {
  const statRows: string[][] = [];
  for (const spec of METRICS) {
    const entry = spec.kind === 'record' && spec.console ? agg.records[spec.tag] : undefined;
    if (entry) statRows.push([`${spec.header} (${entry.unit})`, ...COLUMNS.map((c) => fmt(entry.stats[c]))]);
  }
  const scalarRows: string[][] = [];
  for (const spec of METRICS) {
    const entry = spec.kind === 'derived' && spec.console ? agg.derived[spec.tag] : undefined;
    if (entry) scalarRows.push([`${spec.header} (${entry.unit})`, fmt(entry.value, true)]);
  }
  const drops = Object.entries(manifest.droppedByReason).map(([reason, n]) => `${reason} ${n}`);
  const failures = Object.entries(manifest.failedByType).map(([type, n]) => `${type} ${n}`);
  const notScheduled = Object.entries(manifest.notScheduledByReason).map(([reason, n]) => `${reason} ${n}`);
  const lag = manifest.scheduleLag;
  const accounting = [
    ['Scheduled', String(manifest.scheduled)],
    ['Succeeded', String(manifest.succeeded)],
    ['Failed', failures.length ? `${manifest.failed} (${failures.join(', ')})` : String(manifest.failed)],
    ['Dropped', drops.length ? `${manifest.dropped} (${drops.join(', ')})` : String(manifest.dropped)],
    ['Not scheduled', notScheduled.length ? notScheduled.join(', ') : '0'],
    ['Balanced', manifest.balanced ? 'yes' : 'NO'],
    ['Schedule lag (ms)', lag ? `p50 ${fmt(lag.p50)}, p99 ${fmt(lag.p99)}, max ${fmt(lag.max)}` : 'N/A (nothing fired)'],
  ];
  const parts = [
    options.title ?? 'capture-replay',
    statRows.length > 0 ? table(['Metric', ...COLUMNS], statRows) : '(no successful requests: no latency statistics)',
  ];
  if (scalarRows.length > 0) parts.push(table(['Metric', 'Value'], scalarRows));
  parts.push(table(['Run accounting', ''], accounting));
  return parts.join('\n');
}
