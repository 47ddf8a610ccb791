/**
 * report.html: one self-contained page a person reads. Tables are rendered here (every string
 * from the data escaped); charts are drawn in the page by the inlined chart library from the
 * data, embedded as JSON, by the page's script (browser/report-page.ts, bundled). The shell
 * (CSP, styles, scripts) is page.ts's.
 */
import type { ComparedMetricTag } from '../compare/types';
import { renderErrors, withShownErrors } from './errors-section';
import { count, escapeHtml as esc, interval, metricInfo, num, shownText, swatch } from './format';
import { renderPage, type ChartAssets } from './page';
import { REPORT_PAGE_SCRIPT } from './page-scripts.generated';
import { MEAN_BAND_COLOR, P50_BAND_COLOR } from './palette';
import { colorOf, comparisonsOf, ecdfSources, hasValues, metricOf, shownMetrics } from './shown';
import type { ReportData, ReportTarget } from './types';
import { renderComparison } from './verdicts-section';

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
        .map(
          ([reason, n]) => `<span class="kv"><span class="text">${esc(shownText(reason))}</span>: ${count(n)}</span>`,
        )
        .join(' ');
      const pct = (n: number) =>
        s.scheduled > 0 ? ` <span class="muted">(${num((100 * n) / s.scheduled)} %)</span>` : '';
      return `<tr data-target="${esc(s.name)}">
<td class="l">${swatch(colorOf(data, s.name))}<span class="text">${esc(s.name)}</span></td>
${comparing ? `<td class="l muted">${esc(roleOf(data, s.name))}</td>` : ''}
<td>${count(s.scheduled)}</td>
<td>${count(s.succeeded)}${pct(s.succeeded)}</td>
<td>${count(s.failed)}${pct(s.failed)}</td>
<td>${count(s.dropped)}${pct(s.dropped)}</td>
<td class="l">${reasons || '<span class="muted">\u2013</span>'}</td>
</tr>`;
    })
    .join('\n');
  return (
    `<section id="accounting">
<h2>Requests per target</h2>
<div class="table-wrap"><table class="accounting">
<thead><tr><th class="l">Target</th>${comparing ? '<th class="l">Role</th>' : ''}<th>Scheduled</th><th>Succeeded</th>` +
    `<th>Failed</th><th>Dropped</th><th class="l">Dropped by reason</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>
</section>`
  );
}

function chart(kind: string, attrs: Record<string, string | number>, title: string, caption: string): string {
  const data = Object.entries(attrs)
    .map(([k, v]) => ` data-${k}="${esc(v)}"`)
    .join('');
  return (
    `<figure class="fig"><figcaption><b>${title}</b> ${caption}</figcaption>` +
    `<div class="chart" data-chart="${esc(kind)}"${data}></div></figure>`
  );
}

function timeCaption(targets: readonly ReportTarget[]): string {
  const bucketed = targets.some((t) => t.series.bucketed);
  return (
    `by scheduled time; dots: ${bucketed ? 'medians of short time buckets' : 'one per request'}, line: their ` +
    `median in each 1/120 of the run.`
  );
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
    const estimates =
      `${swatch(P50_BAND_COLOR)}median \u0394 ${interval(m.difference.p50, unit)}, ` +
      `${swatch(MEAN_BAND_COLOR)}mean \u0394 ${interval(m.difference.mean, unit)}`;
    if (hasValues(m.distribution.difference)) {
      figures.push(
        chart(
          'diff',
          { metric: tag, comparison: i },
          `Paired differences, ${esc(c.candidate)} \u2212 ${esc(c.baseline)}`,
          `ECDF of B \u2212 A over the pairs; lines and shaded ` +
            `${esc(num(data.comparison ? data.comparison.method.confidence * 100 : 95))} % CIs: ${estimates}; dashed: zero.`,
        ),
      );
    } else {
      figures.push(
        `<figure class="fig note"><figcaption>` +
          `<b>Differences, ${esc(c.candidate)} \u2212 ${esc(c.baseline)}</b></figcaption>` +
          `<p>No per-pair differences (${esc(c.mode)} comparison): ${estimates}.</p></figure>`,
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

/** The whole page, from the data and the chart library's text. Pure: no I/O. */
export function renderReportHtml(given: ReportData, assets: ChartAssets): string {
  // Error types are the targets' text: cut before they reach the markup or the embedded data.
  const data = withShownErrors(given);
  const targets = data.targets.map((t) => t.summary.name);
  const comparing = data.comparison !== null;
  const head = `<header>
<h1>${esc(data.title)}</h1>
<div class="meta">Run <code>${esc(data.runId)}</code> \u00b7 generated ${esc(data.generatedAt)} \u00b7 ${
    comparing ? 'A/B comparison of' : targets.length === 1 ? 'single target' : 'targets'
  } ${targets.map((n) => `<span class="kv">${swatch(colorOf(data, n))}<span class="text">${esc(n)}</span></span>`).join(' ')}</div>
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
  return renderPage(
    { title: `${data.title} \u2013 ${data.runId}`, body, data, dataId: 'report-data', script: REPORT_PAGE_SCRIPT },
    assets,
  );
}
