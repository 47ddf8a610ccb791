/**
 * report.html's capacity section, and a capacity search's report.html made of it: what each
 * target sustained and why the search stopped, the objectives, a chart per objective against
 * the factor (goodput, error rate, each SLO metric's p50 and p99; browser/report-capacity.ts
 * draws them with the objective and each target's sustained factor marked), and every step
 * with a link to its own report (each step is a replay run with a report.html of its own).
 * The page is report.html's shell and script (page.ts, REPORT_PAGE_SCRIPT) with this section
 * as its only one.
 */
import { capacitySummaryLine, factorText, shareText, sustainedText } from '../capacity/document';
import type { CapacityDocument, CapacityStep, TargetCapacity } from '../capacity/types';
import { METRIC_BY_TAG } from '../metrics/registry';
import { count, escapeHtml as esc, num, rate, swatch } from './format';
import { renderPage, type ChartAssets } from './page';
import { REPORT_PAGE_SCRIPT } from './page-scripts.generated';
import { colorOf } from './shown';
import type { ReportData } from './types';

/** What the page calls a metric the search judged by: its AIPerf header and unit. */
export function capacityMetricLabel(tag: string): { name: string; unit: string } {
  const spec = METRIC_BY_TAG.get(tag);
  return { name: spec?.header ?? tag, unit: spec?.unit ?? '' };
}

const OUTCOME_LABELS: Record<CapacityStep['outcome'], string> = {
  met: 'met',
  objectives: 'missed goodput',
  errors: 'too many errors',
  client: 'client-limited',
  broken: 'no request succeeded',
  empty: 'no request',
};

function objectivesText(doc: CapacityDocument): string {
  const slos = Object.entries(doc.objectives.goodput)
    .map(([tag, v]) => {
      const { name, unit } = capacityMetricLabel(tag);
      return `${esc(name)} ${tag === 'output_token_throughput_per_user' ? '\u2265' : '\u2264'} ${esc(num(v))} ${esc(unit)}`;
    })
    .join(' and ');
  const o = doc.objectives;
  const s = doc.search;
  return (
    `<p class="method"><b>Objectives.</b> Goodput \u2265 ${esc(shareText(o.min_goodput))} of the requests (a request is good when it ` +
    `succeeded with ${slos}); error rate &lt; ${esc(shareText(o.max_error_rate))}; the replayer on time (p90 of wire lag \u2264 ` +
    `${esc(num(o.max_client_lag_ms))} ms).
<b>Search.</b> ${count(doc.window.captured_requests)} captured requests ` +
    `(` +
    (doc.window.capture_window
      ? `captured ${esc(doc.window.capture_window.start)} to ${esc(doc.window.capture_window.end)}`
      : `${esc(num(doc.window.start_offset_ms / 1000))}\u2013${esc(num(doc.window.end_offset_ms / 1000))} s of the capture`) +
    `) replayed at each factor: from ${esc(factorText(s.start_factor))}, \u00d7${esc(num(s.growth))} while met, then bisection to ` +
    `${esc(num(s.resolution))}, at most ${esc(factorText(s.max_factor))}; ${esc(num(s.cooldown_ms / 1000))} s of cool-down between ` +
    `steps, each target warmed up first with ${count(s.warm_up_requests)} requests (not judged); targets ` +
    `${s.together ? 'together (sharing each step they both want)' : 'one at a time'}.</p>`
  );
}

function summaryTable(data: ReportData, doc: CapacityDocument): string {
  const rows = doc.targets
    .map(
      (
        t,
      ) => `<tr data-target="${esc(t.name)}" data-sustained="${t.sustained_factor ?? ''}" data-limited-by="${esc(t.limited_by)}">
<td class="l">${swatch(colorOf(data, t.name))}${esc(t.name)}</td>
<td><b>${esc(sustainedText(t))}</b></td>
<td class="l">${esc(t.limited_by)}</td>
<td>${count(t.steps.length)}</td>
<td class="why">${esc(t.note)}</td>
</tr>`,
    )
    .join('\n');
  return (
    `<div class="table-wrap"><table class="capacity">
<thead><tr><th class="l">Target</th><th>Sustained</th><th class="l">Limited by</th><th>Steps</th>` +
    `<th class="l">What it means</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>`
  );
}

function chart(metric: string, title: string, caption: string): string {
  return (
    `<figure class="fig"><figcaption><b>${esc(title)}</b> ${caption}</figcaption>` +
    `<div class="chart" data-chart="capacity" data-metric="${esc(metric)}"></div></figure>`
  );
}

