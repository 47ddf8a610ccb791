import { describe, expect, it } from 'vitest';
import { ColumnsBuilder, recordIdentity } from '../../../lambdas/core/compare/columns';
import { OUTCOME } from '../../../lambdas/core/compare/types';
import {
  renderComparisonBlock,
  short,
  pValue,
  hasVerdict,
  TABLE_WIDTH,
} from '../../../lambdas/core/export/comparison-table';
import type { ComparisonDocument, MetricComparison, TargetComparison } from '../../../lambdas/core/compare/types';

const ours = (event: string, session: number, metrics: Record<string, number>, error: unknown = null) => ({
  metadata: { session_num: session, conversation_id: event },
  metrics: Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, { value: v, unit: 'ms' }])),
  error,
  capture_replay: { capture_event_id: event, captured_output_tokens: 12 },
});

describe('request identity', () => {
  it('is the capture event for ours, the conversation and turn for AIPerf', () => {
    expect(recordIdentity(ours('ev-1', 0, {}))).toBe('ev-1');
    expect(recordIdentity({ metadata: { conversation_id: 'conv', turn_index: 0 } })).toBe('conv');
    expect(recordIdentity({ metadata: { conversation_id: 'conv', turn_index: 2 } })).toBe('conv/2');
    expect(recordIdentity({ metadata: { x_correlation_id: 'corr' } })).toBe('corr');
    expect(recordIdentity({ metadata: {} })).toBeNull();
  });

  it('numbers repeated events by schedule order, whatever the file order', () => {
    const b = new ColumnsBuilder('A');
    b.addRecord(ours('ev', 5, { request_latency: 50 }));
    b.addRecord(ours('ev', 1, { request_latency: 10 }));
    b.addDropped('ev', 'late_beyond_tolerance', null, 3);
    const c = b.build();
    expect(c.keys).toEqual(['ev#2', 'ev#0', 'ev#1']);
    expect(Array.from(c.outcome)).toEqual([OUTCOME.succeeded, OUTCOME.succeeded, OUTCOME.dropped]);
    expect(c.dropReason).toEqual([null, null, 'late_beyond_tolerance']);
  });

  it('keeps failures and their type, with no metric values', () => {
    const b = new ColumnsBuilder('A');
    b.addRecord(ours('x', 0, { request_latency: 10 }, { code: 500, type: 'HTTPError', message: 'boom' }));
    b.addRecord({ metadata: { session_num: 1 }, metrics: { request_latency: { value: 'fast' } }, error: null });
    const c = b.build();
    expect(c.errorType).toEqual(['HTTPError', null]);
    expect(Number.isNaN(c.metrics.request_latency[0] as number)).toBe(true);
    expect(Number.isNaN(c.metrics.request_latency[1] as number)).toBe(true); // not a number: absent, never 0
    expect(c.keys[1]!.startsWith('\u0000unidentified')).toBe(true); // no identity: pairs with nothing
    expect(c.capturedOutputTokens[0]).toBe(12);
  });
});

const interval = (estimate: number, lo: number, hi: number) => ({ estimate, ci_low: lo, ci_high: hi });

function metric(tag: MetricComparison['tag'], verdict: MetricComparison['verdict']): MetricComparison {
  const i = interval(123456.789, -98765.4, 1e7);
  const stats = { mean: i, p50: i, p90: i, p99: i };
  return {
    tag,
    unit: 'tokens/sec/user',
    direction: 'lower_is_better',
    n: 10,
    baseline: { n: 10, mean: 1, p50: 1, p90: 1, p99: 1 },
    candidate: { n: 10, mean: 1, p50: 1, p90: 1, p99: 1 },
    difference: stats,
    relative_pct: stats,
    paired_shift: null,
    statistic_verdicts: { mean: verdict, p50: verdict, p90: verdict, p99: verdict },
    test: 'wilcoxon_signed_rank',
    p_value: 0.5,
    p_value_adjusted: 0.0004,
    verdict,
    verdict_reason: '',
    distribution: { baseline: [], candidate: [], difference: null },
  };
}

describe('the terminal table', () => {
  const comparison: TargetComparison = {
    baseline: 'a-very-long-baseline-target-name',
    candidate: 'a-very-long-candidate-target-name',
    mode: 'paired',
    pairs: { used: 123456, excluded: { candidate_failed: 12, baseline_dropped: 3, only_in_candidate: 0 } },
    metrics: [metric('output_token_throughput_per_user', 'inconclusive'), metric('time_to_second_token', 'worse')],
    errors: {
      baseline: { fired: 10, failed: 1, rate: 0.1 },
      candidate: { fired: 10, failed: 2, rate: 0.2 },
      difference: interval(0.1, -0.05, 0.25),
      test: 'mcnemar_exact',
      p_value: 0.25,
      verdict: 'no_difference',
    },
  };

  it('fits 80 columns even with long names and large numbers', () => {
    const text = renderComparisonBlock(comparison, 0.02);
    for (const line of text.split('\n')) expect([...line].length).toBeLessThanOrEqual(TABLE_WIDTH);
    expect(text).toMatch(/candidate_failed 12, baseline_dropped 3/);
    expect(text).not.toMatch(/only_in_candidate/);
    expect(text).toMatch(/WORSE/);
  });

  it('formats numbers short and p-values plainly', () => {
    expect(short(123456.7, true)).toBe('+123k');
    expect(short(-0.004)).toBe('-0.00');
    expect(short(null)).toBe('n/a');
    expect(pValue(0.0004)).toBe('<.001');
    expect(pValue(0.0412)).toBe('.041');
  });

  it('--fail-on looks at every comparison, metrics and error rate', () => {
    const doc = { comparisons: [comparison] } as unknown as ComparisonDocument;
    expect(hasVerdict(doc, ['worse'])).toBe(true);
    expect(hasVerdict(doc, ['changed'])).toBe(false);
    const errorsWorse = {
      comparisons: [{ ...comparison, metrics: [], errors: { ...comparison.errors, verdict: 'worse' } }],
    } as unknown as ComparisonDocument;
    expect(hasVerdict(errorsWorse, ['worse'])).toBe(true);
  });
});
