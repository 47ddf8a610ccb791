/**
 * report.html: one self-contained page a person reads. Tables are rendered here (every string
 * from the data escaped); charts are drawn in the page by the inlined chart library from the
 * data, embedded as JSON, by the page's script (browser/report-page.ts, bundled). The shell
 * (CSP, styles, scripts) is page.ts's.
 */
import type { ComparedMetricTag, ComparisonDocument, TargetComparison } from '../compare/types';
import { badge, count, escapeHtml as esc, interval, metricInfo, num, pValue, rate, signed, swatch } from './format';
import { TEST_NAMES } from './labels';
import { renderPage, type ChartAssets } from './page';
import { REPORT_PAGE_SCRIPT } from './page-scripts.generated';
import { MEAN_BAND_COLOR, P50_BAND_COLOR } from './palette';
import { colorOf, comparisonsOf, ecdfSources, hasValues, metricOf, shownMetrics } from './shown';
import type { ReportData, ReportTarget } from './types';

function roleOf(data: ReportData, name: string): string {
  const comps = comparisonsOf(data.comparison);
  if (comps.length === 0) return '';
  if (comps.some((c) => c.baseline === name)) return 'baseline (A)';
  if (comps.some((c) => c.candidate === name)) return 'candidate (B)';
  return '';
}

function renderAccounting(data: ReportData): string {
  const comparing = data.comparison !== null;
  const rows = data.targets
    .map((t) => {
      const s = t.summary;
      const reasons = Object.entries(s.droppedByReason)
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1])
        .map(([reason, n]) => `<span class="kv">${esc(reason)}: ${count(n)}</span>`)
        .join(' ');
      const pct = (n: number) => (s.scheduled > 0 ? ` <span class="muted">(${num((100 * n) / s.scheduled)} %)</span>` : '');
      return `<tr data-target="${esc(s.name)}">
<td class="l">${swatch(colorOf(data, s.name))}${esc(s.name)}</td>
${comparing ? `<td class="l muted">${esc(roleOf(data, s.name))}</td>` : ''}
<td>${count(s.scheduled)}</td>
<td>${count(s.succeeded)}${pct(s.succeeded)}</td>
<td>${count(s.failed)}${pct(s.failed)}</td>
<td>${count(s.dropped)}${pct(s.dropped)}</td>
<td class="l">${reasons || '<span class="muted">\u2013</span>'}</td>
</tr>`;
    })
    .join('\n');
  return `<section id="accounting">
<h2>Requests per target</h2>
<div class="table-wrap"><table class="accounting">
<thead><tr><th class="l">Target</th>${comparing ? '<th class="l">Role</th>' : ''}<th>Scheduled</th><th>Succeeded</th><th>Failed</th><th>Dropped</th><th class="l">Dropped by reason</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>
</section>`;
}

function renderVerdictTable(data: ReportData, c: TargetComparison, index: number): string {
  const metricRows = c.metrics
    .map((m) => {
      const { name } = metricInfo(m.tag);
      return `<tr data-metric="${esc(m.tag)}">
<td class="l metric-name">${esc(name)}<div class="unit">${esc(m.unit)}</div></td>
<td class="l">${badge(m.verdict, m.verdict_reason)}</td>
<td>${num(m.baseline.p50)}</td>
<td>${num(m.candidate.p50)}</td>
<td>${interval(m.difference.p50, '', { stacked: true })}</td>
<td>${interval(m.relative_pct.p50, '%', { stacked: true })}</td>
<td>${interval(m.paired_shift?.difference ?? m.difference.mean, '', { stacked: true })}</td>
<td>${interval(m.paired_shift?.relative_pct ?? m.relative_pct.mean, '%', { stacked: true })}</td>
<td>${pValue(m.p_value_adjusted)}</td>
<td>${count(m.n)}</td>
<td class="why">${esc(m.verdict_reason)}</td>
</tr>`;
    })
    .join('\n');
  const e = c.errors;
  const side = (s: { fired: number; failed: number; rate: number | null }) =>
    `${rate(s.rate)}<br><span class="ci">${count(s.failed)} / ${count(s.fired)}</span>`;
  const errorRow = `<tr data-metric="error_rate" class="error-row">
<td class="l metric-name">Error rate<div class="unit">failed / fired</div></td>
<td class="l">${badge(e.verdict)}</td>
<td>${side(e.baseline)}</td>
<td>${side(e.candidate)}</td>
<td colspan="4" class="c">B \u2212 A: ${interval(e.difference, 'pp', { scale: 100 })}</td>
<td>${pValue(e.p_value)}</td>
<td>${count(e.baseline.fired)}</td>
<td class="why">${esc(TEST_NAMES[e.test] ?? e.test)} test, not adjusted.</td>
</tr>`;
  const excluded = Object.entries(c.pairs.excluded)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `<span class="kv">${esc(reason)}: ${count(n)}</span>`)
    .join(' ');
  const tests = [...new Set(c.metrics.map((m) => TEST_NAMES[m.test] ?? m.test))].join(', ');
  return `<div class="comparison" data-comparison="${index}">
<h3>${swatch(colorOf(data, c.candidate))}<span class="name">${esc(c.candidate)}</span> <span class="muted">(B) vs</span> ${swatch(colorOf(data, c.baseline))}<span class="name">${esc(c.baseline)}</span> <span class="muted">(A), ${esc(c.mode)}</span></h3>
<div class="table-wrap"><table class="verdicts" data-baseline="${esc(c.baseline)}" data-candidate="${esc(c.candidate)}">
<thead><tr><th class="l">Metric</th><th class="l">Verdict</th><th>A p50</th><th>B p50</th><th>\u0394 p50<br><span class="ci">[CI]</span></th><th>\u0394 p50 %<br><span class="ci">[CI]</span></th>${c.mode === 'paired' ? '<th>Shift<br><span class="ci">median B\u2212A [CI]</span></th><th>Shift %<br><span class="ci">of A p50 [CI]</span></th>' : '<th>\u0394 mean<br><span class="ci">[CI]</span></th><th>\u0394 mean %<br><span class="ci">[CI]</span></th>'}<th>p<br><span class="ci">Holm</span></th><th>n</th><th class="l">Why</th></tr></thead>
<tbody>
${metricRows}
${errorRow}
</tbody></table></div>
<p class="pairs">${c.mode === 'paired' ? 'Pairs used' : 'Requests compared'}: <b>${count(c.pairs.used)}</b>${excluded ? `. Excluded: ${excluded}` : '. None excluded.'}${tests ? ` <span class="muted">Metric tests: ${esc(tests)}, two-sided.</span>` : ''}</p>
</div>`;
}

