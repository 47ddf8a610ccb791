/**
 * A schedule's trend page (schedules/<name>/index.html) in a real browser (Debian's Chromium
 * through playwright-core, as report-browser.test.ts): written by the history code on the
 * memory store from three runs (one empty), opened from file:// under schedules/<name>/.
 * Checks one point per run per series (the empty run a gap), the verdict markers drawn
 * (worse in red), the runs table (verdict badges, the empty run's reason, relative links to
 * the runs' reports), no console errors, no request but the page itself, hostile names
 * staying text, at 1,024 and 1,440 px with no element wider than its box and legends that
 * name their series until hovered; and a history with injected markup in every field.
 * Saves screenshots under test-artifacts/.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../lambdas/adapters/local/memory-store';
import { BUNDLED_CHART_ASSETS } from '../../lambdas/adapters/bundled-chart-assets';
import { scheduleIndexKey, type ScheduledRunInfo } from '../../lambdas/core/scheduled-runs/contract';
import { recordEmptyRun, recordScheduledRun, type HistoryLine } from '../../lambdas/core/scheduled-runs/history';
import { renderTrendHtml, type TrendRun } from '../../lambdas/core/report/trend';
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
import { VirtualClock } from '../support/virtual-clock';

const SKIP = skipWithoutChromium('trend-browser');
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const WIDTHS = [1024, 1440] as const;

interface BrowserElement {
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<{
    width: number;
    height: number;
    getContext(
      kind: '2d',
    ): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } | null;
  }>;
}

const iv = (estimate: number, half: number) => ({ estimate, ci_low: estimate - half, ci_high: estimate + half });
const TAGS = ['request_latency', 'time_to_first_token'] as const;

function run(runId: string, scheduledTime: string, ttftB: number, verdict: 'worse' | 'no_difference'): HistoryLine {
  const stats = (p50: number) => ({ p50, p90: p50 * 1.5, p99: p50 * 2, mean: p50 * 1.1 });
  return {
    v: 1,
    run_id: runId,
    schedule: 'nightly',
    scheduled_time: scheduledTime,
    window: { start: '2026-11-22T14:00:00.000Z', end: '2026-11-22T15:00:00.000Z' },
    status: 'complete',
    report: `runs/${runId}/report.html`,
    targets: {
      A: {
        requests: 1000,
        succeeded: 995,
        errors: 3,
        dropped: 2,
        metrics: { request_latency: stats(800), time_to_first_token: stats(100) },
      },
      [HOSTILE]: {
        requests: 1000,
        succeeded: 990,
        errors: 6,
        dropped: 4,
        metrics: { request_latency: stats(810), time_to_first_token: stats(ttftB) },
      },
    },
    comparisons: [
      {
        baseline: 'A',
        candidate: HOSTILE,
        mode: 'paired',
        pairs: { used: 985, excluded: { candidate_failed: 6 } },
        metrics: TAGS.map((tag) => ({
          tag,
          unit: 'ms',
          verdict: tag === 'time_to_first_token' ? verdict : 'no_difference',
          verdict_reason: 'why',
          n: 985,
          difference_p50: iv(tag === 'time_to_first_token' ? ttftB - 100 : 10, 2),
          paired_shift: iv(tag === 'time_to_first_token' ? ttftB - 100 : 10, 2),
          relative_pct: iv(tag === 'time_to_first_token' ? ttftB - 100 : 1.2, 1),
          p_value_adjusted: 0.01,
        })),
        errors: { verdict: 'no_difference', baseline_rate: 0.003, candidate_rate: 0.006, difference: iv(0.003, 0.004) },
      },
    ],
  };
}

describe.skipIf(SKIP)('trend page in Chromium', () => {
  const chromium = useChromium('trend-browser');

  it.each(WIDTHS)(
    'three runs (one empty) at %i px: one point per run per series, verdicts, the table, no overflow, quiet legends, no errors, no network',
    async (width) => {
      const store = new MemoryObjectStore();
      const clock = new VirtualClock();
      const deps = { store, clock, notifier: null, resultsBucket: 'b', chartAssets: BUNDLED_CHART_ASSETS };
      await recordScheduledRun(deps, run('window-1', '2026-11-21T02:00:00.000Z', 101, 'no_difference'));
      const info: ScheduledRunInfo = {
        name: 'nightly',
        scheduledTime: '2026-11-22T02:00:00.000Z',
        timezone: 'UTC',
        window: { start: '2026-11-21T14:00:00.000Z', end: '2026-11-21T15:00:00.000Z' },
        targets: ['A', 'B'],
        dispatch: 'parallel',
      };
      await recordEmptyRun({ ...deps, runId: 'window-2', info, reason: 'no capture files in the window' });
      await recordScheduledRun(deps, run('window-3', '2026-11-23T02:00:00.000Z', 118, 'worse'));

      // Opened where it lives in the bucket: schedules/nightly/index.html.
      const opened = await openHtmlFile(
        chromium.browser,
        join(chromium.dir, String(width), 'schedules', 'nightly', 'index.html'),
        store.text(scheduleIndexKey('nightly')) as string,
        { viewport: { width, height: 900 } },
      );
      const { page } = opened;
      await saveScreenshot(page, `trend-${width}.png`);

      const charts = await page.$$eval('.chart[data-chart="trend"]', (els: BrowserElement[]) =>
        els.map((el) => {
          const c = el.querySelectorAll('canvas')[0];
          let red = 0;
          let inked = 0;
          if (c && c.width > 0) {
            const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
            for (let i = 0; i < px.length; i += 4) {
              const [r, g, b, a] = [px[i] as number, px[i + 1] as number, px[i + 2] as number, px[i + 3] as number];
              if (a > 128 && Math.max(r, g, b) - Math.min(r, g, b) > 60) inked++;
              if (a > 200 && Math.abs(r - 220) + Math.abs(g - 38) + Math.abs(b - 38) < 40) red++;
            }
          }
          return {
            metric: el.dataset.metric,
            points: JSON.parse(el.getAttribute('data-points') ?? 'null') as number[] | null,
            slots: el.getAttribute('data-slots'),
            inked,
            red,
          };
        }),
      );
      expect(charts.map((c) => c.metric)).toEqual([...TAGS]);
      for (const c of charts) {
        // A p50, A p90, B p50, B p90: a point for each of the two runs with results; three x slots, the empty run a gap.
        expect(c.points, c.metric).toEqual([2, 2, 2, 2]);
        expect(c.slots).toBe('3');
        expect(c.inked, `${c.metric} drawn`).toBeGreaterThan(150);
      }
      // The worse verdict marker (red) on the TTFT chart only.
      expect(charts.find((c) => c.metric === 'time_to_first_token')!.red).toBeGreaterThan(10);
      expect(charts.find((c) => c.metric === 'request_latency')!.red).toBe(0);

      const rows = await page.$$eval('table.runs tbody tr', (trs: BrowserElement[]) =>
        trs.map((tr) => [tr.getAttribute('data-run'), tr.getAttribute('data-status'), tr.textContent ?? '']),
      );
      expect(rows.map(([id, status]) => [id, status])).toEqual([
        ['window-3', 'complete'],
        ['window-2', 'empty'],
        ['window-1', 'complete'],
      ]);
      expect(rows[1]![2]).toContain('no capture files in the window');
      await expect(
        page.locator('tr[data-run="window-3"] [data-metric="time_to_first_token"] .badge').textContent(),
      ).resolves.toBe('worse');
      await expect(
        page.locator('tr[data-run="window-1"] [data-metric="time_to_first_token"] .badge').textContent(),
      ).resolves.toBe('no difference');
      // The effect with the decimals its interval supports (18 % within [17, 19]: one decimal), as report.html's table.
      await expect(
        page.locator('tr[data-run="window-3"] [data-metric="time_to_first_token"]').textContent(),
      ).resolves.toBe('Time to first token: worse +18.0 %');
      const links = await page.$$eval('table.runs a', (as: BrowserElement[]) => as.map((a) => a.getAttribute('href')));
      expect(links).toEqual(['../../runs/window-3/report.html', '../../runs/window-1/report.html']);
      await expect(page.locator('.chart-error').count()).resolves.toBe(0);
      await expectNoInjection(opened);
      await expect(page.locator('img').count()).resolves.toBe(0);
      expect(await overflowing(page)).toEqual([]);
      await expectQuietLegends(opened);

      expectQuietAndOffline(opened);
    },
  );

  it.each(WIDTHS)(
    'injected markup in every history field at %i px: stays text, runs nothing, requests nothing, charts drawn',
    async (width) => {
      const runs = [
        markedRun('2026-11-21T02:00:00.000Z', 'complete'),
        markedRun(INJECTED_MARKUP, 'deadline'),
        markedRun('2026-11-23T02:00:00.000Z', 'empty'),
        markedRun('2026-11-24T02:00:00.000Z', 'complete'),
      ];
      const html = renderTrendHtml(
        { schedule: INJECTED_MARKUP, generatedAt: INJECTED_MARKUP, runs, badLines: 2 },
        BUNDLED_CHART_ASSETS,
      );
      const opened = await openHtmlFile(
        chromium.browser,
        join(chromium.dir, `injected-${width}`, 'schedules', 'x', 'index.html'),
        html,
        { viewport: { width, height: 900 } },
      );
      const { page } = opened;
      await saveScreenshot(page, `trend-injected-${width}.png`);

      await expectNoInjection(opened);
      await expect(page.locator('main img, main svg, main link, main iframe').count()).resolves.toBe(0);
      await expect(page.locator('h1').textContent()).resolves.toBe(`Schedule ${INJECTED_MARKUP}`);
      const rows = await page.$$eval('table.runs tbody tr', (trs: BrowserElement[]) =>
        trs.map((tr) => [tr.getAttribute('data-run'), tr.textContent ?? '']),
      );
      expect(rows).toHaveLength(4);
      for (const [id, text] of rows) {
        expect(id).toBe(INJECTED_MARKUP);
        expect(text).toContain(INJECTED_MARKUP);
      }
      // A report key is a path under the bucket: the link stays relative, whatever the key says.
      const links = await page.$$eval('table.runs a', (as: BrowserElement[]) => as.map((a) => a.getAttribute('href')));
      expect(links.length).toBeGreaterThan(0);
      for (const href of links) expect(href).toBe(`../../${INJECTED_MARKUP}`);
      // Both metrics drawn from the runs with a time (the one whose time is not one has no place on the x axis).
      const charts = await page.$$eval('.chart[data-chart="trend"]', (els: BrowserElement[]) =>
        els.map((el) => ({
          metric: el.dataset.metric,
          points: JSON.parse(el.getAttribute('data-points') ?? 'null') as number[] | null,
        })),
      );
      expect(charts.map((c) => c.metric)).toEqual([...TAGS]);
      for (const c of charts) expect(c.points, c.metric).toEqual([2, 2, 2, 2]);
      await expect(page.locator('.chart .chart-error').count()).resolves.toBe(0);
      await expect(page.locator('main > p.chart-error').allTextContents()).resolves.toEqual([
        '2 history line(s) could not be read and are not shown.',
        '1 run(s) have no readable scheduled time: in the table, not in the charts.',
      ]);
      expect(await overflowing(page)).toEqual([]);
      await expectQuietLegends(opened);
      expectQuietAndOffline(opened);
    },
  );
});

/** Legends name their series and show no value until a point is hovered. */
async function expectQuietLegends(o: OpenedPage): Promise<void> {
  const legends = await legendTexts(o.page);
  expect(legends.length).toBeGreaterThan(0);
  for (const l of legends) {
    expect(l.values, `${l.chart}: no value before a hover`).toEqual([]);
    expect(l.names.length, l.chart).toBeGreaterThan(0);
  }
}

