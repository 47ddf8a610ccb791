/**
 * A schedule's history on the memory store (S3's conditional-write semantics): one line per
 * run whatever the repeats and races, lost races retried, lines it cannot read skipped,
 * counted and kept; empty runs; the summary's subject and message.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { BUNDLED_CHART_ASSETS } from '../../../lambdas/adapters/bundled-chart-assets';
import { scheduleHistoryKey, scheduleIndexKey } from '../../../lambdas/core/scheduled-runs/contract';
import {
  appendHistoryLine,
  headline,
  parseHistory,
  readHistory,
  recordEmptyRun,
  recordScheduledRun,
  summaryOf,
  type HistoryLine,
} from '../../../lambdas/core/scheduled-runs/history';
import type { ObjectStore } from '../../../lambdas/ports';
import { INFO, RecordingNotifier } from '../../support/scheduled-run';
import { VirtualClock } from '../../support/virtual-clock';

const iv = (estimate: number | null, lo: number | null = null, hi: number | null = null) => ({
  estimate,
  ci_low: lo,
  ci_high: hi,
});

function line(
  runId: string,
  overrides: Partial<HistoryLine> = {},
  ttft: { verdict: HistoryLine['comparisons'][number]['metrics'][number]['verdict']; pct: number; reason?: string } = {
    verdict: 'no_difference',
    pct: 0.4,
  },
): HistoryLine {
  return {
    v: 1,
    run_id: runId,
    schedule: 'nightly',
    scheduled_time: INFO.scheduledTime,
    window: INFO.window,
    status: 'complete',
    report: `runs/${runId}/report.html`,
    targets: {
      A: {
        requests: 1000,
        succeeded: 990,
        errors: 6,
        dropped: 4,
        metrics: { time_to_first_token: { p50: 100, p90: 150, p99: 220, mean: 110 } },
      },
      B: {
        requests: 1000,
        succeeded: 985,
        errors: 9,
        dropped: 6,
        metrics: { time_to_first_token: { p50: 118, p90: 170, p99: 260, mean: 129 } },
      },
    },
    comparisons: [
      {
        baseline: 'A',
        candidate: 'B',
        mode: 'paired',
        pairs: {
          used: 975,
          excluded: { candidate_failed: 9, baseline_failed: 6, candidate_dropped: 6, both_dropped: 4 },
        },
        metrics: [
          {
            tag: 'time_to_first_token',
            unit: 'ms',
            verdict: ttft.verdict,
            verdict_reason: ttft.reason ?? 'reason',
            n: 975,
            difference_p50: iv(18, 15, 21),
            paired_shift: iv(17.9, 15.2, 20.8),
            relative_pct: iv(ttft.pct, ttft.pct - 2, ttft.pct + 2),
            p_value_adjusted: 0.0001,
          },
          {
            tag: 'request_latency',
            unit: 'ms',
            verdict: 'no_difference',
            verdict_reason: 'not significant',
            n: 975,
            difference_p50: iv(1, -2, 4),
            paired_shift: iv(0.5, -1, 2),
            relative_pct: iv(0.1, -0.3, 0.5),
            p_value_adjusted: 0.6,
          },
        ],
        errors: {
          verdict: 'no_difference',
          baseline_rate: 0.006,
          candidate_rate: 0.009,
          difference: iv(0.003, -0.002, 0.008),
        },
      },
    ],
    ...overrides,
  };
}

const deps = (store: ObjectStore, clock: VirtualClock, notifier: RecordingNotifier | null = null) => ({
  store,
  clock,
  notifier,
  resultsBucket: 'results-bucket',
  chartAssets: BUNDLED_CHART_ASSETS,
});

/**
 * A store where, before the first `n` conditional writes of the history go through, another
 * writer appends a line of its own: the ETag read is stale each time.
 */
class RacingStore extends MemoryObjectStore {
  conditionalWrites = 0;
  constructor(private readonly interferences: number) {
    super();
  }
  override async putIfMatch(
    key: string,
    body: string | Uint8Array,
    etag: string | null,
    contentType?: string,
  ): Promise<boolean> {
    if (key.endsWith('history.jsonl')) {
      this.conditionalWrites++;
      if (this.conditionalWrites <= this.interferences) {
        const current = this.text(key) ?? '';
        await super.put(key, current + JSON.stringify(line(`other-${this.conditionalWrites}`)) + '\n');
      }
    }
    return super.putIfMatch(key, body, etag, contentType);
  }
}

