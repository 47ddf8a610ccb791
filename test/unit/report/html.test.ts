import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BUNDLED_CHART_ASSETS } from '../../../lambdas/adapters/bundled-chart-assets';
import { escapeHtml, jsonForScript } from '../../../lambdas/core/report/format';
import { renderReportHtml } from '../../../lambdas/core/report/report-page';
import type { ReportData } from '../../../lambdas/core/report/types';
import { reportFixture } from '../../support/report-fixture';

const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)>'&`;
const STYLE_BREAK = '</style><b>bold</b>';
const assets = BUNDLED_CHART_ASSETS;

function twoTargets(): ReportData {
  return reportFixture({ names: ['baseline-g5', 'candidate-g6e'], requests: 400, compare: true });
}

function hostile(): ReportData {
  const data = reportFixture({ names: [HOSTILE, `${HOSTILE}-b`], requests: 300, compare: true, title: HOSTILE });
  data.runId = HOSTILE;
  data.generatedAt = HOSTILE;
  const [a] = data.targets;
  a!.summary.failedByType[HOSTILE] = 3;
  a!.summary.droppedByReason[STYLE_BREAK] = 2;
  const doc = data.comparison!;
  doc.pairs.excluded[HOSTILE] = 1;
  doc.metrics[0]!.verdict_reason = HOSTILE;
  doc.comparisons[0]!.metrics[0]!.verdict_reason = HOSTILE;
  doc.comparisons[0]!.pairs.excluded[STYLE_BREAK] = 4;
  doc.method.interval = HOSTILE;
  doc.output_length_agreement[0]!.target = HOSTILE;
  return data;
}

/** Inline scripts by type: the JSON data block and the executable ones. */
function scripts(html: string): { json: string[]; code: string[] } {
  const json: string[] = [];
  const code: string[] = [];
  for (const m of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (/type="application\/json"/.test(m[1] ?? '')) json.push(m[2] ?? '');
    else code.push(m[2] ?? '');
  }
  return { json, code };
}

/** The page's markup with the inlined library and data taken out: what the data can reach. */
function markupOnly(html: string): string {
  return html.replace(/<script[^>]*>[\s\S]*?<\/script>/gi, '').replace(/<style>[\s\S]*?<\/style>/gi, '');
}

describe('escaping', () => {
  it('escapes the five HTML specials', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });

  it('keeps JSON inside its script element', () => {
    const s = jsonForScript({ a: '</script><!-- \u2028', b: '&' });
    expect(s).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(s)).toEqual({ a: '</script><!-- \u2028', b: '&' });
  });

  it('renders hostile names, types, reasons as text everywhere', () => {
    const html = renderReportHtml(hostile(), assets);
    const markup = markupOnly(html);
    // Three script elements (data, library, page) and two style elements: nothing injected.
    expect(html.match(/<script/gi)).toHaveLength(3);
    expect(html.match(/<\/script>/gi)).toHaveLength(3);
    expect(html.match(/<style/gi)).toHaveLength(2);
    expect(markup).not.toContain('<img');
    expect(markup).not.toContain('<b>bold</b>');
    expect(markup).not.toContain(HOSTILE);
    expect(markup).toContain(escapeHtml(HOSTILE));
    expect(markup).toContain(escapeHtml(STYLE_BREAK));
    // The title, a table cell and an attribute value.
    expect(markup).toContain(`<h1>${escapeHtml(HOSTILE)}</h1>`);
    expect(markup).toContain(`data-target="${escapeHtml(HOSTILE)}"`);
    // The data block holds no markup at all.
    const { json } = scripts(html);
    expect(json).toHaveLength(1);
    expect(json[0]).not.toMatch(/[<>]/);
  });

  it('neutralises a library text that would close its element', () => {
    const html = renderReportHtml(twoTargets(), {
      chartJs: 'var s = "</script><script>alert(1)</script>";',
      chartCss: '.x{}</style><b>x</b>',
    });
    expect(html.match(/<\/script>/gi)).toHaveLength(3);
    expect(html.match(/<\/style>/gi)).toHaveLength(2);
    expect(markupOnly(html)).not.toContain('<b>x</b>');
  });
});

