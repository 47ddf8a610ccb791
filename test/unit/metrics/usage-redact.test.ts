/**
 * What a record believes and what it repeats: implausible token counts are missing (never
 * Infinity in a sum), and credentials in URLs never reach an error message.
 */
import { describe, expect, it } from 'vitest';
import { aggregate } from '../../../lambdas/core/metrics/aggregate';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import { MAX_PLAUSIBLE_TOKENS, plausibleTokenCount, plausibleUsage } from '../../../lambdas/core/metrics/usage';
import { stripUrlCredentials } from '../../../lambdas/core/redact';
import type { FireOutcome, TargetResult } from '../../../lambdas/core/types';
import { createStreamDecoder } from '../../../lambdas/adapters/sagemaker/stream-decode';
import { scheduledRequest } from '../../support/fixtures';

const T0 = 1_800_000_000_000_000_000n;

function outcome(result: Partial<TargetResult>, index = 0, capturedOutput: number | null = null): FireOutcome {
  return {
    request: scheduledRequest(index, 0, {
      capturedUsage: capturedOutput === null ? null : { promptTokens: 1, completionTokens: capturedOutput },
    }),
    target: 'A',
    requestId: `r-${index}`,
    scheduledNs: T0,
    workerId: 'w',
    dropReason: null,
    result: {
      requestStartNs: T0,
      requestAckNs: T0 + 1_000_000n,
      requestEndNs: T0 + 100_000_000n,
      contentChunkNs: [],
      httpStatus: 200,
      usage: null,
      error: null,
      ...result,
    },
  };
}

describe('plausible token counts', () => {
  it.each([
    [0, 0],
    [12, 12],
    [MAX_PLAUSIBLE_TOKENS, MAX_PLAUSIBLE_TOKENS],
    [MAX_PLAUSIBLE_TOKENS + 1, null],
    [1e308, null],
    [0.5, null],
    [-1, null],
    [Number.NaN, null],
    [Infinity, null],
    ['12', null],
    [null, null],
  ])('%s -> %s', (value, expected) => expect(plausibleTokenCount(value)).toBe(expected));

  it('usage keeps the plausible half, or is missing', () => {
    expect(plausibleUsage({ promptTokens: 1e308, completionTokens: 4 })).toEqual({
      promptTokens: null,
      completionTokens: 4,
    });
    expect(plausibleUsage({ promptTokens: 0.5, completionTokens: -1 })).toBeNull();
  });

  it('records and aggregates: one absurd count does not turn the sums into null', () => {
    const records = [
      computeProfileRecord(outcome({ usage: { promptTokens: 3, completionTokens: 5 } }, 0), 'p'),
      computeProfileRecord(outcome({ usage: { promptTokens: 1e308, completionTokens: 1e308 } }, 1, 1e308), 'p'),
    ];
    expect(records[1]!.metrics.output_sequence_length).toBeUndefined();
    expect(records[1]!.capture_replay.captured_output_tokens).toBeNull();
    const agg = aggregate(records);
    expect(agg.records.output_sequence_length?.stats.sum).toBe(5);
    expect(agg.derived.output_token_throughput?.value).not.toBeNull();
  });

  it('the SageMaker stream decoder believes the same counts', () => {
    const decoder = createStreamDecoder();
    decoder.push(Buffer.from('{"token":{"text":"a"}}\n{"details":{"generated_tokens":1e308}}\n'));
    decoder.end();
    expect(decoder.usage).toBeNull();
    const ok = createStreamDecoder();
    ok.push(Buffer.from('data: {"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":0.5}}\n\n'));
    ok.end();
    expect(ok.usage).toEqual({ promptTokens: 2, completionTokens: null });
  });
});

describe('credentials in URLs', () => {
  it.each([
    ['connect ECONNREFUSED http://user:pw@host:8000/v1', 'connect ECONNREFUSED http://host:8000/v1'],
    [
      'HTTP 302: redirect to https://a:b@x.example/p?api_key=K123&x=1',
      'HTTP 302: redirect to https://x.example/p?api_key=***&x=1',
    ],
    [
      'see https://x.example/?X-Amz-Signature=abc&X-Amz-Credential=AKID%2F1',
      'see https://x.example/?X-Amz-Signature=***&X-Amz-Credential=***',
    ],
    ['token@host is not a URL; mail me at a@b.c', 'token@host is not a URL; mail me at a@b.c'],
    // Issue 32 item 2: any parameter whose name says it is a credential.
    [
      'GET http://h:1/v1?token=t1&apikey=t2&access_token=t3&sig=t4&X-Amz-Date=20261207&client_secret=t5&user_password=t6&model=m',
      'GET http://h:1/v1?token=***&apikey=***&access_token=***&sig=***&X-Amz-Date=***&client_secret=***&user_password=***&model=m',
    ],
    ['https://h/cb#access_token=t7&state=s', 'https://h/cb#access_token=***&state=s'],
    ['https://h/?api%5Fkey=t8&max_tokens=5', 'https://h/?api%5Fkey=***&max_tokens=5'],
    ['no url here', 'no url here'],
  ])('%s', (text, expected) => expect(stripUrlCredentials(text)).toBe(expected));

  it('error messages lose them in records (and so in error_summary)', () => {
    const record = computeProfileRecord(
      outcome({
        error: { code: null, type: 'ConnectionError', message: 'ENOTFOUND: http://me:secret@nowhere.invalid/v1' },
      }),
      'p',
    );
    expect(record.error).toEqual({
      code: null,
      type: 'ConnectionError',
      message: 'ENOTFOUND: http://nowhere.invalid/v1',
    });
    expect(aggregate([record]).errorSummary[0]!.error_details.message).not.toContain('secret');
  });
});