describe('history append', () => {
  it('appends a run once: a repeat finds it present and writes nothing', async () => {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock();
    expect((await appendHistoryLine(store, clock, line('r1'))).outcome).toBe('appended');
    const before = store.text(scheduleHistoryKey('nightly'));
    expect((await appendHistoryLine(store, clock, line('r1', { status: 'deadline' }))).outcome).toBe('present');
    expect(store.text(scheduleHistoryKey('nightly'))).toBe(before);
    expect((await appendHistoryLine(store, clock, line('r2'))).outcome).toBe('appended');
    expect((await readHistory(store, 'nightly')).lines.map((l) => l.run_id)).toEqual(['r1', 'r2']);
  });

  it("a changed ETag is re-read and retried; every writer's line survives", async () => {
    const store = new RacingStore(2);
    const clock = new VirtualClock();
    expect((await appendHistoryLine(store, clock, line('mine'))).outcome).toBe('appended');
    expect(store.conditionalWrites).toBe(3);
    expect((await readHistory(store, 'nightly')).lines.map((l) => l.run_id)).toEqual(['other-1', 'other-2', 'mine']);
  });

  it('gives up after the attempts, with an error that names the run (SQS then redelivers)', async () => {
    const store = new RacingStore(100);
    await expect(appendHistoryLine(store, new VirtualClock(), line('mine'), { attempts: 4 })).rejects.toThrow(
      /run mine not appended: the history changed under each of 4 attempts/,
    );
    expect(store.conditionalWrites).toBe(4);
  });

  it('two finalisers of one run at once: one line, one notification', async () => {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock();
    const notifier = new RecordingNotifier();
    const results = await Promise.all([
      recordScheduledRun(deps(store, clock, notifier), line('r1')),
      recordScheduledRun(deps(store, clock, notifier), line('r1')),
    ]);
    expect(results.map((r) => r.outcome).sort()).toEqual(['appended', 'present']);
    expect(results.filter((r) => r.published)).toHaveLength(1);
    expect(notifier.published).toHaveLength(1);
    expect(parseHistory(store.text(scheduleHistoryKey('nightly')) as string).lines).toHaveLength(1);
  });

  it('two runs of one schedule at once: both lines, and the page written last shows both', async () => {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock();
    await Promise.all([
      recordScheduledRun(deps(store, clock), line('r1')),
      recordScheduledRun(deps(store, clock), line('r2', { scheduled_time: '2026-11-24T02:00:00.000Z' })),
    ]);
    expect((await readHistory(store, 'nightly')).lines.map((l) => l.run_id).sort()).toEqual(['r1', 'r2']);
    const page = store.text(scheduleIndexKey('nightly')) as string;
    expect(page).toContain('data-run="r1"');
    expect(page).toContain('data-run="r2"');
  });

  it('lines it cannot read are skipped, counted, kept as they were, and the page says how many', async () => {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock();
    const garbage = '{"v":1,"run_id":"x"'; // cut short
    const wrongShape = JSON.stringify({ ...line('old'), status: 'exploded' });
    await store.put(
      scheduleHistoryKey('nightly'),
      `${JSON.stringify(line('r0'))}\n${garbage}\n${wrongShape}\nnot json at all`,
    ); // no final newline
    const read = await readHistory(store, 'nightly');
    expect(read.lines.map((l) => l.run_id)).toEqual(['r0']);
    expect(read.badLines).toBe(3);
    await recordScheduledRun(deps(store, clock), line('r1'));
    const text = store.text(scheduleHistoryKey('nightly')) as string;
    expect(text.split('\n')).toEqual([
      JSON.stringify(line('r0')),
      garbage,
      wrongShape,
      'not json at all',
      JSON.stringify(line('r1')),
      '',
    ]);
    expect(parseHistory(text)).toMatchObject({ badLines: 3 });
    expect(store.text(scheduleIndexKey('nightly'))).toContain('3 history line(s) could not be read and are not shown.');
  });
});

