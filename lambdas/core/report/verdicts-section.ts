/**
 * report.html's verdicts: one table per candidate against the baseline, then the method and
 * the output lengths against the capture. The table fits a 1,024 px window: each metric's
 * explanation ("why") is a row of its own under the metric's numbers, as wide as the table,
 * so it wraps instead of widening it; every number of a row is shown with the decimals its
 * interval supports (format.ts, precision.ts), the A and B p50 with those of their difference.
 */
import type { ComparisonDocument, MetricComparison, TargetComparison } from '../compare/types';
import {
  badge,
  count,
  escapeHtml as esc,
  interval,
  metricInfo,
  num,
  pValue,
  rate,
  shownText,
  signed,
  swatch,
} from './format';
import { TEST_NAMES } from './labels';
import { decimalsOf } from './precision';
import { colorOf, comparisonsOf } from './shown';
import type { ReportData } from './types';

/** The table's columns: Metric, Verdict, A p50, B p50, four differences, p, n. */
const COLUMNS = 10;

/** The row under a metric's numbers: its explanation, under the verdict and across the numbers. */
function whyRow(tag: string, text: string): string {
  return (
    `<tr class="why-row" data-why="${esc(tag)}"><td></td><td colspan="${COLUMNS - 1}" class="why">` +
    `<span class="why-label">Why:</span> ${esc(shownText(text, 2000))}</td></tr>`
  );
}

function metricRow(m: MetricComparison): string {
  const { name } = metricInfo(m.tag);
  // A and B p50 with the decimals of their difference: B - A reads off the table as the difference shows it.
  const decimals = decimalsOf(m.difference.p50);
  return `<tr data-metric="${esc(m.tag)}" class="metric-row">
<td class="l metric-name">${esc(name)}<div class="unit">${esc(m.unit)}</div></td>
<td class="l">${badge(m.verdict, m.verdict_reason)}</td>
<td>${num(m.baseline.p50, decimals)}</td>
<td>${num(m.candidate.p50, decimals)}</td>
<td>${interval(m.difference.p50, '', { stacked: true })}</td>
<td>${interval(m.relative_pct.p50, '%', { stacked: true })}</td>
<td>${interval(m.paired_shift?.difference ?? m.difference.mean, '', { stacked: true })}</td>
<td>${interval(m.paired_shift?.relative_pct ?? m.relative_pct.mean, '%', { stacked: true })}</td>
<td>${pValue(m.p_value_adjusted)}</td>
<td>${count(m.n)}</td>
</tr>
${whyRow(m.tag, m.verdict_reason)}`;
}

function errorRows(c: TargetComparison): string {
  const e = c.errors;
  const side = (s: { fired: number; failed: number; rate: number | null }) =>
    `${rate(s.rate)}<br><span class="ci">${count(s.failed)} / ${count(s.fired)}</span>`;
  return `<tr data-metric="error_rate" class="metric-row error-row">
<td class="l metric-name">Error rate<div class="unit">failed / fired</div></td>
<td class="l">${badge(e.verdict)}</td>
<td>${side(e.baseline)}</td>
<td>${side(e.candidate)}</td>
<td colspan="4" class="c">B \u2212 A: ${interval(e.difference, 'pp', { scale: 100 })}</td>
<td>${pValue(e.p_value)}</td>
<td>${count(e.baseline.fired)}</td>
</tr>
${whyRow('error_rate', `${TEST_NAMES[e.test] ?? e.test} test, not adjusted.`)}`;
}

function header(c: TargetComparison): string {
  const sub = (text: string) => `<br><span class="ci">${text}</span>`;
  const diffs =
    c.mode === 'paired'
      ? `<th>Shift${sub('median B\u2212A<br>[CI]')}</th><th>Shift %${sub('of A p50<br>[CI]')}</th>`
      : `<th>\u0394 mean${sub('[CI]')}</th><th>\u0394 mean %${sub('[CI]')}</th>`;
  return (
    `<thead><tr><th class="l">Metric</th><th class="l">Verdict</th><th>A p50</th><th>B p50</th>` +
    `<th>\u0394 p50${sub('[CI]')}</th><th>\u0394 p50 %${sub('[CI]')}</th>${diffs}<th>p${sub('Holm')}</th>` +
    `<th>n</th></tr></thead>`
  );
}

