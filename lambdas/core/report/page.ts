/**
 * The shell of every self-contained page (report.html, a schedule's trend page): the
 * Content-Security-Policy, the shared styles, the chart library inlined, the data embedded as
 * JSON and the page's own script. The page loads nothing: the library's JS and CSS come in as
 * text, and the policy allows no fetch of any kind and only the page's own scripts, by hash.
 */
import { createHash } from 'node:crypto';
import { escapeHtml as esc, jsonForScript } from './format';

export interface ChartAssets {
  /** The chart library (uPlot's IIFE build), defining a global `uPlot`. */
  chartJs: string;
  /** The chart library's stylesheet. */
  chartCss: string;
}

/** A library's source inside `<script>`/`<style>`: its text may not close the element. */
function rawText(source: string, tag: 'script' | 'style'): string {
  const closing = new RegExp(`</(${tag})`, 'gi');
  return source.replace(closing, '<\\/$1').replace(/<!--/g, '<\\!--');
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The styles every page shares. */
const PAGE_CSS =
  `
:root { color-scheme: light; --fg: #1f2937; --muted: #6b7280; --line: #e5e7eb; }
* { box-sizing: border-box; }
body { margin: 0; background: #f3f4f6; color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, ` +
  `"Helvetica Neue", Arial, sans-serif; }
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
/* Names, types and reasons from the data: a long one wraps anywhere rather than widen its table. */
.text { overflow-wrap: anywhere; white-space: normal; }
.ci { color: var(--muted); font-size: 12px; }
.why { color: var(--muted); font-size: 12px; text-align: left; white-space: normal; overflow-wrap: anywhere; min-width: 130px; ` +
  `max-width: 250px; }
table.verdicts th, table.verdicts td { padding-left: 6px; padding-right: 6px; }
table.verdicts .metric-name { min-width: 104px; }
table.verdicts td .ci { white-space: normal; }
table.verdicts tr.metric-row td { border-bottom: none; padding-bottom: 2px; }
table.verdicts tr.why-row td { padding-top: 0; padding-bottom: 8px; }
table.verdicts td.why { max-width: none; min-width: 0; }
.why-label { font-weight: 600; }
.metric-name { min-width: 120px; }
.unit { color: var(--muted); font-size: 12px; }
td.c { text-align: center; }
.error-row td { background: #fcfcfd; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; ` +
  `white-space: nowrap; }
.v-worse { background: #dc2626; }
.v-better { background: #16a34a; }
.v-no_difference { background: #6b7280; }
.v-inconclusive { background: #f59e0b; color: #1f2937; }
.v-changed { background: #2563eb; }
.v-unknown { background: #e5e7eb; color: #1f2937; white-space: normal; overflow-wrap: anywhere; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: baseline; }
.kv { display: inline-block; margin-right: 10px; max-width: 100%; white-space: nowrap; }
.pairs, .method { margin: 8px 0 0; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 14px 20px; }
.grid .wide { grid-column: 1 / -1; }
figure { margin: 0; min-width: 0; }
figcaption { font-size: 13px; color: var(--muted); margin-bottom: 4px; overflow-wrap: anywhere; }
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
.u-legend { font-size: 12px; max-width: 100%; }
.u-legend th, .u-legend td { background: none; border-bottom: none; text-align: left; white-space: normal; overflow-wrap: ` +
  `anywhere; max-width: 100%; }
.u-inline tr { max-width: 100%; }
.chart.legend-idle .u-legend .u-value { display: none; }
.chart.legend-idle .u-legend.u-live th::after { content: none; }
.chart.legend-idle .u-legend.u-live tr:first-child { display: none; }
.chart-error { color: #b91c1c; }
@media (max-width: 1100px) {
  main { padding: 16px 12px 40px; }
  section { padding: 12px 12px 16px; }
}
`;

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
  /** The page's own script: one of page-scripts.generated.ts's bundles. */
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
