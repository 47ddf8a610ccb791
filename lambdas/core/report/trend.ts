/**
 * schedules/<name>/index.html: a schedule's trend page, one self-contained page over its
 * history (one line per scheduled run, lambdas/core/scheduled-runs/history.ts). Same shell as
 * report.html (renderPage: CSP by hash, no network, uPlot inlined; the charts drawn by
 * browser/trend-page.ts): per compared metric, each target's p50 and p90 over the runs (x =
 * scheduled time, one point per run; an empty run is a gap), every run's verdict as a marker
 * above the lines (worse: a red triangle), and a table of the runs with their counts,
 * verdicts, reasons and a link to each run's report.html.
 */
import { COMPARED_METRICS, type ComparedMetricTag, type Verdict } from '../compare/types';
import { badge, count, escapeHtml as esc, metricInfo, shownText, signed, swatch } from './format';
import { VERDICT_LABELS } from './labels';
import { renderPage, type ChartAssets } from './page';
import { TREND_PAGE_SCRIPT } from './page-scripts.generated';
import { SERIES_COLORS, VERDICT_COLORS } from './palette';
import { decimalsOf } from './precision';

/** What the page needs of a history line (the line's own schema is history.ts's). */
export interface TrendRun {
  run_id: string;
  scheduled_time: string;
  window: { start: string; end: string };
  status: 'complete' | 'deadline' | 'empty';
  reason?: string | undefined;
  report: string | null;
  targets: Record<
    string,
    {
      requests: number;
      succeeded: number;
      errors: number;
      dropped: number;
      metrics: Partial<
        Record<string, { p50: number | null; p90: number | null; p99: number | null; mean: number | null }>
      >;
    }
  >;
  comparisons: {
    baseline: string;
    candidate: string;
    mode: string;
    /** relative_pct: the effect judged, with its interval when the history line has one (its decimals are the interval's). */
    metrics: {
      tag: string;
      verdict: Verdict;
      verdict_reason: string;
      relative_pct: { estimate: number | null; ci_low?: number | null; ci_high?: number | null };
    }[];
    errors: { verdict: Verdict };
  }[];
}

export interface TrendData {
  schedule: string;
  generatedAt: string;
  runs: TrendRun[];
  /** History lines that could not be read (not shown). */
  badLines: number;
}

/** The most of a time or a window bound the runs table shows: an ISO time is 24 characters, and these columns do not wrap. */
const SHORT_TEXT = 40;

/** Where a run's report is from the trend page (schedules/<name>/index.html -> runs/<run>/report.html). */
export const reportLinkOf = (reportKey: string) => `../../${reportKey}`;

const time = (iso: string) => {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : iso;
};

/** A run's scheduled time (ms), -Infinity when it is not a time (such runs sort first, the oldest). */
const timeOf = (run: TrendRun) => {
  const ms = Date.parse(run.scheduled_time);
  return Number.isFinite(ms) ? ms : -Infinity;
};

/** Targets in order of first appearance (the baseline first), for stable colours. */
function targetsOf(runs: readonly TrendRun[]): string[] {
  const names: string[] = [];
  for (const r of runs) {
    for (const c of r.comparisons) for (const n of [c.baseline, c.candidate]) if (!names.includes(n)) names.push(n);
    for (const n of Object.keys(r.targets)) if (!names.includes(n)) names.push(n);
  }
  return names;
}

function metricsOf(runs: readonly TrendRun[]): ComparedMetricTag[] {
  return COMPARED_METRICS.map((m) => m.tag).filter((tag) =>
    runs.some(
      (r) =>
        r.comparisons.some((c) => c.metrics.some((m) => m.tag === tag)) ||
        Object.values(r.targets).some((t) => t.metrics[tag]),
    ),
  );
}

const colorOf = (names: readonly string[], name: string) =>
  SERIES_COLORS[Math.max(0, names.indexOf(name)) % SERIES_COLORS.length] as string;

/** The effect judged, in %, with the decimals its interval supports (as report.html's table). */
function effect(rel: { estimate: number | null; ci_low?: number | null; ci_high?: number | null }): string {
  const pct = rel.estimate;
  if (pct === null || !Number.isFinite(pct)) return '';
  return ` ${signed(pct, decimalsOf({ ci_low: rel.ci_low ?? null, ci_high: rel.ci_high ?? null }))} %`;
}

function runRow(run: TrendRun, names: readonly string[], metrics: readonly ComparedMetricTag[]): string {
  const counts = Object.entries(run.targets)
    .map(
      ([name, t]) =>
        `<div class="kv">${swatch(colorOf(names, name))}<span class="text">${esc(name)}` +
        `</span>: ${count(t.requests)} <span class="muted">(${count(t.succeeded)} ok, ${count(t.errors)} ` +
        `err, ${count(t.dropped)} dropped)</span></div>`,
    )
    .join('');
  const verdicts =
    run.status === 'empty'
      ? `<span class="badge v-unknown" data-verdict="empty">empty</span> <span class="why">${esc(run.reason ?? '')}</span>`
      : run.comparisons
          .map((c) => {
            const rows = metrics
              .map((tag) => c.metrics.find((m) => m.tag === tag))
              .filter((m) => m !== undefined)
              .map(
                (m) =>
                  `<div class="kv" ` +
                  `data-metric="${esc(m.tag)}">${esc(metricInfo(m.tag as ComparedMetricTag).name)}: ` +
                  `${badge(m.verdict, m.verdict_reason)}${esc(effect(m.relative_pct))}</div>`,
              )
              .join('');
            const inconclusive = c.metrics.filter((m) => m.verdict === 'inconclusive').map((m) => m.verdict_reason);
            const why =
              inconclusive.length > 0
                ? `<div class="why">Inconclusive: ${esc([...new Set(inconclusive)].join(' '))}</div>`
                : '';
            return (
              `<div class="comparison-cell"><b class="text">${esc(c.candidate)}</b> ` +
              `<span class="muted text">vs ${esc(c.baseline)} (${esc(c.mode)})</span><br>${rows}` +
              `<div class="kv" data-metric="error_rate">Error rate: ${badge(c.errors.verdict)}</div>${why}</div>`
            );
          })
          .join('');
  const status =
    run.status === 'deadline' ? `<div class="muted small">finalised at the deadline: some requests lost</div>` : '';
  const link = run.report
    ? `<a href="${esc(reportLinkOf(run.report))}">report</a>`
    : '<span class="muted">\u2013</span>';
  return `<tr data-run="${esc(run.run_id)}" data-status="${esc(run.status)}">
<td class="l">${esc(shownText(time(run.scheduled_time), SHORT_TEXT))}${status}</td>
<td class="l small window">${esc(shownText(run.window.start, SHORT_TEXT))}<br>${esc(shownText(run.window.end, SHORT_TEXT))}</td>
<td class="l">${counts || '<span class="muted">no requests</span>'}</td>
<td class="l">${verdicts}</td>
<td class="l">${link}</td>
</tr>`;
}

