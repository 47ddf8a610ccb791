/**
 * report.html in a real browser (Debian's Chromium through playwright-core; no browser is ever
 * downloaded): the page is written to disk and opened from file://, as a person would open it.
 * Checks the verdict table's badges, that every chart drew a canvas with series colours in it,
 * that nothing was logged as an error, that no request left the page's own file, and that
 * hostile target names stay text. Saves full-page screenshots under test-artifacts/.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BUNDLED_CHART_ASSETS } from '../../lambdas/adapters/bundled-chart-assets';
import { COMPARED_METRICS } from '../../lambdas/core/compare/types';
import { SERIES_COLORS } from '../../lambdas/core/report/palette';
import { renderReportHtml } from '../../lambdas/core/report/report-page';
import type { ReportData } from '../../lambdas/core/report/types';
import { ARTIFACTS, expectQuietAndOffline, openHtmlFile, skipWithoutChromium, useChromium, type OpenedPage } from '../support/browser';
import { FIXTURE_ERROR_VERDICT, FIXTURE_VERDICTS, reportFixture } from '../support/report-fixture';

const HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';

const SKIP = skipWithoutChromium('report-browser');

// The project's tsconfig has no DOM lib (Node code): the little of it the page callbacks use.
interface BrowserCanvas {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } | null;
  getBoundingClientRect(): { width: number; height: number };
}
interface BrowserElement {
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): BrowserElement | null;
  querySelectorAll(selector: string): ArrayLike<BrowserCanvas>;
}
declare const window: { __pwned?: number };
declare function getComputedStyle(el: BrowserElement | null): { backgroundColor: string };

interface ChartState {
  kind: string;
  metric: string;
  canvases: number;
  width: number;
  height: number;
  /** Pixels with a saturated colour: the series and bands, not the grey axes and grid. */
  inked: number;
  /** Pixels of the first and second target's colour (their lines). */
  byColor: number[];
}

