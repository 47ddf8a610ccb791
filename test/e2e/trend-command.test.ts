/**
 * `capture-replay trend` as a user runs it (the built CLI, dist/capture-replay.mjs): three A/B runs made with
 * `replay` (two mock servers, their own processes, B slower to first token), then the trend
 * page of their folder, opened in Chromium (test/support/browser.ts) from where the command
 * wrote it: a chart per compared metric drawn with a point per run for each target's p50 and
 * p90, a table row per run whose report link opens that run's report.html, no console error,
 * no request but the page, nothing wider than its box. And from a schedule's history.jsonl as
 * downloaded from the results bucket, the page written elsewhere (--out): the report links
 * rewritten to reach the downloaded runs, unreadable lines counted on the page; a history of
 * two schedules asks for --schedule. A screenshot of the local page goes to test-artifacts/.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryLine } from '../../lambdas/core/scheduled-runs/history';
import {
  expectNoInjection,
  expectQuietAndOffline,
  openHtmlFile,
  overflowing,
  skipWithoutChromium,
  useChromium,
  saveScreenshot,
} from '../support/browser';
import { captureWeek } from '../support/capture-week';
import { runCli, startMockProcess, type MockProcess } from '../support/processes';

const SKIP = skipWithoutChromium('trend-command');

interface ChartView {
  metric: string | undefined;
  points: number[] | null;
  slots: string | null;
  inked: number;
}

interface BrowserElement {
  dataset: Record<string, string | undefined>;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<{
    width: number;
    height: number;
    getContext(
      kind: '2d',
    ): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } | null;
  }>;
}

/** A history line as the pipeline appends it, for a run whose report is under runs/<id>/. */
function historyLine(runId: string, schedule: string, scheduledTime: string, ttftB: number): HistoryLine {
  const stats = (p50: number) => ({ p50, p90: p50 * 1.4, p99: p50 * 2, mean: p50 * 1.1 });
  const iv = (estimate: number) => ({ estimate, ci_low: estimate - 1, ci_high: estimate + 1 });
  return {
    v: 1,
    run_id: runId,
    schedule,
    scheduled_time: scheduledTime,
    window: { start: '2026-11-20T01:00:00.000Z', end: '2026-11-20T02:00:00.000Z' },
    status: 'complete',
    report: `runs/${runId}/report.html`,
    targets: {
      A: { requests: 100, succeeded: 100, errors: 0, dropped: 0, metrics: { time_to_first_token: stats(100) } },
      B: { requests: 100, succeeded: 99, errors: 1, dropped: 0, metrics: { time_to_first_token: stats(ttftB) } },
    },
    comparisons: [
      {
        baseline: 'A',
        candidate: 'B',
        mode: 'paired',
        pairs: { used: 99, excluded: { candidate_failed: 1 } },
        metrics: [
          {
            tag: 'time_to_first_token',
            unit: 'ms',
            verdict: ttftB > 105 ? 'worse' : 'no_difference',
            verdict_reason: 'why',
            n: 99,
            difference_p50: iv(ttftB - 100),
            paired_shift: iv(ttftB - 100),
            relative_pct: iv(ttftB - 100),
            p_value_adjusted: 0.01,
          },
        ],
        errors: { verdict: 'no_difference', baseline_rate: 0, candidate_rate: 0.01, difference: iv(0.01) },
      },
    ],
  };
}

