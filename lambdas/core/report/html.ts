/**
 * report.html: one self-contained page a person reads. Tables are rendered here (every string
 * from the data escaped); charts are drawn in the page by the inlined chart library from the
 * data, embedded as JSON. The page loads nothing: the library's JS and CSS come in as text, a
 * Content-Security-Policy allows no fetch of any kind and only this page's own two scripts.
 */
import { createHash } from 'node:crypto';
import {
  COMPARED_METRICS,
  type ComparedMetricTag,
  type ComparisonDocument,
  type Interval,
  type MetricComparison,
  type TargetComparison,
  type Verdict,
} from '../compare/types';
import type { ReportData, ReportTarget } from './types';

export interface ChartAssets {
  /** The chart library (uPlot's IIFE build), defining a global `uPlot`. */
  chartJs: string;
  /** The chart library's stylesheet. */
  chartCss: string;
}

/** Target colours, by the target's position in `ReportData.targets` (the baseline first). */
export const SERIES_COLORS = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#db2777', '#0891b2', '#a16207', '#4b5563'] as const;
/** Difference charts: the median's and the mean's interval bands. */
const P50_BAND_COLOR = '#7c3aed';
const MEAN_BAND_COLOR = '#0d9488';

export const METRIC_NAMES: Record<ComparedMetricTag, string> = {
  request_latency: 'Request latency',
  time_to_first_token: 'Time to first token',
  inter_token_latency: 'Inter-token latency',
  time_to_second_token: 'Time to second token',
  output_sequence_length: 'Output sequence length',
  output_token_throughput_per_user: 'Output token throughput per user',
};

export const VERDICT_LABELS: Record<Verdict, string> = {
  worse: 'worse',
  better: 'better',
  no_difference: 'no difference',
  inconclusive: 'inconclusive',
  changed: 'changed',
};

const TEST_NAMES: Record<string, string> = {
  wilcoxon_signed_rank: 'Wilcoxon signed-rank',
  mann_whitney_u: 'Mann-Whitney U',
  mcnemar_exact: "McNemar's exact",
  fisher_exact: "Fisher's exact",
};

// ---------------------------------------------------------------------------------------------
// Escaping and formatting

/** Text and attribute values: every string that comes from the data goes through here. */
export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON that cannot end its `<script>` element nor open a comment inside it. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A library's source inside `<script>`/`<style>`: its text may not close the element. */
function rawText(source: string, tag: 'script' | 'style'): string {
  const closing = new RegExp(`</(${tag})`, 'gi');
  return source.replace(closing, '<\\/$1').replace(/<!--/g, '<\\!--');
}

const esc = escapeHtml;
const MINUS = '\u2212';

export function num(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '\u2013';
  const a = Math.abs(x);
  let s: string;
  if (Number.isInteger(x)) s = x.toLocaleString('en-US');
  else if (a >= 1000) s = Math.round(x).toLocaleString('en-US');
  else if (a >= 100) s = x.toFixed(1);
  else if (a >= 1) s = x.toFixed(2);
  else s = String(Number(x.toPrecision(3)));
  return s.replace(/^-/, MINUS);
}

export const count = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '\u2013');
export const signed = (x: number | null | undefined) => (x !== null && x !== undefined && x > 0 ? `+${num(x)}` : num(x));
const withUnit = (s: string, unit: string) => (s === '\u2013' || !unit ? s : unit === '%' ? `${s} %` : `${s} ${unit}`);

/** "estimate unit [low, high]"; `stacked` puts the interval on its own line (table cells). */
export function interval(iv: Interval | undefined, unit: string, opts: { scale?: number; stacked?: boolean } = {}): string {
  if (!iv || iv.estimate === null || !Number.isFinite(iv.estimate)) return '\u2013';
  const scale = opts.scale ?? 1;
  const s = (x: number | null) => signed(x === null ? null : x * scale);
  const ci =
    iv.ci_low === null || iv.ci_high === null
      ? ''
      : `${opts.stacked ? '<br>' : ' '}<span class="ci">[${s(iv.ci_low)}, ${s(iv.ci_high)}]</span>`;
  return `${esc(withUnit(s(iv.estimate), unit))}${ci}`;
}

function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return '\u2013';
  if (p < 0.0001) return '&lt; 0.0001';
  return esc(String(Number(p.toPrecision(2))));
}

function rate(r: number | null): string {
  return r === null || !Number.isFinite(r) ? '\u2013' : `${num(r * 100)} %`;
}