function renderVerdictTable(data: ReportData, c: TargetComparison, index: number): string {
  const excluded = Object.entries(c.pairs.excluded)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `<span class="kv"><span class="text">${esc(shownText(reason))}</span>: ${count(n)}</span>`)
    .join(' ');
  const tests = [...new Set(c.metrics.map((m) => TEST_NAMES[m.test] ?? m.test))].join(', ');
  return (
    `<div class="comparison" data-comparison="${index}">
<h3>${swatch(colorOf(data, c.candidate))}<span class="name">${esc(c.candidate)}</span> <span class="muted">(B) vs` +
    `</span> ${swatch(colorOf(data, c.baseline))}<span class="name">${esc(c.baseline)}</span> <span class="muted">(A), ${esc(c.mode)}` +
    `</span></h3>
<div class="table-wrap"><table class="verdicts" data-baseline="${esc(c.baseline)}" data-candidate="${esc(c.candidate)}">
${header(c)}
<tbody>
${c.metrics.map(metricRow).join('\n')}
${errorRows(c)}
</tbody></table></div>
<p ` +
    `class="pairs">${compared(c)}${excluded ? `. Excluded: ${excluded}` : '. None excluded.'}` +
    `${tests ? ` <span class="muted">Metric tests: ${esc(tests)}, two-sided.</span>` : ''}</p>
</div>`
  );
}

/**
 * What the verdicts are over. Unpaired, `pairs.used` counts both sides' succeeded requests
 * together: each side's own count is what was compared (300 and 300, not 600).
 */
function compared(c: TargetComparison): string {
  if (c.mode === 'paired') return `Pairs used: <b>${count(c.pairs.used)}</b>`;
  const succeeded = (s: { fired: number; failed: number }) => s.fired - s.failed;
  return (
    `Requests compared: <b>${count(succeeded(c.errors.candidate))}</b> of ` +
    `<span class="text">${esc(c.candidate)}</span> and <b>${count(succeeded(c.errors.baseline))}</b> of ` +
    `<span class="text">${esc(c.baseline)}</span>`
  );
}

function renderAgreement(data: ReportData, doc: ComparisonDocument): string {
  if (doc.output_length_agreement.length === 0) return '';
  const rows = doc.output_length_agreement
    .map(
      (a) =>
        `<tr data-target="${esc(a.target)}"><td class="l">${swatch(colorOf(data, a.target))}` +
        `<span class="text">${esc(a.target)}</span></td><td>${count(a.compared)}</td>` +
        `<td>${rate(a.exact_match_rate)}</td><td>${signed(a.difference.mean)}</td>` +
        `<td>${signed(a.difference.p50)}</td><td>${signed(a.difference.p90)}</td>` +
        `<td>${a.mean_abs_relative_pct === null ? '\u2013' : `${num(a.mean_abs_relative_pct)} %`}</td></tr>`,
    )
    .join('\n');
  return (
    `<h3>Output length against the capture</h3>
<div class="table-wrap"><table class="agreement">
<thead><tr><th class="l">Target</th><th>Compared</th><th>Exact match</th><th>Mean \u0394 (tokens)</th><th>p50 \u0394</th>` +
    `<th>p90 \u0394</th><th>Mean |\u0394| / captured</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>
<p class="muted small">Replayed \u2212 captured output tokens, over succeeded requests whose capture had a token count.</p>`
  );
}

/** The verdicts section: a table per comparison, the method, the output lengths against the capture. */
export function renderComparison(data: ReportData, doc: ComparisonDocument): string {
  const comps = comparisonsOf(doc);
  const m = doc.method;
  const method =
    `<p class="method"><b>Method.</b> ${esc(m.interval)} intervals, ${count(m.resamples)} resamples (seed ${esc(m.seed)}), ` +
    `${esc(num(m.confidence * 100))} % confidence.
Tests two-sided at \u03b1 = ${esc(num(m.alpha))} after ${m.correction === 'holm' ? "Holm's" : esc(m.correction)} correction ` +
    `across the metrics of each comparison.
Smallest effect called better or worse: ${esc(num(m.min_effect * 100))} %. Differences are candidate \u2212 baseline (B \u2212 ` +
    `A); verdicts are the candidate's.</p>`;
  return `<section id="verdicts">
<h2>Verdicts</h2>
${comps.map((c, i) => renderVerdictTable(data, c, i)).join('\n')}
${method}
${renderAgreement(data, doc)}
</section>`;
}