function renderComparison(data: ReportData, doc: ComparisonDocument): string {
  const comps = comparisonsOf(doc);
  const m = doc.method;
  const method = `<p class="method"><b>Method.</b> ${esc(m.interval)} intervals, ${count(m.resamples)} resamples (seed ${esc(m.seed)}), ${esc(num(m.confidence * 100))} % confidence.
Tests two-sided at \u03b1 = ${esc(num(m.alpha))} after ${m.correction === 'holm' ? "Holm's" : esc(m.correction)} correction across the metrics of each comparison.
Smallest effect called better or worse: ${esc(num(m.min_effect * 100))} %. Differences are candidate \u2212 baseline (B \u2212 A); verdicts are the candidate's.</p>`;
  const agreement =
    doc.output_length_agreement.length === 0
      ? ''
      : `<h3>Output length against the capture</h3>
<div class="table-wrap"><table class="agreement">
<thead><tr><th class="l">Target</th><th>Compared</th><th>Exact match</th><th>Mean \u0394 (tokens)</th><th>p50 \u0394</th><th>p90 \u0394</th><th>Mean |\u0394| / captured</th></tr></thead>
<tbody>
${doc.output_length_agreement
  .map(
    (a) => `<tr data-target="${esc(a.target)}"><td class="l">${swatch(colorOf(data, a.target))}${esc(a.target)}</td><td>${count(a.compared)}</td><td>${rate(a.exact_match_rate)}</td><td>${signed(a.difference.mean)}</td><td>${signed(a.difference.p50)}</td><td>${signed(a.difference.p90)}</td><td>${a.mean_abs_relative_pct === null ? '\u2013' : `${num(a.mean_abs_relative_pct)} %`}</td></tr>`,
  )
  .join('\n')}
</tbody></table></div>
<p class="muted small">Replayed \u2212 captured output tokens, over succeeded requests whose capture had a token count.</p>`;
  return `<section id="verdicts">
<h2>Verdicts</h2>
${comps.map((c, i) => renderVerdictTable(data, c, i)).join('\n')}
${method}
${agreement}
</section>`;
}

function chart(kind: string, attrs: Record<string, string | number>, title: string, caption: string): string {
  const data = Object.entries(attrs)
    .map(([k, v]) => ` data-${k}="${esc(v)}"`)
    .join('');
  return `<figure class="fig"><figcaption><b>${title}</b> ${caption}</figcaption><div class="chart" data-chart="${esc(kind)}"${data}></div></figure>`;
}

function timeCaption(targets: readonly ReportTarget[]): string {
  const bucketed = targets.some((t) => t.series.bucketed);
  return `by scheduled time; dots: ${bucketed ? 'medians of short time buckets' : 'one per request'}, line: their median in each 1/120 of the run.`;
}