describe('empty runs', () => {
  it('one line with the reason, the page rewritten, the summary published once', async () => {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock();
    const notifier = new RecordingNotifier();
    const args = {
      store,
      clock,
      notifier,
      runId: 'window-e1',
      info: INFO,
      reason: 'no capture files in the window',
      resultsBucket: 'results-bucket',
      chartAssets: BUNDLED_CHART_ASSETS,
    };
    await recordEmptyRun(args);
    await recordEmptyRun(args);
    const { lines } = await readHistory(store, 'nightly');
    expect(lines).toEqual([
      {
        v: 1,
        run_id: 'window-e1',
        schedule: 'nightly',
        scheduled_time: INFO.scheduledTime,
        window: INFO.window,
        status: 'empty',
        reason: 'no capture files in the window',
        report: null,
        targets: {},
        comparisons: [],
      },
    ]);
    expect(notifier.published).toHaveLength(1);
    expect(notifier.published[0]!.subject).toBe('capture-replay nightly: empty window 2026-11-23 02:00 UTC');
    expect(notifier.published[0]!.message).toContain('Status: empty - no capture files in the window');
    expect(notifier.published[0]!.message).not.toContain('Report:');
    const page = store.text(scheduleIndexKey('nightly')) as string;
    expect(page).toContain('data-status="empty"');
    expect(page).toContain('no capture files in the window');
  });

  it('works without a topic and without the chart library (tables only)', async () => {
    const store = new MemoryObjectStore();
    await recordEmptyRun({
      store,
      clock: new VirtualClock(),
      notifier: null,
      runId: 'window-e2',
      info: INFO,
      reason: 'nothing any target takes',
      resultsBucket: 'b',
    });
    const page = store.text(scheduleIndexKey('nightly')) as string;
    expect(page).toContain('nothing any target takes');
    expect(page).not.toContain('github.com/leeoniya/uPlot');
    expect(page).toContain('the chart library is not in this page');
  });
});

describe('summary', () => {
  it('worse is in the subject, in capitals, with the metric and its relative change', () => {
    const l = line('r1', {}, { verdict: 'worse', pct: 18.2 });
    const { subject, message } = summaryOf(l, 'results-bucket');
    expect(subject).toBe('capture-replay nightly: WORSE (time_to_first_token +18%) 2026-11-23 02:00 UTC');
    expect(message).toContain(
      'time_to_first_token: WORSE; median B - A = +17.90 ms [+15.20, +20.80] (+18% [+16%, +20%])',
    );
    expect(message).toContain(
      'request_latency: no difference; median B - A = +0.5 ms [-1.00, +2.00] (+0.1% [-0.3%, +0.5%])',
    );
    expect(message).toContain('error rate: no difference; B - A = +0.3 pp [-0.2, +0.8]');
    expect(message).toContain('A: 1000 scheduled, 990 succeeded, 6 errors, 4 dropped');
    expect(message).toContain('Report: s3://results-bucket/runs/r1/report.html');
    expect(message).toContain('Trend: s3://results-bucket/schedules/nightly/index.html');
  });

  it.each([
    ['no difference', line('r'), 'no difference'],
    ['better', line('r', {}, { verdict: 'better', pct: -7.5 }), 'better (time_to_first_token -7.5%)'],
    [
      'all inconclusive',
      {
        ...line('r'),
        comparisons: line('r').comparisons.map((c) => ({
          ...c,
          metrics: c.metrics.map((m) => ({ ...m, verdict: 'inconclusive' as const })),
        })),
      },
      'inconclusive (too few requests for a verdict)',
    ],
    [
      'some inconclusive',
      line('r', {}, { verdict: 'inconclusive', pct: 3 }),
      'no difference (1 metric(s) inconclusive)',
    ],
    [
      'worse error rate',
      {
        ...line('r'),
        comparisons: line('r').comparisons.map((c) => ({ ...c, errors: { ...c.errors, verdict: 'worse' as const } })),
      },
      'WORSE (error rate)',
    ],
    ['empty', line('r', { status: 'empty', comparisons: [], targets: {} }), 'empty window'],
  ])('%s', (_name, l, expected) => {
    expect(headline(l)).toBe(expected);
  });

  it('several candidates: the worse one is named', () => {
    const l = line('r', {}, { verdict: 'worse', pct: 30 });
    const c = {
      ...l.comparisons[0]!,
      candidate: 'C',
      metrics: l.comparisons[0]!.metrics.map((m) => ({ ...m, verdict: 'no_difference' as const })),
    };
    expect(headline({ ...l, comparisons: [l.comparisons[0]!, c] })).toBe('WORSE (B time_to_first_token +30%)');
  });
});
