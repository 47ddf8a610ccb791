/**
 * The run's root in the pipeline, on the memory store: when the last target of a run is
 * final, comparison.json and report.html appear under runs/<run>/ with the numbers analyse()
 * gives on the same records; not before; once per run however many finalisers see it; and a
 * scheduled run's history line, trend page and summary (once, without any body).
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { BUNDLED_CHART_ASSETS } from '../../../lambdas/adapters/bundled-chart-assets';
import { analyse, TargetAccumulator } from '../../../lambdas/core/compare/analysis';
import { DEFAULT_COMPARE_OPTIONS, type ComparisonDocument } from '../../../lambdas/core/compare/types';
import { collectMessage, collectRun, handleCollect } from '../../../lambdas/core/pipeline/collect';
import { summarize } from '../../../lambdas/core/metrics/stats';
import {
  analyseRunIfFinal,
  analysisMarkerKey,
  type RunAnalysisDeps,
} from '../../../lambdas/core/pipeline/run-analysis';
import { scheduleHistoryKey, scheduleIndexKey } from '../../../lambdas/core/scheduled-runs/contract';
import { parseHistory } from '../../../lambdas/core/scheduled-runs/history';
import type { Notifier } from '../../../lambdas/ports';
import { VirtualClock } from '../../support/virtual-clock';
import { INFO, MS, RecordingNotifier, resultLine, SECRET, START, writeRun } from '../../support/scheduled-run';

/** The analysis the local CLI would make of the same requests (records and drops in plan order). */
function expectedAnalysis(runId: string, requests: number) {
  const targets = ['A', 'B'].map((name) => {
    const acc = new TargetAccumulator(name);
    for (let i = 0; i < requests; i++) {
      const line = resultLine(runId, name, i);
      if (line.kind === 'record') acc.addRecord(line.record);
      else acc.addDropped(`ev-${line.index}`, line.dropReason, null, line.scheduledNs, line.index);
    }
    return {
      accumulator: acc,
      summary: { name, scheduled: 0, succeeded: 0, failed: 0, dropped: 0, droppedByReason: {}, failedByType: {} },
    };
  });
  return analyse({ title: 't', runId, generatedAt: 'x', targets, compare: DEFAULT_COMPARE_OPTIONS });
}

const withoutTime = (doc: ComparisonDocument) => ({ ...doc, generated_at: null });

function deps(store: MemoryObjectStore, clock: VirtualClock, notifier: Notifier | null = null): RunAnalysisDeps {
  return { store, clock, notifier, resultsBucket: 'results-bucket', chartAssets: BUNDLED_CHART_ASSETS };
}

