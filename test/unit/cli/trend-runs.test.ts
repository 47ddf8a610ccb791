/**
 * History lines from local runs (lambdas/local/trend-runs.ts): three real replays (the CLI's
 * replay in-process, two in-process mock servers as A and B, captures from
 * test/support/capture-week.ts), read back as the trend command reads them. Each line is
 * checked against the run's own files, computed here independently: the counts of each
 * target's run_manifest.json; p50/p90/p99/mean of each compared metric over the succeeded
 * records of profile_export.jsonl (what the pipeline's run analysis puts in its lines,
 * linear-interpolation quantiles as numpy's); the verdicts and effects of comparison.json;
 * the window (--from/--to when given, else the first and last capture times replayed); the
 * report link from where the page is written. Folders that are not finished runs are skipped
 * with their reason, and the lines come sorted by time.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPARED_METRICS } from '../../../lambdas/core/compare/types';
import type { HistoryLine } from '../../../lambdas/core/scheduled-runs/history';
import { replayCommand } from '../../../lambdas/local/replay/command';
import { linkKeyFrom } from '../../../lambdas/local/trend-command';
import { runsFolderLines } from '../../../lambdas/local/trend-runs';
import { startMockServer, type MockServer } from '../../../lambdas/mocks/mock-server';
import { captureWeek, HOUR_MS } from '../../support/capture-week';

/** numpy's default percentile: linear between closest ranks. */
function quantile(sorted: number[], q: number): number {
  const pos = (q / 100) * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
}

interface RecordLine {
  error: unknown;
  metrics: Record<string, { value: number }>;
  capture_replay: { capture_time_ms: number };
}

