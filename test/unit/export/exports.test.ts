/**
 * Golden files for every export format, from the hand-made run in fixtures.ts. The goldens
 * were written once with UPDATE_GOLDEN=1 and checked by hand; the assertions before each
 * comparison re-derive the key numbers independently, so a wrong golden cannot hide.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatNumber, pythonFixed2, renderAiperfCsv } from '../../../lambdas/core/export/aiperf-csv';
import { renderAiperfJson } from '../../../lambdas/core/export/aiperf-json';
import { stringifyJson } from '../../../lambdas/core/export/json';
import { buildManifest } from '../../../lambdas/core/export/manifest';
import { exportInputConfigOf, replayInputConfig, withoutUserinfo } from '../../../lambdas/core/export/input-config';
import { profileRecordLine } from '../../../lambdas/core/export/profile-jsonl';
import { renderSummaryTable } from '../../../lambdas/core/export/summary-table';
import { aggregate } from '../../../lambdas/core/metrics/aggregate';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import { pipelineInputConfig } from '../../../lambdas/core/pipeline/collect';
import { summarize } from '../../../lambdas/core/metrics/stats';
import { OUTCOMES } from './fixtures';

const GOLDEN = join(import.meta.dirname, 'golden');

function golden(name: string, actual: string): void {
  const path = join(GOLDEN, name);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, actual);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

const records = OUTCOMES.filter((o) => o.result).map((o) => computeProfileRecord(o, 'record_processor_0'));
const agg = aggregate(records);
const manifest = buildManifest({
  runId: 'run-1',
  target: 'A',
  outcomes: OUTCOMES,
  notScheduledByReason: { duplicate: 2, outside_offset_window: 1 },
  startedAt: '2026-04-29T00:00:00.000Z',
  endedAt: '2026-04-29T00:00:04.000Z',
});
const inputConfig = replayInputConfig({
  target: 'A',
  url: 'http://user:secret@localhost:8000/',
  path: '/v1/chat/completions',
  model: 'llama-3-8b',
  streaming: true,
  timeoutMs: 30_000,
  capture: 'captures/2026/04/29/00',
  maxInFlight: 64,
  extra: { run_id: 'run-1' },
});
const info = {
  inputConfig,
  wasCancelled: false,
  startTime: '2026-04-29T00:00:00.000Z',
  endTime: '2026-04-29T00:00:04.000Z',
};

describe('stringifyJson', () => {
  it('writes epoch ns exactly and non-finite numbers as null', () => {
    expect(stringifyJson({ t: 1759522419158355424n, nan: NaN, inf: -Infinity, n: 1.5, s: 'x' })).toBe(
      '{"t":1759522419158355424,"nan":null,"inf":null,"n":1.5,"s":"x"}',
    );
  });

  it('refuses byte arrays, so bodies cannot leak into exports', () => {
    expect(() => stringifyJson({ body: new Uint8Array([1]) })).toThrow(/raw bytes/);
  });
});

describe('profile_export.jsonl', () => {
  it('one line per fired request, AIPerf shape, exact integers', () => {
    const lines = records.map(profileRecordLine);
    expect(lines).toHaveLength(4);
    const first = JSON.parse(lines[0]!) as {
      metadata: Record<string, unknown>;
      metrics: Record<string, unknown>;
      error: unknown;
    };
    expect(Object.keys(first)).toEqual(['metadata', 'metrics', 'error', 'capture_replay']);
    expect(lines[0]).toContain('"request_start_ns":1759522419158355424,');
    expect(first.metrics.time_to_first_token).toEqual({ value: 40, unit: 'ms' });
    expect(JSON.parse(lines[3]!).error).toEqual({ code: 500, type: 'HTTPError', message: 'HTTP 500: boom' });
    golden('profile_export.jsonl', lines.join('\n') + '\n');
  });
});

describe('profile_export_aiperf.json', () => {
  it('is flat, one key per metric, with full stats on record metrics and avg on scalars', () => {
    const text = renderAiperfJson(agg, info);
    const json = JSON.parse(text) as Record<string, Record<string, unknown>>;
    // AIPerf's JsonMetricResult field order; count and sum (schema 1.1) on record metrics only.
    expect(Object.keys(json.request_latency!)).toEqual([
      'unit',
      'avg',
      'p1',
      'p5',
      'p10',
      'p25',
      'p50',
      'p75',
      'p90',
      'p95',
      'p99',
      'min',
      'max',
      'std',
      'count',
      'sum',
    ]);
    expect(Object.keys(json).slice(0, 5)).toEqual([
      'schema_version',
      'producer',
      'request_throughput',
      'request_latency',
      'request_count',
    ]);
    // AIPerf's dump order: declared fields, then extra keys (metrics it does not declare, ours).
    expect(Object.keys(json).slice(-11)).toEqual([
      'input_config',
      'was_cancelled',
      'error_summary',
      'start_time',
      'end_time',
      'schedule_lag',
      'replay_sched_lag_p50',
      'replay_sched_lag_p90',
      'replay_sched_lag_p99',
      'replay_sched_degraded',
      'capture_replay',
    ]);
    expect(json.request_count).toEqual({ unit: 'requests', avg: 3 });
    expect(json.request_latency).toMatchObject({ unit: 'ms', min: 40, max: 100, p50: 80, count: 3, sum: 220 });
    expect(json.request_throughput).toEqual({ unit: 'requests/sec', avg: 3 / 2.1 });
    expect(json.benchmark_duration).toEqual({ unit: 'sec', avg: 2.1 });
    expect(text).toContain('"avg": 1759522419158355424');
    expect(json.error_summary).toEqual([
      { error_details: { code: 500, type: 'HTTPError', message: 'HTTP 500: boom' }, count: 1 },
    ]);
    expect(json).toMatchObject({
      schema_version: '1.1',
      was_cancelled: false,
      start_time: info.startTime,
      end_time: info.endTime,
    });
    // Successful requests were sent 0.5, 0 and 0 ms late: relative to the least late, 0.5, 0, 0.
    expect(json.replay_sched_lag_p50).toEqual({ unit: 'ms', avg: 0 });
    expect(json.replay_sched_lag_p99).toEqual({ unit: 'ms', avg: 0.5 * 0.98 }); // rank 1.98 of [0, 0, 0.5]
    expect(json.replay_sched_degraded).toEqual({ unit: 'count', avg: 0 });
    expect(text).not.toContain('secret');
    golden('profile_export_aiperf.json', text);
  });

  it("input_config has AIPerf's BenchmarkConfig shape; our settings are beside it", () => {
    const json = JSON.parse(renderAiperfJson(agg, info)) as Record<string, unknown>;
    expect(json.input_config).toEqual({
      models: { items: [{ name: 'llama-3-8b' }] },
      endpoint: {
        urls: ['http://localhost:8000'],
        type: 'chat',
        path: '/v1/chat/completions',
        streaming: true,
        timeout: 30,
      },
      datasets: [{ name: 'default', type: 'file', path: 'captures/2026/04/29/00', format: 'sagemaker_data_capture' }],
      phases: [{ name: 'profiling', type: 'fixed_schedule', concurrency: 64 }],
    });
    expect(json.capture_replay).toEqual({
      tool: 'capture-replay',
      target: 'A',
      endpoint: {
        url: 'http://localhost:8000',
        path: '/v1/chat/completions',
        streaming: 'forced',
        model_override: 'llama-3-8b',
        timeout_ms: 30_000,
      },
      capture: 'captures/2026/04/29/00',
      max_in_flight: 64,
      run_id: 'run-1',
    });
  });
});

describe('export configuration (input-config.ts)', () => {
  it('strips userinfo from every URL, keeps the rest of it', () => {
    expect(withoutUserinfo('https://user:pw@host')).toBe('https://host');
    expect(withoutUserinfo('https://user:pw@host:8443/base/v1?x=1')).toBe('https://host:8443/base/v1?x=1');
    expect(withoutUserinfo('http://localhost:8000/')).toBe('http://localhost:8000');
    expect(withoutUserinfo('not a url')).toBeNull();
    // A token in the query loses its value too (issue 32 item 2).
    expect(withoutUserinfo('https://user:pw@host/v1?token=abc&deployment=blue#frag')).toBe(
      'https://host/v1?token=***&deployment=blue',
    );
    expect(
      replayInputConfig({ url: 'http://h:1/?api_key=k9', extra: { capture: 's3://b/k?X-Amz-Signature=s9' } })
        .captureReplay,
    ).toMatchObject({ endpoint: { url: 'http://h:1/?api_key=***' }, capture: 's3://b/k?X-Amz-Signature=***' });
    const built = replayInputConfig({
      url: 'https://user:pw@host',
      model: 'm',
      capture: 'c',
      extra: { targets: [{ name: 'B', url: 'http://u:p@b:1/x' }], note: 'x@y' },
    });
    expect((built.aiperf!.endpoint as { urls: string[] }).urls).toEqual(['https://host']);
    expect(built.captureReplay.targets).toEqual([{ name: 'B', url: 'http://b:1/x' }]);
    expect(built.captureReplay.note).toBe('x@y');
    expect(JSON.stringify(built)).not.toMatch(/pw|u:p/);
    // Anything a caller recorded before (old run state) is ours, and scrubbed the same way.
    expect(exportInputConfigOf({ targets: [{ url: 'https://a:b@h' }] })).toEqual({
      aiperf: null,
      captureReplay: { targets: [{ url: 'https://h' }] },
    });
    expect(exportInputConfigOf(null)).toEqual({ aiperf: null, captureReplay: {} });
  });

  it('without --model there is no complete BenchmarkConfig: input_config is left out', () => {
    const built = replayInputConfig({
      url: 'http://h:1',
      path: '/v1/chat/completions',
      streaming: null,
      timeoutMs: 1000,
      capture: 'c',
    });
    expect(built.aiperf).toBeNull();
    expect(built.captureReplay.endpoint).toEqual({
      url: 'http://h:1',
      path: '/v1/chat/completions',
      streaming: 'as_captured',
      model_override: null,
      timeout_ms: 1000,
    });
    expect(Object.keys(JSON.parse(renderAiperfJson(agg, { ...info, inputConfig: built })))).not.toContain(
      'input_config',
    );
  });

  it('the pipeline builds it from what the ingest recorded, per target', () => {
    const recorded = {
      tool: 'capture-replay',
      mode: 'file',
      capture: 's3://b/k.jsonl',
      etag: 'e',
      model_override: 'm',
      streaming: true,
      request_timeout_ms: 5000,
      targets: [
        { name: 'A', url: 'https://k:s@a.example/', path: '/v1/chat/completions' },
        { name: 'B', url: 'http://b', path: '/p' },
      ],
    };
    const a = pipelineInputConfig(recorded, 'A');
    expect(a.aiperf).toMatchObject({
      models: { items: [{ name: 'm' }] },
      endpoint: { urls: ['https://a.example'], path: '/v1/chat/completions', streaming: true, timeout: 5 },
      datasets: [{ path: 's3://b/k.jsonl' }],
    });
    expect(a.captureReplay).toMatchObject({ target: 'A', mode: 'file', etag: 'e', capture: 's3://b/k.jsonl' });
    expect(JSON.stringify(a)).not.toContain('k:s');
    expect(pipelineInputConfig({ mode: 'file', targets: [] }, 'A').aiperf).toBeNull();
  });
});

describe('profile_export_aiperf.csv', () => {
  it("has AIPerf's layout: the stats section, a blank line, then the scalar section", () => {
    const csv = renderAiperfCsv(agg);
    expect(csv).not.toMatch(/[^\r]\n/); // csv.writer's \r\n everywhere
    const [stats, scalars] = csv.split('\r\n\r\n');
    expect(stats!.split('\r\n')[0]).toBe('Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std');
    // Latencies 40, 80, 100: sum 220, avg 73.33; p1 = 40 + 0.02*40 = 40.80; p99 = 80 + 0.98*20 = 99.60;
    // std = sqrt(((33.33)^2 + (6.67)^2 + (26.67)^2) / 3) = 24.94.
    expect(stats).toContain(
      '\r\nRequest Latency (ms),73.33,40.00,100.00,220.00,40.80,44.00,48.00,60.00,80.00,90.00,96.00,98.00,99.60,24.94',
    );
    // Schedule lags 0.5, 0, 0, 2: avg 0.625 is a tie, written half to even as Python does: 0.62.
    expect(stats).toContain('\r\nSchedule Lag (ms),0.62,0.00,2.00,2.50,');
    // Rows sorted by tag, as AIPerf: input_sequence_length < inter_chunk_latency < ... < time_to_second_token.
    expect(
      stats!
        .split('\r\n')
        .slice(1)
        .map((l) => l.split(',')[0]),
    ).toEqual([
      'Input Sequence Length (tokens)',
      'Inter Chunk Latency (ms)',
      'Inter Token Latency (ms)',
      'Output Sequence Length (tokens)',
      'Output Token Throughput Per User (tokens/sec/user)',
      'Request Latency (ms)',
      'Schedule Lag (ms)',
      'Time to First Token (ms)',
      'Time to Second Token (ms)',
    ]);
    expect(scalars!.split('\r\n')[0]).toBe('Metric,Value');
    expect(scalars).toContain('\r\nRequest Throughput (requests/sec),1.43\r\n'); // 3 requests / 2.1 s
    expect(scalars).toContain('\r\nOutput Token Throughput (tokens/sec),5.24\r\n'); // (4 + 2 + 5) / 2.1 s
    expect(scalars).toContain('\r\nMinimum Request Timestamp (ns),1759522419158355424\r\n');
    // Counts are ints in AIPerf (no decimals) and carry no unit in the name.
    expect(scalars).toContain('\r\nRequest Count,3\r\n');
    expect(scalars).toContain('\r\nError Request Count,1\r\n');
    expect(scalars).toContain('\r\nTotal Output Tokens (tokens),11\r\n');
    // Float scalars keep two decimals even when whole: the degraded flag is float(0) there.
    expect(scalars).toContain('\r\nReplay Schedule Degraded,0.00\r\n');
    expect(scalars).toContain('\r\nReplay Schedule Lag p50 (ms),0.00\r\n');
    expect(scalars).toContain('\r\nReplay Schedule Lag p99 (ms),0.49\r\n');
    golden('profile_export_aiperf.csv', csv);
  });

  it("formats numbers as AIPerf's _format_number: ints plain, floats with two decimals, Python's rounding", () => {
    expect(formatNumber(3, 'int')).toBe('3');
    expect(formatNumber(3, 'float')).toBe('3.00');
    expect(formatNumber(2.5, 'int')).toBe('2.50'); // not an integer value: a float in Python too
    expect(formatNumber(null, 'float')).toBe('');
    expect(formatNumber(1759522419158355424n, 'int')).toBe('1759522419158355424');
    // f"{x:.2f}" rounds the exact binary value, ties to even; these were checked in CPython 3.11.
    const python: [number, string][] = [
      [0.625, '0.62'],
      [0.125, '0.12'],
      [0.375, '0.38'],
      [-0.375, '-0.38'],
      [2.675, '2.67'],
      [1.005, '1.00'],
      [1.955, '1.96'],
      [-0.001, '-0.00'],
      [99.995, '100.00'],
      [123456.785, '123456.79'],
      [1234567890123.125, '1234567890123.12'],
    ];
    for (const [x, text] of python) expect(pythonFixed2(x)).toBe(text);
  });
});

describe('undefined values in exports', () => {
  // One request whose last byte came at its send time: duration 0, so no rate is defined.
  const instant = {
    ...OUTCOMES[2]!,
    result: { ...OUTCOMES[2]!.result!, requestEndNs: OUTCOMES[2]!.result!.requestStartNs },
  };
  const zero = aggregate([computeProfileRecord(instant, 'rp')]);

  it('a zero-duration run writes null (JSON) and an empty cell (CSV), never NaN or Infinity', () => {
    const json = renderAiperfJson(zero, info);
    const csv = renderAiperfCsv(zero);
    expect(JSON.parse(json).request_throughput).toEqual({ unit: 'requests/sec', avg: null });
    expect(csv).toContain('\r\nRequest Throughput (requests/sec),\r\n');
    expect(csv).toContain('\r\nBenchmark Duration (sec),0.00\r\n');
    for (const text of [json, csv, renderSummaryTable(zero, manifest)]) expect(text).not.toMatch(/NaN|Infinity/);
  });

  it('a run with no successful request has only the schedule lag for statistics, and no replay lag family', () => {
    const onlyFailed = aggregate([computeProfileRecord(OUTCOMES[3]!, 'rp')]);
    const csv = renderAiperfCsv(onlyFailed);
    const [stats, scalars] = csv.split('\r\n\r\n');
    expect(
      stats!
        .split('\r\n')
        .slice(1)
        .map((l) => l.split(',')[0]),
    ).toEqual(['Schedule Lag (ms)']);
    expect(scalars).toContain('\r\nError Request Count,1\r\n');
    expect(scalars).toContain('\r\nRequest Throughput (requests/sec),\r\n'); // no success, no duration
    expect(scalars).not.toContain('Replay Schedule');
    expect(renderAiperfCsv({ ...onlyFailed, records: {} }).startsWith('Metric,Value\r\n')).toBe(true); // an empty section is left out
    expect(Object.keys(JSON.parse(renderAiperfJson(onlyFailed, info)))).not.toContain('request_latency');
  });

  it('quotes a CSV name that holds a comma or a quote', () => {
    const stats = summarize([1])!;
    const odd = { ...zero, records: { 'a,"b"': { unit: 'ms', stats } }, derived: {} };
    expect(renderAiperfCsv(odd).split('\r\n')[1]!.startsWith('"a,""b"" (ms)",1.00,')).toBe(true);
  });
});

describe('run_manifest.json', () => {
  it('balances: scheduled = succeeded + failed + dropped, with reasons', () => {
    expect(manifest).toMatchObject({
      scheduled: 5,
      fired: 4,
      succeeded: 3,
      failed: 1,
      dropped: 1,
      droppedByReason: { unsupported_content_type: 1 },
      failedByType: { HTTPError: 1 },
      balanced: true,
    });
    expect(manifest.scheduleLag).toMatchObject({ count: 4, max: 2 });
    golden('run_manifest.json', stringifyJson(manifest, 2) + '\n');
  });

  it('is not balanced when an outcome is counted twice', () => {
    const twice = buildManifest({
      runId: 'r',
      target: 'A',
      outcomes: [...OUTCOMES, OUTCOMES[0]!],
      notScheduledByReason: {},
      startedAt: '',
      endedAt: '',
    });
    expect(twice.balanced).toBe(false);
  });
});

describe('console summary', () => {
  const widest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));

  it('shows the statistics, the scalars and the accounting, within 80 columns', () => {
    const text = renderSummaryTable(agg, manifest, { title: 'capture-replay | run-1 | A' });
    expect(text).toMatch(/^ {2}Metric\s+avg\s+min\s+max\s+p99\s+p90\s+p50\s+std$/m);
    expect(text).toMatch(
      /^ {2}Request latency \(ms\)\s+73\.33\s+40\.00\s+100\.00\s+99\.60\s+96\.00\s+80\.00\s+24\.94$/m,
    );
    expect(text).toMatch(/^ {2}Tokens\/s\/user \(tok\/s\)\s+62\.50 /m);
    expect(text).toMatch(/^ {2}Request throughput \(req\/s\)\s+1\.43$/m);
    expect(text).toMatch(/^ {2}Dropped\s+1 \(unsupported_content_type 1\)$/m);
    expect(text).toMatch(/^ {2}Balanced\s+yes$/m);
    // Lags 0.5, 0, 0, 2 ms: sorted 0, 0, 0.5, 2 -> p50 0.25, p99 = 0.5 + 0.97*1.5 = 1.955 (1.95499... in
    // binary floating point, so it shows as 1.95), max 2.
    expect(text).toMatch(/^ {2}Schedule lag \(ms\)\s+p50 0\.25, p99 1\.95, max 2\.00$/m);
    expect(text).not.toContain('left out');
    expect(widest(text)).toBeLessThanOrEqual(80);
    golden('summary.txt', text + '\n');
  });

  it('leaves columns out, least telling first, to fit the width it is given', () => {
    // Latencies in the tens of seconds: every statistic 9 characters wide.
    const slow = {
      ...agg,
      records: {
        ...agg.records,
        request_latency: {
          unit: 'ms',
          stats: {
            ...agg.records.request_latency!.stats,
            avg: 12_345.678,
            min: 10_000,
            max: 99_999.5,
            p99: 98_765.4,
            p90: 54_321,
            p50: 12_000,
            std: 11_111.11,
          },
        },
      },
    };
    const at80 = renderSummaryTable(slow, manifest);
    expect(widest(at80)).toBeLessThanOrEqual(80);
    expect(at80).toMatch(/^ {2}Metric\s+avg\s+max\s+p99\s+p90\s+p50$/m);
    expect(at80).toContain('(std, min left out to fit 80 columns: all are in profile_export_aiperf.json)');
    const at60 = renderSummaryTable(slow, manifest, { width: 60 });
    expect(widest(at60)).toBeLessThanOrEqual(60);
    expect(at60).toMatch(/^ {2}Metric\s+max\s+p99\s+p50$/m);
    const at50 = renderSummaryTable(slow, manifest, { width: 50 });
    expect(widest(at50)).toBeLessThanOrEqual(50);
    expect(at50).toMatch(/^ {2}Metric\s+p99\s+p50$/m);
    const wide = renderSummaryTable(slow, manifest, { width: 200 });
    expect(wide).toMatch(/^ {2}Metric\s+avg\s+min\s+max\s+p99\s+p90\s+p50\s+std$/m);
  });

  it('wraps a long accounting line instead of overflowing', () => {
    const failedByType = Object.fromEntries(
      ['HTTPError', 'TimeoutError', 'ConnectionError', 'ThrottlingException', 'ModelError', 'ServiceUnavailable'].map(
        (t) => [t, 12],
      ),
    );
    const text = renderSummaryTable(agg, { ...manifest, failedByType });
    expect(widest(text)).toBeLessThanOrEqual(80);
    expect(text).toMatch(/^ {2}Failed\s+1 \(HTTPError 12, TimeoutError 12,/m);
    expect(text).toContain('ServiceUnavailable 12)');
  });
});