describe('run analysis at the run root', () => {
  it('waits for every target, then writes comparison.json and report.html with the numbers analyse() gives', async () => {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock(START + 3_700_000n * MS);
    await writeRun(store, 'r1', { requests: 240 });

    // Before any target is final; then with A alone.
    expect((await analyseRunIfFinal('r1', deps(store, clock))).status).toBe('not-final');
    expect((await collectRun('r1', 'A', { store, clock })).status).toBe('complete');
    expect((await analyseRunIfFinal('r1', deps(store, clock))).status).toBe('not-final');
    expect(store.text('runs/r1/comparison.json')).toBeNull();
    expect(store.text('runs/r1/report.html')).toBeNull();

    expect((await collectRun('r1', 'B', { store, clock })).status).toBe('complete');
    const result = await analyseRunIfFinal('r1', deps(store, clock));
    expect(result.status).toBe('analysed');
    expect(result.keys).toEqual(['runs/r1/comparison.json', 'runs/r1/report.html']);
    const written = JSON.parse(store.text('runs/r1/comparison.json') as string) as ComparisonDocument;
    const expected = expectedAnalysis('r1', 240).comparison as ComparisonDocument;
    expect(withoutTime(written)).toEqual(JSON.parse(JSON.stringify(withoutTime(expected))));
    // What the fixture makes: B's first token later (worse), B's drop of index 3 a pair excluded by its reason.
    expect(written.metrics.find((m) => m.tag === 'time_to_first_token')?.verdict).toBe('worse');
    expect(written.pairs.excluded).toEqual({ candidate_dropped: 1, candidate_failed: 4 });
    expect(written.pairs.used).toBe(240 - 5);
    const html = store.text('runs/r1/report.html') as string;
    expect(html).toContain('data-verdict="worse"');
    expect(html).toContain('http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;');
    // Not a scheduled run: no history.
    expect(result.history).toBeUndefined();
    expect(await store.list('schedules/')).toEqual([]);

    // Again with nothing changed (the deadline message after a complete run): nothing is redone.
    await store.put('runs/r1/report.html', 'sentinel');
    expect((await analyseRunIfFinal('r1', deps(store, clock))).status).toBe('unchanged');
    expect(store.text('runs/r1/report.html')).toBe('sentinel');
    // A corrupt marker is not trusted: analysed again.
    await store.put(analysisMarkerKey('r1'), '{not json');
    expect((await analyseRunIfFinal('r1', deps(store, clock))).status).toBe('analysed');
    expect(store.text('runs/r1/report.html')).not.toBe('sentinel');
  });

  it("a shard lost by one target: its requests pair with the other target's as candidate_dropped, counted lost", async () => {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock(START + 3_700_000n * MS); // past the deadline
    await writeRun(store, 'r2', { requests: 100, shardSize: 25, unreported: [{ target: 'B', shardId: '1-0' }] });
    expect((await collectRun('r2', 'A', { store, clock })).status).toBe('complete');
    expect((await collectRun('r2', 'B', { store, clock })).status).toBe('deadline');
    const result = await analyseRunIfFinal('r2', deps(store, clock));
    const doc = result.comparison as ComparisonDocument;
    // Indices 25-49 lost by B (index 3 expired, 49 failed on B in shard 1-0 -> lost instead).
    expect(doc.pairs.excluded).toEqual({ candidate_dropped: 1 + 25, candidate_failed: 1 });
    expect(doc.pairs.used).toBe(100 - 27);
  });

  it('two finalisers at once: one analysis or two, one history line, one notification, no body in it', async () => {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock(START + 3_700_000n * MS);
    const queue = new MemoryQueue(() => clock.nowNs());
    const notifier = new RecordingNotifier();
    await writeRun(store, 'w1', { requests: 200, scheduled: true });
    const analyses: string[] = [];
    const afterFinal = async (runId: string) => {
      analyses.push((await analyseRunIfFinal(runId, deps(store, clock, notifier))).status);
    };
    const results = await Promise.all(
      ['A', 'B'].map((t) => handleCollect(collectMessage('w1', t, 0n).body, { store, queue, clock, afterFinal })),
    );
    expect(results.map((r) => r.action)).toEqual(['complete', 'complete']);
    expect(analyses.filter((s) => s === 'analysed').length).toBeGreaterThanOrEqual(1);

    const history = parseHistory(store.text(scheduleHistoryKey('nightly')) as string);
    expect(history.badLines).toBe(0);
    expect(history.lines.map((l) => l.run_id)).toEqual(['w1']);
    const line = history.lines[0]!;
    expect(line).toMatchObject({
      status: 'complete',
      report: 'runs/w1/report.html',
      scheduled_time: INFO.scheduledTime,
      window: INFO.window,
    });
    expect(line.targets['A']).toMatchObject({ requests: 200, succeeded: 200, errors: 0, dropped: 0 });
    expect(line.targets['B']).toMatchObject({ requests: 200, succeeded: 195, errors: 4, dropped: 1 });
    const ttft = line.comparisons[0]!.metrics.find((m) => m.tag === 'time_to_first_token')!;
    expect(ttft.verdict).toBe('worse');
    const doc = JSON.parse(store.text('runs/w1/comparison.json') as string) as ComparisonDocument;
    const docTtft = doc.metrics.find((m) => m.tag === 'time_to_first_token')!;
    expect(ttft.paired_shift).toEqual(docTtft.paired_shift?.difference);
    expect(ttft.relative_pct).toEqual(docTtft.paired_shift?.relative_pct);
    // A target's statistics are over all its succeeded requests (the comparison's, over the pairs).
    for (const t of ['A', 'B']) {
      const values = Array.from({ length: 200 }, (_, i) => resultLine('w1', t, i)).flatMap((l) =>
        l.kind === 'record' && !l.record.error ? [l.record.metrics['time_to_first_token']!.value as number] : [],
      );
      const s = summarize(values)!;
      expect(line.targets[t]!.metrics['time_to_first_token']).toEqual({
        p50: s.p50,
        p90: s.p90,
        p99: s.p99,
        mean: s.avg,
      });
    }

    expect(notifier.published).toHaveLength(1);
    const { subject, message } = notifier.published[0]!;
    expect(subject).toMatch(/^capture-replay nightly: WORSE \(.*time_to_first_token \+\d+%.*\) 2026-11-23 02:00 UTC$/);
    expect(message).toContain('s3://results-bucket/runs/w1/report.html');
    expect(message).toContain('s3://results-bucket/schedules/nightly/index.html');
    expect(message).toContain('B: 200 scheduled, 195 succeeded, 4 errors, 1 dropped');
    expect(message).toMatch(/time_to_first_token: WORSE; median B - A = \+\d+\.\d+ ms \[\+\d/);
    for (const text of [
      subject,
      message,
      store.text(scheduleHistoryKey('nightly')) as string,
      store.text(scheduleIndexKey('nightly')) as string,
    ]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('upstream said');
    }
    expect(store.text(scheduleIndexKey('nightly'))).toContain('../../runs/w1/report.html');

    // The deadline message later: the run is analysed already, nobody is told again.
    await handleCollect(collectMessage('w1', 'A', 0n).body, { store, queue, clock, afterFinal });
    expect(analyses.at(-1)).toBe('unchanged');
    // Even a full re-analysis (the marker gone) appends nothing and publishes nothing.
    store.objects.delete(analysisMarkerKey('w1'));
    const again = await analyseRunIfFinal('w1', deps(store, clock, notifier));
    expect(again.history).toMatchObject({ outcome: 'present', published: false });
    expect(notifier.published).toHaveLength(1);
    expect(parseHistory(store.text(scheduleHistoryKey('nightly')) as string).lines).toHaveLength(1);
  });

  it('too few requests for a verdict: inconclusive, and the summary says why', async () => {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock(START + 3_700_000n * MS);
    const notifier = new RecordingNotifier();
    await writeRun(store, 'w2', { requests: 12, scheduled: true });
    await collectRun('w2', 'A', { store, clock });
    await collectRun('w2', 'B', { store, clock });
    const result = await analyseRunIfFinal('w2', deps(store, clock, notifier));
    expect(result.comparison?.metrics.every((m) => m.verdict === 'inconclusive')).toBe(true);
    const { subject, message } = notifier.published[0]!;
    expect(subject).toBe('capture-replay nightly: inconclusive (too few requests for a verdict) 2026-11-23 02:00 UTC');
    expect(message).toMatch(
      /request_latency: inconclusive; .* - Only 11 pairs carry this metric; at least 20 are needed\./,
    );
    expect(store.text(scheduleIndexKey('nightly'))).toContain(
      'Inconclusive: Only 11 pairs carry this metric; at least 20 are needed.',
    );
  });

  it('reading the shards a window of objects at a time gives the comparison of all the records at once', async () => {
    // Memory at production size is measured by bench/run-analysis-memory.ts.
    const store = new MemoryObjectStore();
    const clock = new VirtualClock(START + 3_700_000n * MS);
    await writeRun(store, 'r3', { requests: 1000, shardSize: 7 }); // 143 shards: 9 windows of 16
    await collectRun('r3', 'A', { store, clock });
    await collectRun('r3', 'B', { store, clock });
    const result = await analyseRunIfFinal('r3', deps(store, clock));
    expect(withoutTime(result.comparison as ComparisonDocument)).toEqual(
      withoutTime(expectedAnalysis('r3', 1000).comparison as ComparisonDocument),
    );
  });
});