/**
 * A run as a history line could say it, with INJECTED_MARKUP in every string of it: its id,
 * window, reason, report key, target names, the comparison's targets, mode, verdicts and
 * reasons (the line's schema is bypassed: the page must not rely on it).
 */
function markedRun(scheduledTime: string, status: TrendRun['status']): TrendRun {
  const m = INJECTED_MARKUP;
  const stats = (p50: number) => ({ p50, p90: p50 * 1.5, p99: p50 * 2, mean: p50 * 1.1 });
  const metrics = { request_latency: stats(800), time_to_first_token: stats(100), [m]: stats(1) };
  const empty = status === 'empty';
  return {
    run_id: m,
    scheduled_time: scheduledTime,
    window: { start: m, end: m },
    status,
    reason: m,
    report: empty ? null : m,
    targets: empty
      ? {}
      : {
          [`${m}A`]: { requests: 10, succeeded: 9, errors: 1, dropped: 0, metrics },
          [`${m}B`]: { requests: 10, succeeded: 8, errors: 2, dropped: 0, metrics },
        },
    comparisons: empty
      ? []
      : [
          {
            baseline: `${m}A`,
            candidate: `${m}B`,
            mode: m,
            metrics: [...TAGS, m].map((tag) => ({
              tag,
              verdict: (tag === m ? m : 'worse') as 'worse',
              verdict_reason: m,
              relative_pct: { estimate: 3 },
            })),
            errors: { verdict: m as 'worse' },
          },
          {
            baseline: `${m}A`,
            candidate: m,
            mode: 'paired',
            metrics: TAGS.map((tag) => ({
              tag,
              verdict: 'inconclusive' as const,
              verdict_reason: m,
              relative_pct: { estimate: null },
            })),
            errors: { verdict: 'no_difference' as const },
          },
        ],
  };
}