describe.skipIf(SKIP)('trend command: the trend page from local runs and from a downloaded history', () => {
  const chromium = useChromium('trend-command');
  let dir = '';
  let a: MockProcess;
  let b: MockProcess;

  const charts = (page: Awaited<ReturnType<typeof openHtmlFile>>['page']) =>
    page.$$eval('.chart[data-chart="trend"]', (els: BrowserElement[]) =>
      els.map((el): ChartView => {
        const c = el.querySelectorAll('canvas')[0];
        let inked = 0;
        if (c && c.width > 0) {
          const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
          for (let i = 0; i < px.length; i += 4)
            if (
              (px[i + 3] as number) > 128 &&
              Math.max(px[i] as number, px[i + 1] as number, px[i + 2] as number) -
                Math.min(px[i] as number, px[i + 1] as number, px[i + 2] as number) >
                60
            )
              inked++;
        }
        return {
          metric: el.dataset.metric,
          points: JSON.parse(el.getAttribute('data-points') ?? 'null') as number[] | null,
          slots: el.getAttribute('data-slots'),
          inked,
        };
      }),
    );
  /** Each report link of the page, resolved from where the page is: the file it opens. */
  const linkedFiles = async (page: Awaited<ReturnType<typeof openHtmlFile>>['page']) =>
    (await page.$$eval('table.runs a', (as: { href: string }[]) => as.map((x) => x.href))).map((href) =>
      fileURLToPath(href),
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'trend-command-'));
    [a, b] = await Promise.all([
      startMockProcess(['--ttft-ms', '2', '--itl-ms', '1', '--output-tokens', '3']),
      startMockProcess(['--ttft-ms', '12', '--itl-ms', '1', '--output-tokens', '3']),
    ]);
    const week = captureWeek({ hours: 2 });
    for (const [key, text] of week.files) {
      await mkdir(join(dir, 'captures', dirname(key)), { recursive: true });
      await writeFile(join(dir, 'captures', key), text);
    }
    for (const runId of ['nightly-1', 'nightly-2', 'nightly-3']) {
      const run = await runCli([
        'replay',
        join(dir, 'captures'),
        '--target',
        `A=${a.url}`,
        '--target',
        `B=${b.url}`,
        '--streaming',
        '--out',
        join(dir, 'runs'),
        '--run-id',
        runId,
        '--time-scale',
        '20000',
        '--rehearsal',
        '0',
        '--resamples',
        '200',
        '--no-progress',
      ]);
      expect(run.code, run.stderr).toBe(0);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('from a folder of local runs: charts drawn with a point per run, a row per run whose link opens its report', async () => {
    const result = await runCli(['trend', join(dir, 'runs')]);
    const page = join(dir, 'runs', 'index.html');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`Trend page of runs: ${page} (3 run(s))\n`);

    const opened = await openHtmlFile(chromium.browser, page, await readFile(page, 'utf8'), {
      viewport: { width: 1024, height: 900 },
    });
    await saveScreenshot(opened.page, 'trend-command-1024.png');
    await expect(opened.page.locator('h1').textContent()).resolves.toBe('Schedule runs');
    const drawn = await charts(opened.page);
    expect(drawn.length).toBeGreaterThanOrEqual(4);
    for (const c of drawn) {
      // A p50, A p90, B p50, B p90: three runs each.
      expect(c.points, c.metric).toEqual([3, 3, 3, 3]);
      expect(c.slots, c.metric).toBe('3');
      expect(c.inked, `${c.metric} drawn`).toBeGreaterThan(150);
    }
    const rows = await opened.page.$$eval('table.runs tbody tr', (trs: BrowserElement[]) =>
      trs.map((tr) => tr.getAttribute('data-run')),
    );
    expect(rows).toEqual(['nightly-3', 'nightly-2', 'nightly-1']);
    expect(await linkedFiles(opened.page)).toEqual(
      ['nightly-3', 'nightly-2', 'nightly-1'].map((id) => join(dir, 'runs', id, 'report.html')),
    );
    await expectNoInjection(opened);
    expect(await overflowing(opened.page)).toEqual([]);
    expectQuietAndOffline(opened);
  });

  it('from a downloaded history.jsonl, written elsewhere: links rewritten to the downloaded runs, unreadable lines counted', async () => {
    const results = join(dir, 'results');
    const lines = [
      historyLine('w-1', 'nightly', '2026-11-21T02:00:00.000Z', 101),
      historyLine('w-2', 'nightly', '2026-11-22T02:00:00.000Z', 120),
    ];
    await mkdir(join(results, 'schedules', 'nightly'), { recursive: true });
    await writeFile(
      join(results, 'schedules', 'nightly', 'history.jsonl'),
      [...lines.map((l) => JSON.stringify(l)), '{"not": "a line"}', ''].join('\n'),
    );
    for (const l of lines) {
      await mkdir(join(results, 'runs', l.run_id), { recursive: true });
      await writeFile(join(results, 'runs', l.run_id, 'report.html'), '<!doctype html><title>report</title>');
    }
    const out = join(dir, 'elsewhere', 'page.html');
    const result = await runCli(['trend', join(results, 'schedules', 'nightly', 'history.jsonl'), '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`Trend page of nightly: ${out} (2 run(s), 1 line(s) not shown)\n`);

    const opened = await openHtmlFile(chromium.browser, out, await readFile(out, 'utf8'), {
      viewport: { width: 1024, height: 900 },
    });
    const drawn = await charts(opened.page);
    expect(drawn.map((c) => [c.metric, c.points])).toEqual([['time_to_first_token', [2, 2, 2, 2]]]);
    expect(drawn[0]!.inked).toBeGreaterThan(150);
    const linked = await linkedFiles(opened.page);
    expect(linked).toEqual([join(results, 'runs', 'w-2', 'report.html'), join(results, 'runs', 'w-1', 'report.html')]);
    expect(linked.every((f) => existsSync(f))).toBe(true);
    await expect(opened.page.locator('main > p.chart-error').allTextContents()).resolves.toEqual([
      '1 history line(s) could not be read and are not shown.',
    ]);
    expectQuietAndOffline(opened);
  });

  it('a history of two schedules asks for --schedule; a missing source: one line, exit 1', async () => {
    const file = join(dir, 'two.jsonl');
    await writeFile(
      file,
      [
        historyLine('x-1', 'nightly', '2026-11-21T02:00:00.000Z', 100),
        historyLine('y-1', 'hourly', '2026-11-21T03:00:00.000Z', 100),
      ]
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    const both = await runCli(['trend', file]);
    expect(both.code).toBe(1);
    expect(both.stderr).toBe(
      `capture-replay: ${file} holds the lines of several schedules (nightly, hourly): pick one with --schedule\n`,
    );
    const one = await runCli(['trend', file, '--schedule', 'hourly', '--out', join(dir, 'hourly.html')]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain('(1 run(s))');
    const missing = await runCli(['trend', join(dir, 'nowhere')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `capture-replay: ${join(dir, 'nowhere')}: no such file or folder (give a schedule's history.jsonl or a folder of runs)\n`,
    );
  });
});
