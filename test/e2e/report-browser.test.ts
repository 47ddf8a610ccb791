/**
 * report.html in a real browser (Debian's Chromium through playwright-core; no browser is ever
 * downloaded): the page is written to disk and opened from file://, as a person would open it,
 * at 1,024 and 1,440 px. Checks the verdict table's badges, that it fits the window with p, n
 * and each metric's explanation on screen, that no element is wider than its box (overflow),
 * that every chart drew a canvas with series colours in it, that the legends show names only
 * until a point is hovered, that a metric of one value is drawn as a step, that nothing was
 * logged as an error, that no request left the page's own file, and that injected markup in
 * every field stays text: set in the report's data directly, and from a real run whose capture
 * and targets put it everywhere they can. Saves full-page screenshots under test-artifacts/.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_CHART_ASSETS } from '../../lambdas/adapters/bundled-chart-assets';
import { COMPARED_METRICS } from '../../lambdas/core/compare/types';
import { SERIES_COLORS } from '../../lambdas/core/report/palette';
import { renderReportHtml } from '../../lambdas/core/report/report-page';
import type { ReportData } from '../../lambdas/core/report/types';
import { replayCommand } from '../../lambdas/local/replay/command';
import {
  expectNoInjection,
  expectQuietAndOffline,
  INJECTED_MARKUP,
  legendTexts,
  openHtmlFile,
  overflowing,
  saveScreenshot,
  skipWithoutChromium,
  useChromium,
  type OpenedPage,
} from '../support/browser';
import { setEnv } from '../support/set-env';
import { HUGE_ERROR_TAIL, hostileCaptureLines, startHostileTarget } from '../support/hostile-target';
import {
  FIXTURE_ERROR_VERDICT,
  FIXTURE_VERDICTS,
  reportFixture,
  reportWithMarkupEverywhere,
  withEqualValues,
} from '../support/report-fixture';

const SKIP = skipWithoutChromium('report-browser');
const WIDTHS = [1024, 1440] as const;

// The project's tsconfig has no DOM lib (Node code): the little of it the page callbacks use.
interface BrowserCanvas {
  width: number;
  height: number;
  getContext(
    kind: '2d',
  ): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } | null;
  getBoundingClientRect(): { width: number; height: number };
}
interface BrowserElement {
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): BrowserElement | null;
  querySelectorAll(selector: string): ArrayLike<BrowserCanvas>;
}
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
  /** The most saturated pixels in one pixel column: a vertical step is as tall as the plot. */
  tallestColumn: number;
}

/** Every chart's canvas: size, saturated pixels, pixels of each target's colour, its tallest inked column. */
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
        const columns: number[] = [];
        if (c && c.width > 0 && c.height > 0) {
          const px = (c.getContext('2d') as NonNullable<ReturnType<BrowserCanvas['getContext']>>).getImageData(
            0,
            0,
            c.width,
            c.height,
          ).data;
          for (let i = 0; i < px.length; i += 4) {
            const r = px[i] as number;
            const g = px[i + 1] as number;
            const b = px[i + 2] as number;
            const a = px[i + 3] as number;
            if (a > 128 && Math.max(r, g, b) - Math.min(r, g, b) > 60) {
              inked++;
              const x = (i / 4) % c.width;
              columns[x] = (columns[x] ?? 0) + 1;
            }
            targetColors.forEach(([R, G, B], k) => {
              if (
                a > 200 &&
                Math.abs(r - (R as number)) + Math.abs(g - (G as number)) + Math.abs(b - (B as number)) < 60
              )
                byColor[k]! += 1;
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
          tallestColumn: columns.reduce((m, v) => Math.max(m, v ?? 0), 0),
        };
      }),
    colors,
  );
}

/** Each verdict table: whether it fits its box, and whether its p and n headers and every explanation are within the window. */
async function verdictTables(
  page: Page,
): Promise<{ fits: boolean; pnVisible: boolean; whys: number; whysVisible: boolean }[]> {
  return page.evaluate(
    `[...document.querySelectorAll('table.verdicts')].map((t) => {
    const wrap = t.parentElement.getBoundingClientRect();
    const within = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && r.left >= wrap.left - ` +
      `1 && r.right <= Math.min(wrap.right, window.innerWidth) + 1; };
    const ths = [...t.querySelectorAll('thead th')];
    const p = ths.find((th) => th.firstChild && th.firstChild.textContent === 'p');
    const n = ths.find((th) => th.textContent === 'n');
    const whys = [...t.querySelectorAll('tr.why-row td.why')];
    return { fits: t.parentElement.scrollWidth <= t.parentElement.clientWidth, pnVisible: !!p && !!n && within(p) && within(n), ` +
      `whys: whys.length, whysVisible: whys.every(within) };
  })`,
  ) as Promise<{ fits: boolean; pnVisible: boolean; whys: number; whysVisible: boolean }[]>;
}