export function badge(verdict: Verdict, reason?: string): string {
  const known = Object.hasOwn(VERDICT_LABELS, verdict);
  const cls = known ? `v-${verdict}` : 'v-unknown';
  const label = known ? VERDICT_LABELS[verdict] : String(verdict);
  const title = reason ? ` title="${esc(reason)}"` : '';
  return `<span class="badge ${esc(cls)}" data-verdict="${esc(verdict)}"${title}>${esc(label)}</span>`;
}

export function metricInfo(tag: ComparedMetricTag): { name: string; unit: string } {
  const m = COMPARED_METRICS.find((x) => x.tag === tag);
  return { name: METRIC_NAMES[tag] ?? tag, unit: m?.unit ?? '' };
}

// ---------------------------------------------------------------------------------------------
// What the page shows (the drawing script in the page follows the same rules)

/** The comparisons shown: every target against the first, or the top-level one alone. */
function comparisonsOf(doc: ComparisonDocument | null): TargetComparison[] {
  if (!doc) return [];
  return doc.comparisons.length > 0 ? doc.comparisons : [doc];
}

const hasValues = (a: readonly (number | null)[] | null | undefined) => !!a && a.some((v) => v !== null && Number.isFinite(v));

function colorOf(data: ReportData, name: string): string {
  const i = data.targets.findIndex((t) => t.summary.name === name);
  return SERIES_COLORS[(i < 0 ? data.targets.length : i) % SERIES_COLORS.length] as string;
}

function metricOf(c: TargetComparison, tag: ComparedMetricTag): MetricComparison | undefined {
  return c.metrics.find((m) => m.tag === tag);
}

/** Targets with an ECDF for `tag`: the comparison's distributions when comparing, else the targets' quantiles. */
function ecdfTargets(data: ReportData, tag: ComparedMetricTag): string[] {
  const comps = comparisonsOf(data.comparison);
  const names: string[] = [];
  const add = (name: string, q: readonly number[] | undefined) => {
    if (!names.includes(name) && hasValues(q)) names.push(name);
  };
  if (comps.length > 0) {
    for (const c of comps) {
      const m = metricOf(c, tag);
      if (m) {
        add(c.baseline, m.distribution.baseline);
        add(c.candidate, m.distribution.candidate);
      }
    }
  } else {
    for (const t of data.targets) add(t.summary.name, t.quantiles[tag]);
  }
  return names;
}

/** The metrics with a section: the compared ones when comparing, else those any target carries. */
function shownMetrics(data: ReportData): ComparedMetricTag[] {
  const comps = comparisonsOf(data.comparison);
  return COMPARED_METRICS.map((m) => m.tag).filter((tag) =>
    comps.length > 0
      ? comps.some((c) => metricOf(c, tag))
      : data.targets.some((t) => hasValues(t.quantiles[tag]) || hasValues(t.series.metrics[tag])),
  );
}

// ---------------------------------------------------------------------------------------------
// Sections

