import { describe, expect, it } from 'vitest';
import { aggregate } from '../../../lambdas/core/metrics/aggregate';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import { percentile, summarize } from '../../../lambdas/core/metrics/stats';
import { OUTCOMES, S, ms } from '../export/fixtures';

describe('percentile (numpy linear)', () => {
  // Expected values from numpy.percentile(values, q) with the default method.
  it.each([
    [[5], 50, 5],
    [[5], 99, 5],
    [[1, 2], 50, 1.5],
    [[1, 2], 99, 1.99],
    [[1, 2, 3, 4, 5], 25, 2],
    [[1, 2, 3, 4, 5], 90, 4.6],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50, 5.5],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99, 9.91],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 1, 1.09],
    [[2, 2, 2, 8], 75, 3.5],
  ])('%j p%d = %d', (values, q, expected) => {
    expect(percentile(values, q)).toBeCloseTo(expected, 10);
  });
});

describe('summarize', () => {
  it('sorts, uses the population std, and sums', () => {
    const s = summarize([9, 1, 5, 3, 7])!;
    expect(s).toMatchObject({ min: 1, max: 9, avg: 5, p50: 5, p25: 3, p75: 7, count: 5, sum: 25 });
    expect(s.std).toBeCloseTo(Math.sqrt(8), 12); // deviations 4,4,0,4,4 -> squares 16+16+0+4+4 = 40 / 5
    expect(s.p99).toBeCloseTo(8.92, 12);
  });

  it('ignores non-finite values and returns null when none is left', () => {
    expect(summarize([1, NaN, 3, Infinity])).toMatchObject({ count: 2, avg: 2 });
    expect(summarize([NaN])).toBeNull();
    expect(summarize([])).toBeNull();
  });
});

describe('computeProfileRecord', () => {
  const [streaming, short, plain, failed] = OUTCOMES.map((o) => (o.result ? computeProfileRecord(o, 'rp') : null));

  it('streaming: TTFT, TTST, ITL, ICL and throughput per user from chunk times and usage', () => {
    const m = streaming!.metrics;
    expect(m.request_latency).toEqual({ value: 80, unit: 'ms' });
    expect(m.time_to_first_token).toEqual({ value: 40, unit: 'ms' });
    expect(m.time_to_second_token).toEqual({ value: 10, unit: 'ms' });
    expect(m.inter_token_latency!.value).toBeCloseTo(40 / 3, 9); // (80 - 40) / (4 - 1)
    expect(m.output_token_throughput_per_user!.value).toBeCloseTo(75, 9); // 1000 / 13.333
    expect(m.inter_chunk_latency).toEqual({ value: [10, 10, 10], unit: 'ms' });
    expect(m.input_sequence_length).toEqual({ value: 10, unit: 'tokens' });
    expect(m.output_sequence_length).toEqual({ value: 4, unit: 'tokens' });
    expect(short!.metrics.inter_token_latency!.value).toBe(20);
  });

  // AIPerf's MetricRecordMetadata fields: its decoder refuses any other key in `metadata`.
  const AIPERF_METADATA_KEYS = [
    'benchmark_phase',
    'cancellation_time_ns',
    'conversation_id',
    'record_processor_id',
    'request_ack_ns',
    'request_end_ns',
    'request_start_ns',
    'session_num',
    'turn_index',
    'was_cancelled',
    'worker_id',
    'x_correlation_id',
    'x_request_id',
  ];

  it('carries AIPerf metadata (only its fields), exact ns, and our capture fields beside it', () => {
    expect(streaming!.metadata).toMatchObject({
      session_num: 0,
      x_request_id: 'req-0',
      x_correlation_id: 'corr-0',
      conversation_id: 'event-0',
      turn_index: 0,
      request_start_ns: S,
      request_ack_ns: S + ms(1),
      request_end_ns: S + ms(80),
      worker_id: 'worker_0',
      record_processor_id: 'rp',
      benchmark_phase: 'profiling',
      was_cancelled: false,
    });
    expect(Object.keys(streaming!.metadata).sort()).toEqual(AIPERF_METADATA_KEYS);
    expect(streaming!.capture_replay).toMatchObject({
      scheduled_ns: S - ms(0.5),
      schedule_lag_ms: 0.5,
      capture_event_id: 'event-0',
      capture_line: 1,
      target: 'A',
      overrides: ['stream'],
    });
  });

  it('non-streaming: latency and token counts only', () => {
    expect(Object.keys(plain!.metrics).sort()).toEqual([
      'input_sequence_length',
      'output_sequence_length',
      'request_count',
      'request_latency',
    ]);
  });

  it('no usage: no token metrics and no ITL, never zeros', () => {
    const noUsage = computeProfileRecord({ ...OUTCOMES[0]!, result: { ...OUTCOMES[0]!.result!, usage: null } }, 'rp');
    expect(noUsage.metrics.output_sequence_length).toBeUndefined();
    expect(noUsage.metrics.inter_token_latency).toBeUndefined();
    expect(noUsage.metrics.time_to_first_token!.value).toBe(40);
  });

  it('failed: only error_request_count, and the error', () => {
    expect(failed!.metrics).toEqual({ error_request_count: { value: 1, unit: 'requests' } });
    expect(failed!.error).toEqual({ code: 500, type: 'HTTPError', message: 'HTTP 500: boom' });
  });

  it('was_cancelled only when the client cancelled (499 CancelledError), with its time', () => {
    const base = OUTCOMES[3]!;
    const cancelled = computeProfileRecord(
      {
        ...base,
        result: { ...base.result!, error: { code: 499, type: 'CancelledError', message: 'request cancelled' } },
      },
      'rp',
    );
    expect(cancelled.metadata.was_cancelled).toBe(true);
    expect(cancelled.metadata.cancellation_time_ns).toBe(S + ms(3005));
    expect(failed!.metadata.was_cancelled).toBe(false);
    expect(failed!.metadata.cancellation_time_ns).toBeNull();
  });

  it('refuses a dropped outcome', () => {
    expect(() => computeProfileRecord(OUTCOMES[4]!, 'rp')).toThrow(/not fired/);
  });
});