function charts(doc: CapacityDocument): string {
  const marks = 'dashed: the objective; dotted: each target\u2019s sustained factor.';
  const figures = [
    chart('goodput', 'Goodput against the factor', `share of each step\u2019s requests that met every SLO; ${marks}`),
    chart('error_rate', 'Error rate against the factor', `share of each step\u2019s requests that failed; ${marks}`),
    ...Object.keys(doc.objectives.goodput).map((tag) => {
      const { name, unit } = capacityMetricLabel(tag);
      return chart(
        tag,
        `${name} against the factor`,
        `${esc(unit)}, p99 (solid) and p50 (thin) over each step\u2019s succeeded requests; ${marks}`,
      );
    }),
  ];
  return `<div class="grid">${figures.join('\n')}</div>`;
}

function stepRows(doc: CapacityDocument, t: TargetCapacity): string {
  const tags = Object.keys(doc.objectives.goodput);
  return t.steps
    .map((s) => {
      const metrics = tags
        .map((tag) => `<td>${num(s.slo_metrics[tag]?.p50)}</td><td>${num(s.slo_metrics[tag]?.p99)}</td>`)
        .join('');
      const sustained = s.factor === t.sustained_factor ? ' class="sustained"' : '';
      return (
        `<tr data-factor="${s.factor}" data-outcome="${esc(s.outcome)}"${sustained}>` +
        `<td>${esc(factorText(s.factor))}</td><td class="l" ` +
        `title="${esc(s.reason)}">${esc(OUTCOME_LABELS[s.outcome] ?? s.outcome)}</td>` +
        `<td>${count(s.requests)}</td><td>${rate(s.goodput)}</td><td>${rate(s.error_rate)}</td>${metrics}` +
        `<td>${num(s.client.wire_lag_p90_ms ?? s.client.schedule_lag_p90_ms)}</td><td class="l">` +
        `<a href="${esc(s.results)}report.html">${esc(s.run_id)}</a></td></tr>`
      );
    })
    .join('\n');
}

function stepTables(data: ReportData, doc: CapacityDocument): string {
  const tags = Object.keys(doc.objectives.goodput);
  const head = tags
    .map(
      (tag) =>
        `<th>${esc(capacityMetricLabel(tag).name)}<br><span class="ci">p50</span></th>` +
        `<th>${esc(capacityMetricLabel(tag).name)}<br><span class="ci">p99</span></th>`,
    )
    .join('');
  return doc.targets
    .map(
      (t) =>
        `<h3>${swatch(colorOf(data, t.name))}<span class="name">${esc(t.name)}</span> <span class="muted">step by step</span></h3>
<div class="table-wrap"><table class="capacity-steps" data-target="${esc(t.name)}">
<thead><tr><th>Factor</th><th class="l">Outcome</th><th>Requests</th><th>Goodput</th><th>Error rate</th>${head}<th>Wire lag p90` +
        `<br><span class="ci">ms</span></th><th class="l">Results</th></tr></thead>
<tbody>
${stepRows(doc, t)}
</tbody></table></div>`,
    )
    .join('\n');
}

/** The section, or '' for a report without a capacity search. */
export function renderCapacitySection(data: ReportData): string {
  const doc = data.capacity;
  if (!doc) return '';
  return (
    `<section id="capacity">
<h2>Capacity</h2>
<p class="capacity-summary"><b>${esc(capacitySummaryLine(doc))}.</b></p>
${summaryTable(data, doc)}
${objectivesText(doc)}
${charts(doc)}
${stepTables(data, doc)}
<p class="muted small">Each step is a full replay with its own results (AIPerf\u2019s files, its report): follow the links. ` +
    `Goodput here is a share of the step\u2019s requests; each step\u2019s profile_export_aiperf.json gives AIPerf\u2019s goodput in ` +
    `requests per second.</p>
</section>`
  );
}

/** A capacity search's report.html: the capacity section, drawn by report.html's script. Pure: no I/O. */
export function renderCapacityReportHtml(
  args: { title: string; capacity: CapacityDocument },
  assets: ChartAssets,
): string {
  const { capacity } = args;
  const data: ReportData = {
    title: args.title,
    runId: capacity.run_id,
    generatedAt: capacity.generated_at,
    targets: [],
    comparison: null,
    capacity,
  };
  const names = capacity.targets
    .map((t) => `<span class="kv">${swatch(colorOf(data, t.name))}${esc(t.name)}</span>`)
    .join(' ');
  const body = `<header>
<h1>${esc(data.title)}</h1>
<div class="meta">Run <code>${esc(data.runId)}</code> \u00b7 generated ${esc(data.generatedAt)} \u00b7 capacity search of ${names}</div>
</header>
${renderCapacitySection(data)}
<footer>Self-contained page: it loads nothing from the network. Charts drawn with uPlot (MIT).</footer>`;
  return renderPage(
    { title: `${data.title} \u2013 ${data.runId}`, body, data, dataId: 'report-data', script: REPORT_PAGE_SCRIPT },
    assets,
  );
}