export function swatch(color: string): string {
  return `<span class="swatch" style="background:${color}"></span>`;
}

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
  if (ecdfTargets(data, tag).length > 0) {
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

// ---------------------------------------------------------------------------------------------
// The page

const PAGE_CSS = `
:root { color-scheme: light; --fg: #1f2937; --muted: #6b7280; --line: #e5e7eb; }
* { box-sizing: border-box; }
body { margin: 0; background: #f3f4f6; color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1400px; margin: 0 auto; padding: 20px 24px 48px; }
header h1 { font-size: 22px; margin: 0 0 4px; overflow-wrap: anywhere; }
header .meta { color: var(--muted); }
header .meta code { color: var(--fg); }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px 18px; margin: 16px 0; }
h2 { font-size: 17px; margin: 0 0 10px; }
h3 { font-size: 15px; margin: 18px 0 8px; overflow-wrap: anywhere; }
section > h3:first-of-type, .comparison:first-of-type h3, .metric:first-of-type h3 { margin-top: 4px; }
.muted { color: var(--muted); }
.small { font-size: 12px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: right; vertical-align: top; }
th { font-weight: 600; background: #f9fafb; white-space: nowrap; }
td { white-space: nowrap; }
.l { text-align: left; }
td.l { overflow-wrap: break-word; white-space: normal; }
.ci { color: var(--muted); font-size: 12px; }
.why { color: var(--muted); font-size: 12px; text-align: left; white-space: normal; min-width: 130px; max-width: 250px; }
.metric-name { min-width: 120px; }
.unit { color: var(--muted); font-size: 12px; }
td.c { text-align: center; }
.error-row td { background: #fcfcfd; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; white-space: nowrap; }
.v-worse { background: #dc2626; }
.v-better { background: #16a34a; }
.v-no_difference { background: #6b7280; }
.v-inconclusive { background: #f59e0b; color: #1f2937; }
.v-changed { background: #2563eb; }
.v-unknown { background: #e5e7eb; color: #1f2937; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: baseline; }
.kv { display: inline-block; margin-right: 10px; white-space: nowrap; }
.pairs, .method { margin: 8px 0 0; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 14px 20px; }
.grid .wide { grid-column: 1 / -1; }
figure { margin: 0; min-width: 0; }
figcaption { font-size: 13px; color: var(--muted); margin-bottom: 4px; }
figcaption b { color: var(--fg); }
.note p { margin: 4px 0; }
.chart { min-height: 120px; }
.metric + .metric { border-top: 1px solid var(--line); margin-top: 18px; }
.barcell { text-align: left; min-width: 180px; }
.track { display: inline-block; width: 160px; height: 10px; background: #f3f4f6; border-radius: 2px; vertical-align: middle; }
.bar { display: block; height: 10px; border-radius: 2px; }
.barnum { margin-left: 6px; }
footer { color: var(--muted); font-size: 12px; margin-top: 20px; }
.uplot { font-family: inherit; }
.u-legend { font-size: 12px; }
.chart-error { color: #b91c1c; }
`;

/** Both page scripts' numbers: whether a value is one, and how a chart's legend and axes show it. */
export const NUMBERS_JS = String.raw`function isNum(v) { return typeof v === 'number' && isFinite(v); }
function fmt(v) {
  if (!isNum(v)) return '--';
  var a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  if (a >= 100) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return String(Number(v.toPrecision(3)));
}
`;

/**
 * The tail of every page script (report.html's and a schedule's trend page's), inlined into
 * each; renderPage hashes the whole script text for the CSP. It needs `DRAW` (chart kind ->
 * function(el) returning the uPlot instance) defined before it; it draws every
 * `.chart[data-chart]`, writes a chart it cannot draw's reason into the chart (the page stays
 * readable), redraws on resize (debounced to a frame) and sets data-charts-drawn when done
 * (what the browser tests wait for). Without the chart library (a page rendered with no
 * assets) each chart says so, and the console stays quiet: that is not a fault of the page.
 */
export const DRAW_CHARTS_JS = String.raw`var charts = [];
Array.prototype.forEach.call(document.querySelectorAll('.chart[data-chart]'), function (el) {
  try {
    var draw = DRAW[el.dataset.chart];
    if (!draw) throw new Error('unknown chart ' + el.dataset.chart);
    if (typeof uPlot === 'undefined') throw new Error('the chart library is not in this page');
    charts.push({ el: el, u: draw(el) });
  } catch (err) {
    var p = document.createElement('p');
    p.className = 'chart-error';
    p.textContent = 'Chart not drawn: ' + (err && err.message);
    el.appendChild(p);
    if (typeof uPlot !== 'undefined') console.error(err);
  }
});

var pending = 0;
window.addEventListener('resize', function () {
  cancelAnimationFrame(pending);
  pending = requestAnimationFrame(function () {
    charts.forEach(function (c) { c.u.setSize({ width: Math.max(280, c.el.clientWidth), height: c.u.height }); });
  });
});
document.documentElement.setAttribute('data-charts-drawn', String(charts.length));
`;

/**
 * Draws every `.chart` from the embedded data. Sets text only through textContent (uPlot does
 * too), so names from the data never become markup.
 */
function pageScript(): string {
  const metricInfoJson = JSON.stringify(Object.fromEntries(COMPARED_METRICS.map((m) => [m.tag, { name: METRIC_NAMES[m.tag], unit: m.unit }])));
  return String.raw`(function () {
'use strict';
var COLORS = ${JSON.stringify(SERIES_COLORS)};
var P50_BAND = ${JSON.stringify(P50_BAND_COLOR)};
var MEAN_BAND = ${JSON.stringify(MEAN_BAND_COLOR)};
var METRICS = ${metricInfoJson};
var data = JSON.parse(document.getElementById('report-data').textContent);
var names = data.targets.map(function (t) { return t.summary.name; });
var doc = data.comparison;
var comps = !doc ? [] : (doc.comparisons && doc.comparisons.length ? doc.comparisons : [doc]);

function colorOf(name) {
  var i = names.indexOf(name);
  return COLORS[(i < 0 ? names.length : i) % COLORS.length];
}
${NUMBERS_JS}function hasValues(a) { return !!a && a.some(isNum); }
function metricOf(c, tag) {
  for (var i = 0; i < c.metrics.length; i++) if (c.metrics[i].tag === tag) return c.metrics[i];
  return null;
}
function alpha(hex, a) {
  var n = parseInt(hex.slice(1), 16);
  return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + a + ')';
}

// F(x) from 101 quantiles (0..100 %), linear between them; the highest rank among ties.
function ecdfAt(q, x) {
  var n = q.length;
  if (x < q[0]) return 0;
  if (x >= q[n - 1]) return 1;
  var lo = 0, hi = n - 1;
  while (hi - lo > 1) { var mid = (lo + hi) >> 1; if (q[mid] <= x) lo = mid; else hi = mid; }
  var span = q[lo + 1] - q[lo];
  var r = lo + (span > 0 ? (x - q[lo]) / span : 0);
  return r / (n - 1);
}
function uniqueSorted(values) {
  var s = values.filter(isNum).sort(function (a, b) { return a - b; });
  return s.filter(function (v, i) { return i === 0 || v !== s[i - 1]; });
}
function ecdfSources(tag) {
  var out = [], seen = {};
  function add(name, q) {
    if (Object.prototype.hasOwnProperty.call(seen, name) || !hasValues(q)) return;
    seen[name] = true;
    out.push({ name: name, q: q.filter(isNum) });
  }
  if (comps.length) {
    comps.forEach(function (c) {
      var m = metricOf(c, tag);
      if (m) { add(c.baseline, m.distribution.baseline); add(c.candidate, m.distribution.candidate); }
    });
  } else {
    data.targets.forEach(function (t) { add(t.summary.name, t.quantiles[tag]); });
  }
  return out;
}

function pctAxis(label) {
  return { label: label, size: 56, values: function (u, ticks) { return ticks.map(function (v) { return Math.round(v * 100) + '%'; }); } };
}
function pctValue(u, v) { return isNum(v) ? (v * 100).toFixed(1) + '%' : '--'; }
function numValue(u, v) { return fmt(v); }
function baseOpts(el, height) {
  return {
    width: Math.max(280, el.clientWidth),
    height: height,
    cursor: { drag: { x: true, y: false } },
    legend: { live: true },
  };
}

function drawEcdf(el) {
  var tag = el.dataset.metric, info = METRICS[tag];
  var src = ecdfSources(tag);
  if (!src.length) throw new Error('no distribution for ' + tag);
  var xs = uniqueSorted([].concat.apply([], src.map(function (s) { return s.q; })));
  var series = [{ label: info.unit, value: numValue }];
  var cols = [xs];
  src.forEach(function (s) {
    cols.push(xs.map(function (x) { return ecdfAt(s.q, x); }));
    series.push({ label: s.name, stroke: colorOf(s.name), width: 2, value: pctValue, points: { show: false } });
  });
  var o = baseOpts(el, 260);
  o.scales = { x: { time: false }, y: { auto: false, range: [0, 1] } };
  o.series = series;
  o.axes = [{ label: info.name + ' (' + info.unit + ')' }, pctAxis('requests \u2264 x')];
  return new uPlot(o, cols, el);
}

function drawDiff(el) {
  var tag = el.dataset.metric, info = METRICS[tag];
  var c = comps[Number(el.dataset.comparison)];
  var m = c && metricOf(c, tag);
  if (!m || !hasValues(m.distribution.difference)) throw new Error('no differences for ' + tag);
  var q = m.distribution.difference.filter(isNum);
  var xs = uniqueSorted(q);
  var ys = xs.map(function (x) { return ecdfAt(q, x); });
  var marks = [
    { iv: m.difference.p50, color: P50_BAND },
    { iv: m.difference.mean, color: MEAN_BAND },
  ].filter(function (k) { return k.iv && isNum(k.iv.estimate); });
  var extra = [0];
  marks.forEach(function (k) { [k.iv.estimate, k.iv.ci_low, k.iv.ci_high].forEach(function (v) { if (isNum(v)) extra.push(v); }); });
  function vline(u, x, color, width, dash) {
    var px = u.valToPos(x, 'x', true), ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = color; ctx.lineWidth = width * uPlot.pxRatio; ctx.setLineDash(dash.map(function (d) { return d * uPlot.pxRatio; }));
    ctx.beginPath(); ctx.moveTo(px, u.bbox.top); ctx.lineTo(px, u.bbox.top + u.bbox.height); ctx.stroke();
    ctx.restore();
  }
  var o = baseOpts(el, 260);
  o.scales = {
    x: {
      time: false,
      range: function (u, min, max) {
        var lo = Math.min.apply(null, extra.concat([min])), hi = Math.max.apply(null, extra.concat([max]));
        var pad = (hi - lo) * 0.04 || Math.abs(hi) * 0.1 || 1;
        return [lo - pad, hi + pad];
      },
    },
    y: { auto: false, range: [0, 1] },
  };
  o.series = [
    { label: 'B \u2212 A (' + info.unit + ')', value: numValue },
    { label: c.candidate + ' \u2212 ' + c.baseline, stroke: colorOf(c.candidate), width: 2, value: pctValue, points: { show: false } },
  ];
  o.axes = [{ label: 'B \u2212 A, ' + info.name.toLowerCase() + ' (' + info.unit + ')' }, pctAxis('pairs \u2264 x')];
  o.hooks = {
    drawAxes: [function (u) {
      var ctx = u.ctx;
      marks.forEach(function (k) {
        if (!isNum(k.iv.ci_low) || !isNum(k.iv.ci_high)) return;
        var x0 = u.valToPos(k.iv.ci_low, 'x', true), x1 = u.valToPos(k.iv.ci_high, 'x', true);
        ctx.save();
        ctx.fillStyle = alpha(k.color, 0.16);
        ctx.fillRect(Math.min(x0, x1), u.bbox.top, Math.max(Math.abs(x1 - x0), uPlot.pxRatio), u.bbox.height);
        ctx.restore();
      });
    }],
    draw: [function (u) {
      vline(u, 0, '#6b7280', 1, [4, 4]);
      marks.forEach(function (k) { vline(u, k.iv.estimate, k.color, 1.5, []); });
    }],
  };
  return new uPlot(o, [xs, ys], el);
}

// Series sharing one x axis without merging points: every point keeps its own x (times may
// repeat), the other series are null there.
function sparseJoin(sources) {
  var pts = [];
  sources.forEach(function (s, k) {
    for (var i = 0; i < s.t.length; i++) if (isNum(s.t[i]) && isNum(s.v[i])) pts.push([s.t[i], k, s.v[i]]);
  });
  pts.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
  var cols = [pts.map(function (p) { return p[0]; })];
  sources.forEach(function (s, k) {
    cols.push(pts.map(function (p) { return p[1] === k ? p[2] : null; }));
  });
  return cols;
}
// Many points: faint dots plus a bold line of their medians in equal time windows, so the
// trend reads through the noise; few points: a line through them.
var SMOOTH_ABOVE = 150, WINDOWS = 120;
function medianOf(a) {
  a.sort(function (x, y) { return x - y; });
  var h = (a.length - 1) / 2, lo = Math.floor(h);
  return a[lo] + (a[Math.ceil(h)] - a[lo]) * (h - lo);
}
function windowMedians(s, tMin, tMax) {
  var w = (tMax - tMin) / WINDOWS, bins = [], t = [], v = [];
  for (var i = 0; i < s.t.length; i++) {
    if (!isNum(s.t[i]) || !isNum(s.v[i])) continue;
    var k = w > 0 ? Math.min(WINDOWS - 1, Math.floor((s.t[i] - tMin) / w)) : 0;
    (bins[k] = bins[k] || []).push(s.v[i]);
  }
  for (var j = 0; j < WINDOWS; j++) if (bins[j]) { t.push(w > 0 ? tMin + (j + 0.5) * w : tMin); v.push(medianOf(bins[j])); }
  return { t: t, v: v };
}
function drawTimeSeries(el, sources, unit) {
  if (!sources.length) throw new Error('no series');
  var tMin = Infinity, tMax = -Infinity;
  sources.forEach(function (s) { s.t.forEach(function (t) { if (isNum(t)) { tMin = Math.min(tMin, t); tMax = Math.max(tMax, t); } }); });
  var dots = [], lines = [], pairs = [], partner = {};
  sources.forEach(function (s) {
    var color = colorOf(s.name);
    if (s.v.filter(isNum).length > SMOOTH_ABOVE) {
      pairs.push([dots.length, lines.length]);
      dots.push({ data: s, opts: { label: s.name + ' (points)', stroke: color, paths: function () { return null; },
        points: { show: true, space: 0, size: 3, width: 0, fill: alpha(color, 0.25) } } });
      lines.push({ data: windowMedians(s, tMin, tMax), opts: { label: s.name, stroke: color, width: 2, spanGaps: true, points: { show: false } } });
    } else {
      lines.push({ data: s, opts: { label: s.name, stroke: color, width: 1.5, spanGaps: true, points: { show: true, size: 4, fill: color } } });
    }
  });
  // Dots are drawn first (under the lines); hiding a line in the legend hides its dots too.
  var all = dots.concat(lines);
  pairs.forEach(function (p) { partner[1 + dots.length + p[1]] = 1 + p[0]; });
  var syncing = false;
  var o = baseOpts(el, 260);
  o.legend = { live: false };
  o.scales = { x: { time: false } };
  o.series = [{ label: 's' }].concat(all.map(function (x) { return x.opts; }));
  o.axes = [{ label: 'seconds since schedule start' }, { label: unit, size: 64 }];
  o.hooks = {
    setSeries: [function (u, i, opts) {
      if (syncing || i == null || partner[i] == null || !opts || opts.show == null) return;
      syncing = true;
      u.setSeries(partner[i], { show: opts.show });
      syncing = false;
    }],
  };
  var u = new uPlot(o, sparseJoin(all.map(function (x) { return x.data; })), el);
  // The legend lists the x series only when live.
  var rows = u.root.querySelectorAll('.u-legend .u-series');
  var off = rows.length === u.series.length ? 0 : -1;
  for (var k = 1; k <= dots.length; k++) if (rows[k + off]) rows[k + off].style.display = 'none';
  return u;
}
function drawTime(el) {
  var tag = el.dataset.metric, info = METRICS[tag];
  var sources = data.targets.filter(function (t) { return hasValues(t.series.metrics[tag]); }).map(function (t) {
    return { name: t.summary.name, t: t.series.t, v: t.series.metrics[tag], bucketed: t.series.bucketed };
  });
  return drawTimeSeries(el, sources, info.unit);
}
function drawLag(el) {
  var sources = data.targets.filter(function (t) { return hasValues(t.series.scheduleLagMs); }).map(function (t) {
    return { name: t.summary.name, t: t.series.t, v: t.series.scheduleLagMs, bucketed: t.series.bucketed };
  });
  return drawTimeSeries(el, sources, 'ms');
}

var DRAW = { ecdf: drawEcdf, diff: drawDiff, time: drawTime, lag: drawLag };
${DRAW_CHARTS_JS}})();
`;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * What one self-contained page is made of. report.html and a schedule's trend page share
 * this shell: the same CSP (no fetch of any kind; only the inlined library and the page's
 * own script may run, by hash), the same styles, the data embedded as JSON.
 */
export interface PageParts {
  /** The <title>. */
  title: string;
  /** The page's markup inside <main>, every data string already escaped. */
  body: string;
  /** Embedded as JSON in `<script type="application/json" id="${'${dataId}'}">` for the page script. */
  data: unknown;
  dataId: string;
  /** The page's own script (plain ES5, no imports). */
  script: string;
  /** Styles added after the shared ones. */
  css?: string;
}

/**
 * The page around `parts`. With `assets` null the chart library is left out (its script hash
 * too): the tables read the same, and the page script says the charts are not drawn.
 */
export function renderPage(parts: PageParts, assets: ChartAssets | null): string {
  const libJs = assets ? rawText(assets.chartJs, 'script') : null;
  const libCss = assets ? rawText(assets.chartCss, 'style') : null;
  const script = rawText(parts.script, 'script');
  const csp = [
    "default-src 'none'",
    `script-src ${libJs === null ? '' : `${sha256(libJs)} `}${sha256(script)}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(parts.title)}</title>
<link rel="icon" href="data:,">
${libCss === null ? '' : `<style>${libCss}</style>\n`}<style>${PAGE_CSS}${parts.css ? rawText(parts.css, 'style') : ''}</style>
</head>
<body>
<main>
${parts.body}
</main>
<script type="application/json" id="${esc(parts.dataId)}">${jsonForScript(parts.data)}</script>
${libJs === null ? '' : `<script>${libJs}</script>\n`}<script>${script}</script>
</body>
</html>
`;
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
  return renderPage({ title: `${data.title} \u2013 ${data.runId}`, body, data, dataId: 'report-data', script: pageScript() }, assets);
}