describe('no network', () => {
  it.each([
    ['comparison', twoTargets()],
    ['single target', reportFixture({ names: ['only'], requests: 200 })],
  ])('%s page references nothing on the network', (_, data) => {
    const html = renderReportHtml(data, assets);
    expect(html).not.toMatch(/\b(src|href|action|poster|srcset)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).not.toMatch(/@import/i);
    expect(html).not.toMatch(/url\(\s*["']?\s*(https?:)?\/\//i);
    expect(html).not.toMatch(/<(link|iframe|object|embed|img|video|audio|source)\b(?![^>]*href="data:)/i);
    // Only the library's licence comment mentions a URL.
    const urls = [...html.matchAll(/https?:\/\/[^\s"')]+/g)].map((m) => m[0]);
    expect(urls.every((u) => u.startsWith('https://github.com/leeoniya/uPlot'))).toBe(true);
  });

  it('forbids every fetch by policy and allows only its own scripts', () => {
    const html = renderReportHtml(twoTargets(), assets);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1]?.replace(/&#39;/g, "'");
    expect(csp).toBeDefined();
    expect(csp).toContain("default-src 'none'");
    const { code } = scripts(html);
    expect(code).toHaveLength(2);
    for (const text of code) {
      expect(csp).toContain(`'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`);
    }
    expect(/script-src ([^;]+)/.exec(csp ?? '')?.[1]).not.toContain('unsafe');
  });

  it('inlines the chart library as given', () => {
    const html = renderReportHtml(twoTargets(), assets);
    expect(html).toContain(assets.chartJs.slice(0, 2000));
    expect(html).toContain(assets.chartCss);
  });
});

describe('data', () => {
  it('round-trips through the embedded JSON', () => {
    const data = hostile();
    const { json } = scripts(renderReportHtml(data, assets));
    expect(JSON.parse(json[0] as string)).toEqual(data);
  });
});

describe('sections', () => {
  it('comparison page: verdicts first, with every metric, the error rate, pairs, method and output length', () => {
    const data = twoTargets();
    const html = renderReportHtml(data, assets);
    const order = ['id="accounting"', 'id="verdicts"', 'id="metrics"', 'id="lag"', 'id="errors"'].map((s) =>
      html.indexOf(s),
    );
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const table = /<table class="verdicts"[\s\S]*?<\/table>/.exec(html)?.[0] ?? '';
    for (const m of data.comparison!.metrics) {
      expect(table).toMatch(new RegExp(`<tr data-metric="${m.tag}"[^>]*>[\\s\\S]*?data-verdict="${m.verdict}"`));
    }
    expect(table).toContain('data-metric="error_rate"');
    expect(table).toContain('class="badge v-worse"');
    expect(html).toContain('Pairs used: <b>');
    expect(html).toContain('percentile bootstrap intervals, 2,000 resamples');
    expect(html).toContain('<table class="agreement">');
    const charts = [...html.matchAll(/data-chart="(\w+)"/g)].map((m) => m[1]);
    expect(charts.filter((c) => c === 'ecdf')).toHaveLength(6);
    expect(charts.filter((c) => c === 'diff')).toHaveLength(6);
    expect(charts.filter((c) => c === 'time')).toHaveLength(6);
    expect(charts.filter((c) => c === 'lag')).toHaveLength(1);
  });

  it('single-target page: no verdict table, no differences, the rest as for a comparison', () => {
    const html = renderReportHtml(reportFixture({ names: ['only'], requests: 200 }), assets);
    expect(html).not.toContain('id="verdicts"');
    expect(html).not.toContain('class="verdicts"');
    expect(html).not.toContain('data-chart="diff"');
    expect(html).not.toContain('class="badge');
    expect(html).toContain('id="accounting"');
    expect(html).toContain('data-chart="ecdf"');
    expect(html).toContain('data-chart="time"');
    expect(html).toContain('data-chart="lag"');
    expect(html).toContain('id="errors"');
  });

  it('three targets: one verdict table per candidate against the baseline', () => {
    const html = renderReportHtml(reportFixture({ names: ['a', 'b', 'c'], requests: 200, compare: true }), assets);
    expect(html.match(/<table class="verdicts"/g)).toHaveLength(2);
    expect(html).toContain('data-baseline="a" data-candidate="b"');
    expect(html).toContain('data-baseline="a" data-candidate="c"');
    expect(html.match(/data-chart="diff"/g)).toHaveLength(12);
  });

  it('unpaired comparison: the differences are stated, not drawn', () => {
    const data = twoTargets();
    const doc = data.comparison!;
    for (const c of [doc, ...doc.comparisons]) {
      c.mode = 'unpaired';
      for (const m of c.metrics) m.distribution.difference = null;
    }
    const html = renderReportHtml(data, assets);
    expect(html).not.toContain('data-chart="diff"');
    expect(html).toContain('No per-pair differences (unpaired comparison)');
  });

  it('unpaired comparison: each side its own count, not both added (issue 22 item 10)', () => {
    const data = twoTargets();
    const c = data.comparison!.comparisons[0]!;
    c.mode = 'unpaired';
    c.errors.baseline = { fired: 300, failed: 0 } as typeof c.errors.baseline;
    c.errors.candidate = { fired: 300, failed: 4 } as typeof c.errors.candidate;
    c.pairs.used = 596;
    const html = renderReportHtml(data, assets);
    expect(html).toContain(
      `Requests compared: <b>296</b> of <span class="text">${c.candidate}</span> and <b>300</b> of <span class="text">${c.baseline}</span>`,
    );
    expect(html).not.toContain('<b>596</b>');
  });

  it('no failures: says so instead of an empty error table', () => {
    const data = reportFixture({ names: ['only'], requests: 50 });
    data.targets[0]!.summary.failedByType = {};
    expect(renderReportHtml(data, assets)).toContain('No request failed.');
  });
});