describe('aggregate', () => {
  const records = OUTCOMES.filter((o) => o.result).map((o) => computeProfileRecord(o, 'rp'));
  const agg = aggregate(records);

  it('summarizes successful requests only', () => {
    const latency = agg.records.request_latency!.stats; // 80, 40, 100
    expect(latency).toMatchObject({ count: 3, min: 40, max: 100, p25: 60, p50: 80, p75: 90, sum: 220 });
    expect(latency.avg).toBeCloseTo(220 / 3, 9);
    expect(latency.std).toBeCloseTo(Math.sqrt(1866.6666666666667 / 3), 9);
    expect(agg.records.time_to_first_token!.stats).toMatchObject({ count: 2, avg: 30 });
    expect(agg.records.inter_chunk_latency!.stats).toMatchObject({ count: 4, avg: 10 }); // all gaps of all records
  });

  it('derives duration and throughputs from the first send and the last response', () => {
    expect(agg.derived.benchmark_duration).toEqual({ unit: 'sec', value: 2.1 });
    expect(agg.derived.request_throughput!.value).toBeCloseTo(3 / 2.1, 9);
    expect(agg.derived.output_token_throughput!.value).toBeCloseTo(11 / 2.1, 9);
    expect(agg.derived.request_count!.value).toBe(3);
    expect(agg.derived.error_request_count!.value).toBe(1);
    expect(agg.minRequestNs).toBe(S);
    expect(agg.maxResponseNs).toBe(S + ms(2100));
  });

  it('schedule lag covers every fired request, failures included', () => {
    expect(agg.records.schedule_lag!.stats).toMatchObject({ count: 4, max: 2, min: 0, sum: 2.5 });
  });

  it('groups errors', () => {
    expect(agg.errorSummary).toEqual([
      { error_details: { code: 500, type: 'HTTPError', message: 'HTTP 500: boom' }, count: 1 },
    ]);
  });

  it('goodput counts requests meeting every SLO', () => {
    // Latencies 80, 40, 100; TTFT only on the streaming two (40, 20).
    expect(aggregate(records, { goodputSlos: { request_latency: 90 } }).derived.goodput!.value).toBeCloseTo(2 / 2.1, 9);
    expect(
      aggregate(records, { goodputSlos: { request_latency: 90, time_to_first_token: 30 } }).derived.goodput!.value,
    ).toBeCloseTo(1 / 2.1, 9);
    expect(agg.derived.goodput).toBeUndefined();
  });

  it('never yields a non-finite number: a zero-length run has null throughputs', () => {
    const instant = {
      ...OUTCOMES[2]!,
      result: { ...OUTCOMES[2]!.result!, requestEndNs: OUTCOMES[2]!.result!.requestStartNs },
    };
    const a = aggregate([computeProfileRecord(instant, 'rp')]);
    expect(a.derived.request_throughput!.value).toBeNull();
    expect(a.derived.benchmark_duration!.value).toBe(0);
    expect(aggregate([]).records).toEqual({});
  });
});