describe.skipIf(SKIP)('report.html in Chromium', () => {
  const chromium = useChromium('report-browser');
  const assets = BUNDLED_CHART_ASSETS;

  function open(name: string, data: ReportData): Promise<OpenedPage> {
    return openHtmlFile(chromium.browser, join(chromium.dir, name, 'report.html'), renderReportHtml(data, assets));
  }

  /** Every chart's canvas: size, saturated pixels, and pixels of each target's colour. */
  async function chartStates(page: Page): Promise<ChartState[]> {
    const colors = SERIES_COLORS.slice(0, 2).map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
    return page.$$eval(
      '.chart[data-chart]',
      (els: BrowserElement[], targetColors: number[][]) =>
        els.map((el) => {
          const canvases = el.querySelectorAll('canvas');
          const c = canvases[0];
          let inked = 0;
          const byColor = targetColors.map(() => 0);
          if (c && c.width > 0 && c.height > 0) {
            const px = (c.getContext('2d') as NonNullable<ReturnType<BrowserCanvas['getContext']>>).getImageData(0, 0, c.width, c.height).data;
            for (let i = 0; i < px.length; i += 4) {
              const r = px[i] as number;
              const g = px[i + 1] as number;
              const b = px[i + 2] as number;
              const a = px[i + 3] as number;
              if (a > 128 && Math.max(r, g, b) - Math.min(r, g, b) > 60) inked++;
              targetColors.forEach(([R, G, B], k) => {
                if (a > 200 && Math.abs(r - (R as number)) + Math.abs(g - (G as number)) + Math.abs(b - (B as number)) < 60) byColor[k]! += 1;
              });
            }
          }
          const box = c?.getBoundingClientRect();
          return {
            kind: el.dataset.chart ?? '',
            metric: el.dataset.metric ?? '',
            canvases: canvases.length,
            width: box?.width ?? 0,
            height: box?.height ?? 0,
            inked,
            byColor,
          };
        }),
      colors,
    );
  }

  it('A/B comparison: verdicts, every chart drawn, no errors, no network', async () => {
    const data = reportFixture({
      names: ['llama3-8b-g5.2xlarge', 'llama3-8b-g6e.2xlarge'],
      requests: 3000,
      durationS: 900,
      compare: true,
      title: 'Replay of prod-chat captures: g5 vs g6e',
    });
    const o = await open('ab', data);
    const { page } = o;

    const verdicts = await page.$$eval('table.verdicts tbody tr[data-metric]', (rows: BrowserElement[]) =>
      rows.map((r) => [r.getAttribute('data-metric'), r.querySelector('.badge')?.textContent, getComputedStyle(r.querySelector('.badge')).backgroundColor]),
    );
    const expected = COMPARED_METRICS.map((m) => [m.tag, FIXTURE_VERDICTS[m.tag].replace('_', ' ')]);
    expect(verdicts.map(([tag, label]) => [tag, label])).toEqual([...expected, ['error_rate', FIXTURE_ERROR_VERDICT]]);
    const colour = Object.fromEntries(verdicts.map(([, label, bg]) => [label, bg]));
    expect(colour['worse']).toBe('rgb(220, 38, 38)');
    expect(colour['better']).toBe('rgb(22, 163, 74)');
    expect(colour['no difference']).toBe('rgb(107, 114, 128)');
    expect(colour['inconclusive']).toBe('rgb(245, 158, 11)');
    expect(colour['changed']).toBe('rgb(37, 99, 235)');

    const charts = await chartStates(page);
    // Per metric: ECDF, paired differences, over time; then the schedule lag.
    expect(charts.map((c) => c.kind).sort()).toEqual(
      [...Array<string>(6).fill('ecdf'), ...Array<string>(6).fill('diff'), ...Array<string>(6).fill('time'), 'lag'].sort(),
    );
    for (const c of charts) {
      expect(c.canvases, `${c.kind} ${c.metric}`).toBe(1);
      expect(c.width, `${c.kind} ${c.metric}`).toBeGreaterThan(200);
      expect(c.height, `${c.kind} ${c.metric}`).toBeGreaterThan(100);
      expect(c.inked, `${c.kind} ${c.metric} has drawn series`).toBeGreaterThan(400);
      // ECDFs and time series show both targets; the differences are drawn in the candidate's colour.
      if (c.kind !== 'diff') expect(c.byColor[0], `${c.kind} ${c.metric}: baseline drawn`).toBeGreaterThan(30);
      expect(c.byColor[1], `${c.kind} ${c.metric}: candidate drawn`).toBeGreaterThan(30);
    }
    await expect(page.locator('.chart-error').count()).resolves.toBe(0);
    await expect(page.locator('#errors tr[data-error-type]').count()).resolves.toBe(3);
    await expect(page.locator('table.agreement tbody tr').count()).resolves.toBe(2);

    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
    expectQuietAndOffline(o);
  });

  it('single target, hostile names: no comparison sections, names stay text, no network', async () => {
    const data = reportFixture({ names: [HOSTILE], requests: 800, durationS: 300, title: `${HOSTILE} run` });
    const target = data.targets[0] as ReportData['targets'][number];
    target.summary.failedByType[HOSTILE] = 2;
    target.summary.droppedByReason['</style><b>bold</b>'] = 1;
    const o = await open('single', data);
    const { page } = o;

    await expect(page.locator('#verdicts').count()).resolves.toBe(0);
    await expect(page.locator('table.verdicts').count()).resolves.toBe(0);
    await expect(page.evaluate(() => window.__pwned)).resolves.toBeUndefined();
    await expect(page.locator('img').count()).resolves.toBe(0);
    await expect(page.locator('b:text-is("bold")').count()).resolves.toBe(0);
    await expect(page.locator('h1').textContent()).resolves.toBe(`${HOSTILE} run`);
    await expect(page.locator('table.accounting td.l').first().textContent()).resolves.toBe(HOSTILE);

    const charts = await chartStates(page);
    expect(charts.map((c) => c.kind).sort()).toEqual([...Array<string>(6).fill('ecdf'), ...Array<string>(6).fill('time'), 'lag'].sort());
    for (const c of charts) {
      expect(c.canvases, `${c.kind} ${c.metric}`).toBe(1);
      expect(c.width).toBeGreaterThan(200);
      expect(c.height).toBeGreaterThan(100);
      expect(c.inked, `${c.kind} ${c.metric} has drawn series`).toBeGreaterThan(400);
      expect(c.byColor[0], `${c.kind} ${c.metric}: target drawn`).toBeGreaterThan(100);
    }
    // The legend carries the hostile name as text too (uPlot sets textContent).
    await expect(page.locator('.u-legend th').filter({ hasText: HOSTILE }).count()).resolves.toBeGreaterThan(0);

    await page.screenshot({ path: join(ARTIFACTS, 'report-single.png'), fullPage: true });
    expectQuietAndOffline(o);
  });
});