const sink = () => {
  let text = '';
  return {
    stream: { write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WritableStream,
    text: () => text,
  };
};

describe('history lines from local run folders', () => {
  let dir = '';
  let a: MockServer;
  let b: MockServer;
  const week = captureWeek({ hours: 4 });
  let out = '';

  const replay = async (runId: string, extra: Record<string, unknown>) => {
    const err = sink();
    const code = await replayCommand({
      capturesPath: join(dir, 'captures'),
      target: [`A=${a.url}`, `B=${b.url}`],
      out,
      runId,
      path: '/v1/chat/completions',
      targetName: 'target',
      streaming: true,
      timeScale: 20_000,
      intraSecond: 'spread',
      seed: 1,
      timeout: 10_000,
      lead: 100,
      latePolicy: 'fire',
      progress: false,
      preflight: false,
      rehearsal: 0,
      resamples: 200,
      stdout: sink().stream,
      stderr: err.stream,
      ...extra,
    });
    expect(code, err.text()).toBe(0);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'trend-runs-'));
    out = join(dir, 'runs');
    for (const [key, text] of week.files) {
      await mkdir(join(dir, 'captures', key, '..'), { recursive: true });
      await writeFile(join(dir, 'captures', key), text);
    }
    [a, b] = await Promise.all([
      startMockServer({ port: 0, ttftMs: 1, itlMs: 1, outputTokens: 3 }),
      startMockServer({ port: 0, ttftMs: 4, itlMs: 1, outputTokens: 3 }),
    ]);
    // Made in this order; their times sort them.
    await replay('run-1', { endOffset: 90 * 60_000 });
    await replay('run-2', { from: week.startMs + HOUR_MS, to: week.startMs + 2 * HOUR_MS + 30 * 60_000 });
    await replay('run-3', {});
    // Not finished runs: a target without its manifest, and a folder a failed run left (ingest report only).
    await mkdir(join(out, 'unfinished', 'A'), { recursive: true });
    await writeFile(join(out, 'unfinished', 'A', 'profile_export.jsonl'), '');
    await mkdir(join(out, 'nothing'), { recursive: true });
    await writeFile(join(out, 'nothing', 'ingest_report.json'), '{}');
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const lines = async () => runsFolderLines(out, 'local', (report) => linkKeyFrom(join(dir, 'site', 'trend'), report));

  it('a line per finished run, in time order; the others skipped with their reason', async () => {
    const { lines: got, skipped } = await lines();
    expect(got.map((l) => l.run_id)).toEqual(['run-1', 'run-2', 'run-3']);
    expect(got.every((l) => l.schedule === 'local' && l.status === 'complete')).toBe(true);
    expect(skipped).toEqual([
      { folder: join(out, 'nothing'), reason: 'no target folders (<target>/run_manifest.json)' },
      {
        folder: join(out, 'unfinished'),
        reason: 'A/run_manifest.json is missing or not JSON: the run has not finished',
      },
    ]);
  });

  it('counts, metrics and verdicts are those of the run files', async () => {
    const { lines: got } = await lines();
    for (const line of got) {
      const runDir = join(out, line.run_id);
      for (const target of ['A', 'B']) {
        const manifest = JSON.parse(await readFile(join(runDir, target, 'run_manifest.json'), 'utf8')) as {
          scheduled: number;
          succeeded: number;
          failed: number;
          dropped: number;
        };
        const t = line.targets[target] as HistoryLine['targets'][string];
        expect({ requests: t.requests, succeeded: t.succeeded, errors: t.errors, dropped: t.dropped }).toEqual({
          requests: manifest.scheduled,
          succeeded: manifest.succeeded,
          errors: manifest.failed,
          dropped: manifest.dropped,
        });
        const records = (await readFile(join(runDir, target, 'profile_export.jsonl'), 'utf8'))
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as RecordLine)
          .filter((r) => r.error === null);
        for (const { tag } of COMPARED_METRICS) {
          const values = records
            .map((r) => r.metrics[tag]?.value)
            .filter((v): v is number => typeof v === 'number')
            .sort((x, y) => x - y);
          const stats = t.metrics[tag] as { p50: number; p90: number; p99: number; mean: number };
          expect(stats.p50).toBeCloseTo(quantile(values, 50), 9);
          expect(stats.p90).toBeCloseTo(quantile(values, 90), 9);
          expect(stats.p99).toBeCloseTo(quantile(values, 99), 9);
          expect(stats.mean).toBeCloseTo(values.reduce((s, v) => s + v, 0) / values.length, 9);
        }
      }
      const comparison = JSON.parse(await readFile(join(runDir, 'comparison.json'), 'utf8')) as {
        baseline: string;
        candidate: string;
        metrics: { tag: string; verdict: string; paired_shift: { relative_pct: unknown } | null }[];
        errors: { verdict: string };
      };
      const c = line.comparisons[0] as HistoryLine['comparisons'][number];
      expect([c.baseline, c.candidate]).toEqual(['A', 'B']);
      expect(c.metrics.map((m) => [m.tag, m.verdict, m.relative_pct])).toEqual(
        comparison.metrics.map((m) => [m.tag, m.verdict, m.paired_shift?.relative_pct]),
      );
      expect(c.errors.verdict).toBe(comparison.errors.verdict);
    }
  });

  it('the window: --from/--to as given, else the first and last capture times replayed; the scheduled time is the run start', async () => {
    const { lines: got } = await lines();
    const [one, two, three] = got as [HistoryLine, HistoryLine, HistoryLine];
    const iso = (ms: number) => new Date(ms).toISOString();
    // Offsets 0 to 90 min from the first record (hour 0, minute 10): up to 01:40, inclusive, a record's time.
    expect(one.window).toEqual({
      start: iso(week.startMs + 10 * 60_000),
      end: iso(week.startMs + HOUR_MS + 40 * 60_000),
    });
    expect(two.window).toEqual({
      start: iso(week.startMs + HOUR_MS),
      end: iso(week.startMs + 2 * HOUR_MS + 30 * 60_000),
    });
    // Whole seconds spread: the last record (03:59:30) alone in its second stays there.
    expect(three.window).toEqual({
      start: iso(week.startMs + 10 * 60_000),
      end: iso(week.startMs + 3 * HOUR_MS + 59 * 60_000 + 30_000),
    });
    const manifest = JSON.parse(await readFile(join(out, 'run-2', 'A', 'run_manifest.json'), 'utf8')) as {
      startedAt: string;
    };
    expect(two.scheduled_time).toBe(manifest.startedAt);
  });

  it("each report link, read as the page's ../../<key>, reaches the run's report.html", async () => {
    const { lines: got } = await lines();
    for (const line of got)
      expect(resolve(join(dir, 'site', 'trend'), `../../${line.report as string}`)).toBe(
        join(out, line.run_id, 'report.html'),
      );
  });
});