const TREND_CSS =
  `
.runs td { vertical-align: top; }
.comparison-cell + .comparison-cell { margin-top: 8px; }
.runs .kv { display: block; white-space: normal; }
.runs td.window { white-space: nowrap; }
.legend-note .mark { display: inline-block; width: 0; height: 0; border-left: 6px solid transparent; border-right: 6px solid ` +
  `transparent; border-bottom: 10px solid #dc2626; margin-right: 4px; }
`;

/** The trend page. Pure: no I/O. With `assets` null the tables are there and the charts say why not. */
export function renderTrendHtml(data: TrendData, assets: ChartAssets | null): string {
  const runs = [...data.runs].sort((a, b) => timeOf(a) - timeOf(b) || 0);
  // A run whose scheduled time is not a time has no place on the charts' time axis: the table only.
  const charted = runs.filter((r) => Number.isFinite(Date.parse(r.scheduled_time)));
  const names = targetsOf(runs);
  const metrics = metricsOf(runs);
  const latest = runs.at(-1);
  const worseLatest =
    latest?.comparisons.some((c) => c.metrics.some((m) => m.verdict === 'worse') || c.errors.verdict === 'worse') ??
    false;
  const head =
    `<header>
<h1>Schedule ${esc(data.schedule)}</h1>
<div class="meta">${count(runs.length)} run(s) \u00b7 generated ${esc(data.generatedAt)} \u00b7 targets ` +
    names
      .map((n) => `<span class="kv">${swatch(colorOf(names, n))}<span class="text">${esc(n)}</span></span>`)
      .join(' ') +
    (latest
      ? ` \u00b7 latest ${esc(time(latest.scheduled_time))}: ` +
        (latest.status === 'empty' ? 'empty window' : worseLatest ? badge('worse') : 'no metric worse')
      : '') +
    `</div>
</header>`;
  const untimed = runs.length - charted.length;
  const bad = [
    data.badLines > 0
      ? `<p class="chart-error">${count(data.badLines)} history line(s) could not be read and are not shown.</p>`
      : '',
    untimed > 0
      ? `<p class="chart-error">${count(untimed)} run(s) have no readable scheduled time: in the table, not in the charts.</p>`
      : '',
  ].join('');
  const charts =
    metrics.length === 0
      ? '<p class="muted">No run with metric values yet.</p>'
      : metrics
          .map((tag) => {
            const { name, unit } = metricInfo(tag);
            return (
              `<div class="metric" data-metric="${esc(tag)}"><h3>${esc(name)} <span class="muted">(${esc(unit)})</span></h3>
<figure><figcaption>p50 (solid) and p90 (dashed) of each target per run, by scheduled time; markers above: each run's verdict ` +
              `(per candidate), empty runs: grey dashed lines.</figcaption>` +
              `<div class="chart" data-chart="trend" data-metric="${esc(tag)}" data-unit="${esc(unit)}"></div></figure></div>`
            );
          })
          .join('\n');
  const legend = `<p class="muted small legend-note">Markers: ${(Object.keys(VERDICT_COLORS) as Verdict[])
    .map((v) => `<span class="kv">${swatch(VERDICT_COLORS[v])}${esc(VERDICT_LABELS[v])}</span>`)
    .join(
      ' ',
    )} <span class="kv"><span class="mark"></span>worse is a triangle</span>. Drag to zoom, double-click to reset.</p>`;
  const table =
    `<section id="runs">
<h2>Runs</h2>
<div class="table-wrap"><table class="runs">
<thead><tr><th class="l">Scheduled</th><th class="l">Window</th><th class="l">Requests per target</th>` +
    `<th class="l">Verdicts (B vs A)</th><th class="l">Report</th></tr></thead>
<tbody>
${[...runs]
  .reverse()
  .map((r) => runRow(r, names, metrics))
  .join('\n')}
</tbody></table></div>
</section>`;
  const body = `${head}
${bad}
<section id="trends">
<h2>Trends</h2>
${charts}
${legend}
</section>
${table}
<footer>Self-contained page: it loads nothing from the network. Charts drawn with uPlot (MIT).</footer>`;
  const embedded = { names, metrics, runs: charted, colors: SERIES_COLORS, verdictColors: VERDICT_COLORS };
  return renderPage(
    {
      title: `capture-replay schedule ${data.schedule}`,
      body,
      data: embedded,
      dataId: 'trend-data',
      script: TREND_PAGE_SCRIPT,
      css: TREND_CSS,
    },
    assets,
  );
}
