/**
 * What of an error reaches a record, whatever the target sent (core/metrics/error-details.ts):
 * a named type or `other`, printable text of bounded length, an HTTP-like code or null. Held
 * where results become records (computeProfileRecord, hence error_summary) and where the
 * manifest counts failures by type (buildManifest).
 */
import { describe, expect, it } from 'vitest';
import { buildManifest } from '../../../lambdas/core/export/manifest';
import { aggregate } from '../../../lambdas/core/metrics/aggregate';
import {
  ERROR_TEXT_LIMITS,
  cutText,
  isErrorTypeName,
  printableText,
  recordedError,
} from '../../../lambdas/core/metrics/error-details';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import type { ErrorDetails, FireOutcome } from '../../../lambdas/core/types';
import { scheduledRequest } from '../../support/fixtures';

const T0 = 1_800_000_000_000_000_000n;
const ESCAPES = '\u001b]0;PWNED\u0007\u001b[31m';
const PROMPT = 'PROMPT-ECHO-CANARY ' + 'confidential words of the customer '.repeat(30);

function failed(error: ErrorDetails, index = 0): FireOutcome {
  return {
    request: scheduledRequest(index, 0),
    target: 'A',
    requestId: `r-${index}`,
    scheduledNs: T0,
    workerId: 'w',
    dropReason: null,
    result: {
      requestStartNs: T0,
      requestAckNs: null,
      requestEndNs: T0 + 1_000_000n,
      contentChunkNs: [],
      httpStatus: 400,
      usage: null,
      error,
    },
  };
}

describe('error types', () => {
  it.each([
    ['HTTPError', true],
    ['ModelStreamError', true],
    ['snake_case_name', true],
    ['x'.repeat(64), true],
    ['x'.repeat(65), false],
    ['', false],
    ['9Lives', false],
    ['Bad Request', false],
    ['a.b', false],
    [`Bad${ESCAPES}`, false],
    ['Ünïcode', false],
  ])('%j is a name: %s', (name, expected) => expect(isErrorTypeName(name)).toBe(expected));
});

describe('printable, bounded messages', () => {
  it('control characters, separators and bidirectional marks become one blank', () => {
    expect(printableText(`a${ESCAPES}b\r\n\tc\u2028d\u202ee\u2066f\u0085g`)).toBe('a ]0;PWNED [31mb c d e f g');
  });

  it('cuts with an ellipsis, never inside a surrogate pair', () => {
    expect(cutText('abcdef', 4)).toBe('abc…');
    expect(cutText('ab\u{1F600}cd', 4)).toBe('ab…');
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abc', 0)).toBe('');
  });

  it('recordedError: a type that is not a name is other; code 0-999 or null; message printable and cut', () => {
    const e = recordedError({
      code: 1e9,
      type: PROMPT + 'y'.repeat(50_000),
      message: `${ESCAPES}${'z'.repeat(10_000)}`,
    });
    expect(e.type).toBe('other');
    expect(e.code).toBeNull();
    expect(e.message.length).toBe(ERROR_TEXT_LIMITS.messageChars);
    expect(e.message).not.toContain('\u001b');
    expect(recordedError({ code: Number.NaN, type: 'X', message: '' }).code).toBeNull();
    expect(recordedError({ code: 424, type: 'ModelError', message: 'fine' })).toEqual({
      code: 424,
      type: 'ModelError',
      message: 'fine',
    });
  });
});

describe('where results become records and are counted', () => {
  it('a record holds a named type and printable, bounded text, whatever the target sent (so does error_summary)', () => {
    const record = computeProfileRecord(
      failed({
        code: 400,
        type: `${PROMPT}${'y'.repeat(50_000)}`,
        message: `HTTP 400: ${ESCAPES}${PROMPT.repeat(10)}`,
      }),
      'p',
    );
    expect(record.error!.type).toBe('other');
    expect(record.error!.message.length).toBeLessThanOrEqual(ERROR_TEXT_LIMITS.messageChars);
    expect(record.error!.message).not.toContain('\u001b');
    const summary = aggregate([record]).errorSummary;
    expect(JSON.stringify(summary).length).toBeLessThan(1_000);
  });

  it('the manifest counts failures under the type the record holds', () => {
    const manifest = buildManifest({
      runId: 'r',
      target: 'A',
      outcomes: [
        failed({ code: 400, type: `${ESCAPES}Bad`, message: '' }, 0),
        failed({ code: 400, type: 'y'.repeat(50_000), message: '' }, 1),
        failed({ code: 429, type: 'ThrottlingException', message: '' }, 2),
      ],
      notScheduledByReason: {},
      startedAt: '2027-01-01T00:00:00.000Z',
      endedAt: '2027-01-01T00:00:01.000Z',
    });
    expect(manifest.failedByType).toEqual({ other: 2, ThrottlingException: 1 });
  });
});