/** Legends name the series and show no value until a point is hovered: no `--` anywhere. */
async function expectQuietLegends(page: Page): Promise<void> {
  const legends = await legendTexts(page);
  expect(legends.length).toBeGreaterThan(0);
  for (const l of legends) {
    expect(l.values, `${l.chart}: no value shown before a hover`).toEqual([]);
    expect(l.names.length, `${l.chart} names its series`).toBeGreaterThan(0);
    expect(l.names.join(' '), l.chart).not.toContain('--');
  }
}

/** Hovering the first ECDF shows its values (x and each target's share); leaving it names the series only again. */
async function expectHoverValues(page: Page, targets: number): Promise<void> {
  const ecdf = page.locator('.chart[data-chart="ecdf"]').first();
  await ecdf.scrollIntoViewIfNeeded();
  const box = (await ecdf.locator('.u-over').boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await expect.poll(async () => (await legendTexts(page))[0]!.values.length).toBe(1 + targets);
  const [x, ...shares] = (await legendTexts(page))[0]!.values;
  expect(x).toMatch(/^[\d,]+(\.\d+)?$/);
  for (const share of shares) expect(share).toMatch(/^\d+\.\d%$/);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height + 200);
  await expect.poll(async () => (await legendTexts(page))[0]!.values).toEqual([]);
}