function renderMetric(data: ReportData, tag: ComparedMetricTag): string {
  const { name, unit } = metricInfo(tag);
  const figures: string[] = [];
  if (ecdfSources(data, tag).length > 0) {
    figures.push(chart('ecdf', { metric: tag }, 'Distribution (ECDF)', 'share of requests at or below each value.'));
  }
  comparisonsOf(data.comparison).forEach((c, i) => {
    const m = metricOf(c, tag);
    if (!m) return;
    const estimates = `${swatch(P50_BAND_COLOR)}median \u0394 ${interval(m.difference.p50, unit)}, ${swatch(MEAN_BAND_COLOR)}mean \u0394 ${interval(m.difference.mean, unit)}`;
    if (hasValues(m.distribution.difference)) {
      figures.push(
        chart(
          'diff',
          { metric: tag, comparison: i },
          `Paired differences, ${esc(c.candidate)} \u2212 ${esc(c.baseline)}`,
          `ECDF of B \u2212 A over the pairs; lines and shaded ${esc(num(data.comparison ? data.comparison.method.confidence * 100 : 95))} % CIs: ${estimates}; dashed: zero.`,
        ),
      );
    } else {
      figures.push(
        `<figure class="fig note"><figcaption><b>Differences, ${esc(c.candidate)} \u2212 ${esc(c.baseline)}</b></figcaption><p>No per-pair differences (${esc(c.mode)} comparison): ${estimates}.</p></figure>`,
      );
    }
  });
  const timed = data.targets.filter((t) => hasValues(t.series.metrics[tag]));
  if (timed.length > 0) {
    figures.push(`<div class="wide">${chart('time', { metric: tag }, 'Over replay time', timeCaption(timed))}</div>`);
  }
  const body = figures.length > 0 ? `<div class="grid">${figures.join('\n')}</div>` : '<p class="muted">No values.</p>';
  return `<div class="metric" data-metric="${esc(tag)}"><h3>${esc(name)} <span class="muted">(${esc(unit)})</span></h3>
${body}</div>`;
}

function renderLag(data: ReportData): string {
  const lagged = data.targets.filter((t) => hasValues(t.series.scheduleLagMs));
  const body =
    lagged.length > 0
      ? chart('lag', {}, 'Schedule lag', `actual send \u2212 scheduled send (ms), ${timeCaption(lagged)}`)
      : '<p class="muted">No request was fired.</p>';
  return `<section id="lag">
<h2>Schedule lag</h2>
${body}
</section>`;
}

function renderErrors(data: ReportData): string {
  const types = new Map<string, number>();
  for (const t of data.targets) {
    for (const [type, n] of Object.entries(t.summary.failedByType)) if (n > 0) types.set(type, (types.get(type) ?? 0) + n);
  }
  if (types.size === 0) {
    return `<section id="errors">
<h2>Errors by type</h2>
<p class="muted">No request failed.</p>
</section>`;
  }
  const order = [...types.entries()].sort((a, b) => b[1] - a[1]).map(([type]) => type);
  let max = 0;
  for (const t of data.targets) for (const type of order) max = Math.max(max, t.summary.failedByType[type] ?? 0);
  const cell = (t: ReportTarget, type: string) => {
    const n = t.summary.failedByType[type] ?? 0;
    const width = max > 0 ? Math.max(n > 0 ? 1 : 0, Math.round((100 * n) / max)) : 0;
    return `<td class="barcell"><span class="track"><span class="bar" style="width:${width}%;background:${colorOf(data, t.summary.name)}"></span></span><span class="barnum">${count(n)}</span></td>`;
  };
  const rows = order
    .map((type) => `<tr data-error-type="${esc(type)}"><td class="l">${esc(type)}</td>${data.targets.map((t) => cell(t, type)).join('')}</tr>`)
    .join('\n');
  return `<section id="errors">
<h2>Errors by type</h2>
<div class="table-wrap"><table class="errors">
<thead><tr><th class="l">Error type</th>${data.targets.map((t) => `<th class="l">${swatch(colorOf(data, t.summary.name))}${esc(t.summary.name)}</th>`).join('')}</tr></thead>
<tbody>
${rows}
</tbody></table></div>
</section>`;
}

/** The whole page, from the data and the chart library's text. Pure: no I/O. */
export function renderReportHtml(data: ReportData, assets: ChartAssets): string {
  const targets = data.targets.map((t) => t.summary.name);
  const comparing = data.comparison !== null;
  const head = `<header>
<h1>${esc(data.title)}</h1>
<div class="meta">Run <code>${esc(data.runId)}</code> \u00b7 generated ${esc(data.generatedAt)} \u00b7 ${
    comparing ? 'A/B comparison of' : targets.length === 1 ? 'single target' : 'targets'
  } ${targets.map((n) => `<span class="kv">${swatch(colorOf(data, n))}${esc(n)}</span>`).join(' ')}</div>
</header>`;

  const metrics = shownMetrics(data);
  const metricSection = `<section id="metrics">
<h2>Metrics</h2>
${metrics.length > 0 ? metrics.map((tag) => renderMetric(data, tag)).join('\n') : '<p class="muted">No metric values.</p>'}
<p class="muted small">Charts: drag to zoom, double-click to reset; click a legend entry to hide a series.</p>
</section>`;

  const body = `${head}
${renderAccounting(data)}
${data.comparison ? renderComparison(data, data.comparison) : ''}
${metricSection}
${renderLag(data)}
${renderErrors(data)}
<footer>Self-contained page: it loads nothing from the network. Charts drawn with uPlot (MIT).</footer>`;
  return renderPage({ title: `${data.title} \u2013 ${data.runId}`, body, data, dataId: 'report-data', script: REPORT_PAGE_SCRIPT }, assets);
}
