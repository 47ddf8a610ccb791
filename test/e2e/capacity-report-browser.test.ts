/**
 * The capacity section of report.html in a real browser (Debian's Chromium, as
 * report-browser.test.ts): a capacity search's page shows the summary line, each target's
 * sustained factor and why it stopped, a chart per objective against the factor with both
 * targets drawn, the objective line and each sustained factor marked, the steps with links
 * to their own reports; nothing logged, nothing fetched.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BUNDLED_CHART_ASSETS } from '../../lambdas/adapters/bundled-chart-assets';
import { SERIES_COLORS } from '../../lambdas/core/report/palette';
import { renderCapacityReportHtml } from '../../lambdas/core/report/capacity-section';
import {
  expectQuietAndOffline,
  openHtmlFile,
  skipWithoutChromium,
  useChromium,
  saveScreenshot,
} from '../support/browser';
import { capacityFixture } from '../support/capacity-fixture';

const SKIP = skipWithoutChromium('capacity-report-browser');
const OBJECTIVE_GREY = '#6b7280';

interface BrowserCanvas {
  width: number;
  height: number;
  getContext(
    kind: '2d',
  ): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } | null;
}
interface BrowserElement {
  dataset: Record<string, string | undefined>;
  querySelectorAll(selector: string): ArrayLike<BrowserCanvas>;
}

interface CapacityChart {
  metric: string;
  canvases: number;
  /** Per colour: its pixels in the canvas, and the most of them in one pixel column (a vertical line). */
  pixels: number[];
  tallestColumn: number[];
  /** The most pixels of a colour in one pixel row (a horizontal line). */
  widestRow: number[];
}

const rgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

async function capacityCharts(page: Page, colors: string[]): Promise<CapacityChart[]> {
  return page.$$eval(
    '.chart[data-chart="capacity"]',
    (els: BrowserElement[], wanted: number[][]) =>
      els.map((el) => {
        const canvases = el.querySelectorAll('canvas');
        const c = canvases[0];
        const pixels = wanted.map(() => 0);
        const tallestColumn = wanted.map(() => 0);
        const widestRow = wanted.map(() => 0);
        if (c && c.width > 0) {
          const px = (c.getContext('2d') as NonNullable<ReturnType<BrowserCanvas['getContext']>>).getImageData(
            0,
            0,
            c.width,
            c.height,
          ).data;
          const columns = wanted.map(() => new Array<number>(c.width).fill(0));
          const rows = wanted.map(() => new Array<number>(c.height).fill(0));
          for (let i = 0; i < px.length; i += 4) {
            if ((px[i + 3] as number) < 200) continue;
            wanted.forEach(([R, G, B], k) => {
              if (
                Math.abs((px[i] as number) - (R as number)) +
                  Math.abs((px[i + 1] as number) - (G as number)) +
                  Math.abs((px[i + 2] as number) - (B as number)) <
                40
              ) {
                pixels[k]! += 1;
                columns[k]![(i / 4) % c.width]! += 1;
                rows[k]![Math.floor(i / 4 / c.width)]! += 1;
              }
            });
          }
          wanted.forEach((_, k) => {
            tallestColumn[k] = Math.max(...columns[k]!);
            widestRow[k] = Math.max(...rows[k]!);
          });
        }
        return { metric: el.dataset.metric ?? '', canvases: canvases.length, pixels, tallestColumn, widestRow };
      }),
    colors.map(rgb),
  );
}

describe.skipIf(SKIP)('report.html capacity section in Chromium', () => {
  const chromium = useChromium('capacity-report-browser');

  it('summary, sustained factors, a chart per objective with the objective and the sustained factors drawn, steps linked', async () => {
    const capacity = await capacityFixture();
    const html = renderCapacityReportHtml(
      { title: 'Capacity of prod-chat traffic: g5 vs g6e', capacity },
      BUNDLED_CHART_ASSETS,
    );
    const o = await openHtmlFile(chromium.browser, join(chromium.dir, 'capacity', 'report.html'), html);
    const { page } = o;

    await expect(page.locator('.capacity-summary').textContent()).resolves.toBe(
      "B sustains 2.4x today's traffic at 99 % goodput, A 1.8x.",
    );
    const rows = await page.$$eval('table.capacity tbody tr', (trs: BrowserElement[]) =>
      trs.map((r) => [r.dataset.target, r.dataset.sustained, r.dataset.limitedBy]),
    );
    expect(rows).toEqual([
      ['A', '1.8', 'objectives'],
      ['B', '2.4', 'objectives'],
    ]);
    // A capacity search's own page: no run sections (each step's report has them).
    await expect(page.locator('#accounting').count()).resolves.toBe(0);
    await expect(page.locator('#metrics').count()).resolves.toBe(0);
    // Every step, with its outcome and a link to its own report.
    const steps = capacity.targets.flatMap((t) => t.steps);
    await expect(page.locator('table.capacity-steps tbody tr').count()).resolves.toBe(steps.length);
    await expect(page.locator('table.capacity-steps a[href="steps/B-2.4x/report.html"]').count()).resolves.toBe(1);
    await expect(
      page.locator('table.capacity-steps[data-target="A"] tr.sustained').getAttribute('data-factor'),
    ).resolves.toBe('1.8');

    const charts = await capacityCharts(page, [SERIES_COLORS[0], SERIES_COLORS[1], OBJECTIVE_GREY]);
    expect(charts.map((c) => c.metric)).toEqual([
      'goodput',
      'error_rate',
      'time_to_first_token',
      'inter_token_latency',
    ]);
    for (const c of charts) {
      expect(c.canvases, c.metric).toBe(1);
      expect(c.pixels[0], `${c.metric}: A drawn`).toBeGreaterThan(60);
      expect(c.pixels[1], `${c.metric}: B drawn`).toBeGreaterThan(60);
      // The sustained factors: a dotted vertical line in each target's colour, taller than any series crossing a column.
      expect(c.tallestColumn[0], `${c.metric}: A's sustained factor marked`).toBeGreaterThan(60);
      expect(c.tallestColumn[1], `${c.metric}: B's sustained factor marked`).toBeGreaterThan(60);
    }
    // The objective: a dashed horizontal line across the plot (goodput 99 %, TTFT 200 ms, ITL 40 ms; error rate 1 %).
    for (const c of charts) expect(c.widestRow[2], `${c.metric}: objective drawn`).toBeGreaterThan(200);
    await expect(page.locator('.chart-error').count()).resolves.toBe(0);

    await saveScreenshot(page, 'report-capacity.png');
    expectQuietAndOffline(o);
  });
});
