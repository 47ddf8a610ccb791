/**
 * The results object is the only thing that carries a fired request from the fire worker to
 * the collector: what goes in must come out exactly (bigint ns beyond 2^53 included), and a
 * damaged line must stop the collector with its location, not skew the accounting.
 */
import { describe, expect, it } from 'vitest';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import {
  decodeResultLines,
  encodeResultLines,
  resultRequestId,
  type ResultLine,
} from '../../../lambdas/core/pipeline/results';
import type { FireOutcome, ScheduledRequest } from '../../../lambdas/core/types';

// 2^53 ns is only ~104 days after 1970: every real epoch ns is beyond float64's exact range.
const T = 1_800_000_000_123_456_789n;

const request: ScheduledRequest = {
  index: 3,
  offsetMs: 1500.25,
  captureTimeMs: 1_777_420_801_500,
  correlationId: 'corr-3',
  eventId: 'ev-3',
  inferenceId: 'inf-3',
  source: { file: 's3://captures/2026/05/01/00/a.jsonl', line: 4 },
  contentType: 'application/json',
  body: new Uint8Array([123, 125]),
  streaming: true,
  overrides: ['model', 'stream'],
  capturedUsage: { promptTokens: 12, completionTokens: 7 },
  accept: 'application/json',
  capturedOutputSha256: null,
};

const fired = (result: FireOutcome['result']): FireOutcome => ({
  request,
  target: 'A',
  requestId: 'req-3',
  scheduledNs: T,
  workerId: 'fire-1',
  result,
  dropReason: null,
});

describe('result lines', () => {
  it.each<[string, FireOutcome]>([
    [
      'a streamed success',
      fired({
        requestStartNs: T + 1n,
        requestAckNs: T + 20_000_001n,
        requestEndNs: T + 90_000_007n,
        contentChunkNs: [T + 30_000_000n, T + 45_000_003n, T + 90_000_000n],
        httpStatus: 200,
        usage: { promptTokens: 12, completionTokens: 3 },
        error: null,
      }),
    ],
    [
      'a failure without ack',
      fired({
        requestStartNs: T + 5n,
        requestAckNs: null,
        requestEndNs: T + 30_000_000_000n,
        contentChunkNs: [],
        httpStatus: null,
        usage: null,
        error: { code: 408, type: 'TimeoutError', message: 'no response in 30 s' },
      }),
    ],
  ])('round-trips the profile record of %s exactly', (_name, outcome) => {
    const line: ResultLine = { kind: 'record', record: computeProfileRecord(outcome, 'fire-1') };
    const [back] = decodeResultLines(encodeResultLines([line]), 'k');
    expect(back).toEqual(line);
    expect(back?.kind === 'record' && back.record.metadata.request_start_ns).toBe(outcome.result!.requestStartNs);
  });

  it('round-trips drops, keeps order, and reads an empty object as no lines', () => {
    const lines: ResultLine[] = [
      { kind: 'drop', requestId: 'r-1', index: 1, scheduledNs: T, dropReason: 'late_beyond_tolerance' },
      { kind: 'drop', requestId: 'r-0', index: 0, scheduledNs: T - 1n, dropReason: 'unsupported_content_type' },
    ];
    const text = encodeResultLines(lines);
    expect(text).toBe(
      '{"kind":"drop","requestId":"r-1","index":1,"scheduledNs":"1800000000123456789","dropReason":"late_beyond_tolerance"}\n' +
        '{"kind":"drop","requestId":"r-0","index":0,"scheduledNs":"1800000000123456788","dropReason":"unsupported_content_type"}\n',
    );
    expect(decodeResultLines(text, 'k')).toEqual(lines);
    expect(lines.map(resultRequestId)).toEqual(['r-1', 'r-0']);
    expect(encodeResultLines([])).toBe('');
    expect(decodeResultLines('', 'k')).toEqual([]);
  });

  it.each([
    ['not JSON', '{"kind":"drop"', /^runs\/r\/A\/_results\/0-0\.jsonl:2: not JSON$/],
    [
      'a ns as a number (precision already lost)',
      '{"kind":"drop","requestId":"x","index":0,"scheduledNs":1800000000123456789,"dropReason":"lost"}',
      /:2: scheduledNs: /,
    ],
    [
      'an unknown drop reason',
      '{"kind":"drop","requestId":"x","index":0,"scheduledNs":"1","dropReason":"bored"}',
      /:2: dropReason: /,
    ],
    ['an unknown kind', '{"kind":"maybe"}', /:2: kind: /],
    [
      'a record without a request id',
      '{"kind":"record","record":{"metadata":{},"metrics":{},"error":null}}',
      /:2: record\.metadata\.session_num: /,
    ],
  ])('rejects %s with the object key and line number', (_name, bad, message) => {
    const good = encodeResultLines([{ kind: 'drop', requestId: 'r-0', index: 0, scheduledNs: T, dropReason: 'lost' }]);
    expect(() => decodeResultLines(good + bad + '\n', 'runs/r/A/_results/0-0.jsonl')).toThrow(message);
  });
});
