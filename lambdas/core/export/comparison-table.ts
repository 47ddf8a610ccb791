/**
 * The A/B verdicts on a terminal: one block per comparison, at most 80 columns wide, so it
 * reads in a default terminal and in a CI log without wrapping.
 */
import type { ComparisonDocument, Interval, MetricComparison, TargetComparison } from '../compare/types';

export const TABLE_WIDTH = 80;

const LABELS: Record<string, string> = {
  request_latency: 'Request latency',
  time_to_first_token: 'Time to first token',
  inter_token_latency: 'Inter-token latency',
  time_to_second_token: 'Time to 2nd token',
  output_sequence_length: 'Output tokens',
  output_token_throughput_per_user: 'Tokens/s/user',
};

const UNITS: Record<string, string> = { ms: 'ms', tokens: 'tok', 'tokens/sec/user': 'tok/s' };

/** Three significant figures, signed when asked; thousands kept short (12.3k). */
export function short(value: number | null, signed = false): string {
  if (value === null || !Number.isFinite(value)) return 'n/a';
  const sign = signed && value > 0 ? '+' : '';
  const abs = Math.abs(value);
  let text: string;
  if (abs >= 1e6) text = `${(value / 1e6).toFixed(abs >= 1e7 ? 0 : 1)}M`;
  else if (abs >= 1e4) text = `${(value / 1e3).toFixed(abs >= 1e5 ? 0 : 1)}k`;
  else if (abs >= 100) text = value.toFixed(0);
  else if (abs >= 10) text = value.toFixed(1);
  else text = value.toFixed(2);
  return sign + text;
}

function interval(i: Interval, signed: boolean, suffix = ''): string {
  if (i.estimate === null) return 'n/a';
  return `${short(i.estimate, signed)}${suffix} [${short(i.ci_low, signed)}, ${short(i.ci_high, signed)}]`;
}

export function pValue(p: number | null): string {
  if (p === null || !Number.isFinite(p)) return 'n/a';
  if (p < 0.001) return '<.001';
  return p.toFixed(3).replace(/^0/, '');
}

const VERDICT_TEXT: Record<string, string> = {
  better: 'BETTER',
  worse: 'WORSE',
  no_difference: 'same',
  inconclusive: 'inconclusive',
  changed: 'CHANGED',
};

function pad(text: string, width: number, right = false): string {
  const cut = text.length > width ? text.slice(0, width - 1) + '…' : text;
  return right ? cut.padStart(width) : cut.padEnd(width);
}

// Column widths: 24 + 12 + 24 + 7 + 6, 4 separators and a 2-space indent: 79 columns.
const COLS = [24, 12, 24, 7, 6] as const;

function row(cells: string[]): string {
  return ('  ' + cells.map((c, i) => pad(c, COLS[i] as number, i >= 2)).join(' ')).trimEnd();
}

/** The effect a verdict is judged on: the paired shift (median of B - A), or unpaired the p50 difference. */
function effectOf(m: MetricComparison): { difference: Interval; relative: Interval } {
  return m.paired_shift
    ? { difference: m.paired_shift.difference, relative: m.paired_shift.relative_pct }
    : { difference: m.difference.p50, relative: m.relative_pct.p50 };
}

function metricRow(m: MetricComparison): string {
  const unit = UNITS[m.unit] ?? m.unit;
  const effect = effectOf(m);
  const rel = effect.relative.estimate;
  return row([
    `${LABELS[m.tag] ?? m.tag} (${unit})`,
    VERDICT_TEXT[m.verdict] ?? m.verdict,
    interval(effect.difference, true),
    rel === null ? 'n/a' : `${short(rel, true)}%`,
    pValue(m.p_value_adjusted),
  ]);
}

export function renderComparisonBlock(c: TargetComparison, minEffect: number): string {
  const excluded = Object.entries(c.pairs.excluded)
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  // Unpaired, `used` counts both sides' succeeded requests together: each side's own count is what was compared.
  const succeeded = (s: { fired: number; failed: number }) => s.fired - s.failed;
  const compared =
    c.mode === 'paired'
      ? `${c.pairs.used} pairs`
      : `${succeeded(c.errors.candidate)} requests of ${c.candidate} and ${succeeded(c.errors.baseline)} of ${c.baseline}`;
  const lines = [
    pad(`${c.candidate} vs ${c.baseline}: ${c.mode}, ${compared} compared`, TABLE_WIDTH).trimEnd(),
    ...(excluded ? [pad(`  not compared: ${excluded}`, TABLE_WIDTH).trimEnd()] : []),
    row([
      'Metric',
      'Verdict',
      c.mode === 'paired' ? 'shift B-A [95% CI]' : 'p50 B-A [95% CI]',
      c.mode === 'paired' ? 'shift %' : 'p50 %',
      'p Holm',
    ]),
    row(COLS.map((w) => '-'.repeat(w))),
    ...c.metrics.map(metricRow),
  ];
  const e = c.errors;
  const pct = (r: number | null) => (r === null ? 'n/a' : `${(r * 100).toFixed(r < 0.1 ? 2 : 1)}%`);
  const diffPts: Interval = {
    estimate: e.difference.estimate === null ? null : e.difference.estimate * 100,
    ci_low: e.difference.ci_low === null ? null : e.difference.ci_low * 100,
    ci_high: e.difference.ci_high === null ? null : e.difference.ci_high * 100,
  };
  lines.push(
    row([
      'Error rate (% points)',
      VERDICT_TEXT[e.verdict] ?? e.verdict,
      interval(diffPts, true),
      '',
      pValue(e.p_value),
    ]),
  );
  const side = (name: string, s: { fired: number; failed: number; rate: number | null }) =>
    `${name} ${pct(s.rate)} (${s.failed}/${s.fired})`;
  lines.push(
    pad(`  errors: ${side(c.baseline, e.baseline)}, ${side(c.candidate, e.candidate)}`, TABLE_WIDTH).trimEnd(),
  );
  if (c.mode === 'paired') lines.push("  shift: median of the per-request differences B - A (% of A's p50)");
  lines.push(
    pad(
      `  better/worse: Holm p < alpha, 95% CI clear of 0, and at least ${(minEffect * 100).toFixed(minEffect < 0.01 ? 1 : 0)}% change`,
      TABLE_WIDTH,
    ).trimEnd(),
  );
  return lines.join('\n');
}

export function renderComparisonTable(doc: ComparisonDocument): string {
  return doc.comparisons.map((c) => renderComparisonBlock(c, doc.method.min_effect)).join('\n\n');
}

/** Exit code when --fail-on matches a verdict: a CI job tells it from a run that could not be done (1). */
export const FAIL_ON_EXIT = 3;

/** Whether any verdict in the document (metrics or error rate) is one of `verdicts`. */
export function hasVerdict(doc: ComparisonDocument, verdicts: readonly string[]): boolean {
  return doc.comparisons.some(
    (c) =>
      c.errors.verdict !== undefined &&
      (verdicts.includes(c.errors.verdict) || c.metrics.some((m) => verdicts.includes(m.verdict))),
  );
}