describe.skipIf(SKIP)('report.html in Chromium', () => {
  const chromium = useChromium('report-browser');
  const assets = BUNDLED_CHART_ASSETS;

  function open(name: string, data: ReportData, width: number): Promise<OpenedPage> {
    return openHtmlFile(
      chromium.browser,
      join(chromium.dir, `${name}-${width}`, 'report.html'),
      renderReportHtml(data, assets),
      { viewport: { width, height: 900 } },
    );
  }

  it.each(WIDTHS)(
    'A/B comparison at %i px: verdicts, the table fits with p, n and why, every chart drawn, quiet legends, no overflow, offline',
    async (width) => {
      const data = reportFixture({
        names: ['llama3-8b-g5.2xlarge', 'llama3-8b-g6e.2xlarge'],
        requests: 3000,
        durationS: 900,
        compare: true,
        title: 'Replay of prod-chat captures: g5 vs g6e',
      });
      const o = await open('ab', data, width);
      const { page } = o;
      await saveScreenshot(page, `report-ab-${width}.png`);

      const verdicts = await page.$$eval('table.verdicts tbody tr[data-metric]', (rows: BrowserElement[]) =>
        rows.map((r) => [
          r.getAttribute('data-metric'),
          r.querySelector('.badge')?.textContent,
          getComputedStyle(r.querySelector('.badge')).backgroundColor,
        ]),
      );
      const expected = COMPARED_METRICS.map((m) => [m.tag, FIXTURE_VERDICTS[m.tag].replace('_', ' ')]);
      expect(verdicts.map(([tag, label]) => [tag, label])).toEqual([
        ...expected,
        ['error_rate', FIXTURE_ERROR_VERDICT],
      ]);
      const colour = Object.fromEntries(verdicts.map(([, label, bg]) => [label, bg]));
      expect(colour['worse']).toBe('rgb(220, 38, 38)');
      expect(colour['better']).toBe('rgb(22, 163, 74)');
      expect(colour['no difference']).toBe('rgb(107, 114, 128)');
      expect(colour['inconclusive']).toBe('rgb(245, 158, 11)');
      expect(colour['changed']).toBe('rgb(37, 99, 235)');
      expect(await verdictTables(page)).toEqual([{ fits: true, pnVisible: true, whys: 7, whysVisible: true }]);
      expect(await overflowing(page)).toEqual([]);

      const charts = await chartStates(page);
      // Per metric: ECDF, paired differences, over time; then the schedule lag.
      expect(charts.map((c) => c.kind).sort()).toEqual(
        [
          ...Array<string>(6).fill('ecdf'),
          ...Array<string>(6).fill('diff'),
          ...Array<string>(6).fill('time'),
          'lag',
        ].sort(),
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

      await expectQuietLegends(page);
      await expectHoverValues(page, 2);
      expectQuietAndOffline(o);
    },
  );

  it.each(WIDTHS)(
    'single target at %i px: no comparison sections, every chart drawn, quiet legends, no overflow, offline',
    async (width) => {
      const data = reportFixture({
        names: ['llama3-8b-g5.2xlarge'],
        requests: 800,
        durationS: 300,
        title: 'Replay of prod-chat captures',
      });
      const o = await open('single', data, width);
      const { page } = o;
      await saveScreenshot(page, `report-single-${width}.png`);

      await expect(page.locator('#verdicts').count()).resolves.toBe(0);
      await expect(page.locator('table.verdicts').count()).resolves.toBe(0);
      const charts = await chartStates(page);
      expect(charts.map((c) => c.kind).sort()).toEqual(
        [...Array<string>(6).fill('ecdf'), ...Array<string>(6).fill('time'), 'lag'].sort(),
      );
      for (const c of charts) {
        expect(c.canvases, `${c.kind} ${c.metric}`).toBe(1);
        expect(c.width).toBeGreaterThan(200);
        expect(c.height).toBeGreaterThan(100);
        expect(c.inked, `${c.kind} ${c.metric} has drawn series`).toBeGreaterThan(400);
        expect(c.byColor[0], `${c.kind} ${c.metric}: target drawn`).toBeGreaterThan(100);
      }
      expect(await overflowing(page)).toEqual([]);
      await expectQuietLegends(page);
      await expectHoverValues(page, 1);
      expectQuietAndOffline(o);
    },
  );

  it('a metric of one value: its ECDFs and its differences drawn as a single step, not an empty chart', async () => {
    const data = withEqualValues(
      reportFixture({ names: ['a', 'b'], requests: 600, compare: true }),
      'output_sequence_length',
      64,
    );
    const o = await open('equal', data, 1440);
    await saveScreenshot(o.page, 'report-equal-values.png', '.metric[data-metric="output_sequence_length"]');
    const charts = (await chartStates(o.page)).filter(
      (c) => c.metric === 'output_sequence_length' && c.kind !== 'time',
    );
    expect(charts.map((c) => c.kind).sort()).toEqual(['diff', 'ecdf']);
    for (const c of charts) {
      // The step's rise: one column inked over most of the plot's height (the chart is 260 px).
      expect(c.tallestColumn, `${c.kind}: a vertical step`).toBeGreaterThan(120);
      expect(c.inked, `${c.kind}: drawn`).toBeGreaterThan(400);
    }
    await expect(o.page.locator('.chart-error').count()).resolves.toBe(0);
    expectQuietAndOffline(o);
  });

  it.each(WIDTHS)(
    'injected markup in every field at %i px: stays text, runs nothing, requests nothing, charts drawn',
    async (width) => {
      const data = reportWithMarkupEverywhere(INJECTED_MARKUP);
      const o = await open('injected', data, width);
      const { page } = o;
      await saveScreenshot(page, `report-injected-${width}.png`);

      await expectNoInjection(o);
      await expect(page.locator('main img, main svg, main link, main iframe').count()).resolves.toBe(0);
      await expect(page.locator('h1').textContent()).resolves.toBe(INJECTED_MARKUP);
      await expect(page.locator('header code').textContent()).resolves.toBe(INJECTED_MARKUP);
      await expect(page.locator('table.accounting td.l').first().textContent()).resolves.toBe(`${INJECTED_MARKUP}A`);
      await expect(page.locator('table.verdicts').getAttribute('data-candidate')).resolves.toBe(`${INJECTED_MARKUP}B`);
      await expect(page.locator('#errors td.error-type').filter({ hasText: 'window.__pwned=1' }).count()).resolves.toBe(
        1,
      );
      // The legends carry the names as text too (uPlot sets textContent).
      await expect(
        page
          .locator('.u-legend th')
          .filter({ hasText: `${INJECTED_MARKUP}A` })
          .count(),
      ).resolves.toBeGreaterThan(0);
      const charts = await chartStates(page);
      expect(charts).toHaveLength(19);
      for (const c of charts) expect(c.inked, `${c.kind} ${c.metric} drawn`).toBeGreaterThan(400);
      await expect(page.locator('.chart-error').count()).resolves.toBe(0);
      expect(await overflowing(page)).toEqual([]);
      expectQuietAndOffline(o);
    },
  );
});

/**
 * A run of the CLI's replay (in this process) whose capture and targets (an HTTP and a
 * SageMaker target, test/support/hostile-target.ts) put INJECTED_MARKUP in every field they
 * control: event and inference ids, prompts, model names, answers, error bodies and types
 * (one 50,000 characters long), stream errors. Its report.html, as written, at both widths.
 */
describe.skipIf(SKIP)('report.html of a run with markup from the capture and the targets', () => {
  const chromium = useChromium('report-hostile-run');
  const AWS_ENV = {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDTEST',
    AWS_SECRET_ACCESS_KEY: 'test-secret',
    AWS_PROFILE: '',
    AWS_SESSION_TOKEN: '',
  };
  let dir = '';
  let html = '';
  let target: { url: string; close(): Promise<void> } | undefined;
  let restoreEnv = () => {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cr-hostile-report-'));
    target = await startHostileTarget(INJECTED_MARKUP);
    // The capture folder's name is the user's: markup too (no slash in a file name).
    const folder = join(dir, `"'><img src=x onerror=window.__pwned=9>`);
    mkdirSync(folder);
    writeFileSync(join(folder, 'capture.jsonl'), hostileCaptureLines(INJECTED_MARKUP, 30).join('\n') + '\n');
    restoreEnv = setEnv({ ...AWS_ENV, AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: target.url });
    const sink = () => {
      let text = '';
      return {
        stream: { write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WritableStream,
        text: () => text,
      };
    };
    const [stdout, stderr] = [sink(), sink()];
    const code = await replayCommand({
      capturesPath: folder,
      target: [`H=${target.url}`, 'S=sagemaker:hostile-endpoint'],
      out: join(dir, 'out'),
      runId: 'hostile-run',
      path: '/v1/chat/completions',
      targetName: 'target',
      streaming: false,
      timeScale: 1,
      intraSecond: 'spread',
      seed: 1,
      timeout: 30_000,
      lead: 200,
      latePolicy: 'fire',
      progress: false,
      preflight: false,
      rehearsal: 0,
      resamples: 200,
      stdout: stdout.stream,
      stderr: stderr.stream,
    });
    html = readFileSync(join(dir, 'out', 'hostile-run', 'report.html'), 'utf8');
    // Two thirds of the requests fail by design: the exit code says so; the report is what this checks.
    expect([0, 1], stderr.text()).toContain(code);
  }, 120_000);

  afterAll(async () => {
    restoreEnv();
    await target?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is written with every error type cut: no 50,000-character type, a page of its usual size', () => {
    expect(html).toContain('report-data');
    expect(html).not.toContain('x'.repeat(HUGE_ERROR_TAIL / 100));
    expect(html.length).toBeLessThan(400_000);
  });

  it.each(WIDTHS)(
    'at %i px: the markup stays text, runs nothing, requests nothing; charts drawn; no overflow',
    async (width) => {
      const o = await openHtmlFile(chromium.browser, join(chromium.dir, `run-${width}`, 'report.html'), html, {
        viewport: { width, height: 900 },
      });
      const { page } = o;
      await saveScreenshot(page, `report-hostile-run-${width}.png`);
      await expectNoInjection(o);
      await expect(page.locator('main img, main svg, main link, main iframe').count()).resolves.toBe(0);
      // The targets' error types reach the page as text of at most 200 characters (the adapters may name them first).
      const types = await page.locator('#errors td.error-type').allTextContents();
      expect(types.length).toBeGreaterThan(0);
      for (const t of types) expect(Array.from(t).length).toBeLessThanOrEqual(200);
      await expect(page.locator('table.verdicts').count()).resolves.toBe(1);
      const charts = await chartStates(page);
      expect(charts.length).toBeGreaterThan(0);
      for (const c of charts) expect(c.inked, `${c.kind} ${c.metric} drawn`).toBeGreaterThan(100);
      await expect(page.locator('.chart-error').count()).resolves.toBe(0);
      expect(await overflowing(page)).toEqual([]);
      await expectQuietLegends(page);
      expectQuietAndOffline(o);
    },
  );
});
