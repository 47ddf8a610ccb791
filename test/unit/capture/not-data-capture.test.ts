/**
 * A line of another JSON Lines format: the reject detail says what it looks like (by field
 * names, never values) and what was expected; a Data Capture line with a bad field keeps the
 * schema's own detail.
 */
import { describe, expect, it } from 'vitest';
import { parseCaptureLine } from '../../../lambdas/core/capture/line';
import { commonestRejection, IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { notDataCaptureDetail } from '../../../lambdas/core/capture/not-data-capture';

const source = { file: 'x.jsonl', line: 1, byteStart: 0, byteEnd: 1 } as never;
const EXPECTED = 'expected SageMaker Data Capture lines (captureData.endpointInput and eventMetadata)';

describe('notDataCaptureDetail', () => {
  it.each([
    [
      { model: 'm', messages: [{ role: 'user', content: 'secret prompt' }] },
      'OpenAI chat requests (fields model, messages)',
    ],
    [
      { metadata: {}, metrics: {}, error: null },
      'an AIPerf profile export (profile_export.jsonl records), the results of a run, not its input (fields metadata, metrics, error)',
    ],
    [
      { custom_id: 'r1', method: 'POST', url: '/v1/chat/completions', body: {} },
      'an OpenAI Batch input file (fields custom_id, method, url, body)',
    ],
    [
      { timestamp: 0, input_length: 10, output_length: 5, hash_ids: [] },
      'a Mooncake trace (AIPerf mooncake_trace) (fields timestamp, input_length, output_length, hash_ids)',
    ],
    [{ endpointInput: { data: '{}' } }, 'a captureData object without the line around it (fields endpointInput)'],
    [{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 }, 'some other JSON Lines format (fields a, b, c, d, e, ...)'],
    [{}, 'some other JSON Lines format (no fields)'],
  ])('%j looks like %s', (value, what) => {
    expect(notDataCaptureDetail(value)).toBe(`not SageMaker Data Capture: looks like ${what}; ${EXPECTED}`);
  });

  it('prints no value, and no field name a terminal or a reader should not see', () => {
    const detail = notDataCaptureDetail({ messages: 'secret prompt', ['\u001b]0;PWNED\u0007']: 1 }) as string;
    expect(detail).not.toContain('secret');
    expect(detail).not.toContain('PWNED');
    expect(detail).toContain('(fields messages, ...)');
  });

  it('leaves a line with either Data Capture field to the schema', () => {
    expect(notDataCaptureDetail({ eventMetadata: {} })).toBeNull();
    const verdict = parseCaptureLine(
      JSON.stringify({ captureData: {}, eventMetadata: { eventId: 'e', inferenceTime: '2026-04-29T00:03:18Z' } }),
      source,
    );
    expect(verdict).toMatchObject({
      ok: false,
      reason: 'missing_field',
      detail: expect.stringMatching(/^captureData\.endpointInput:/),
    });
  });

  it('is the detail of a line parsed without either field', () => {
    const verdict = parseCaptureLine(JSON.stringify({ model: 'm', messages: [] }), source);
    expect(verdict).toEqual({
      ok: false,
      reason: 'missing_field',
      detail: `not SageMaker Data Capture: looks like OpenAI chat requests (fields model, messages); ${EXPECTED}`,
    });
  });
});

describe('commonestRejection', () => {
  it('gives the first example of the reason most lines were rejected for', () => {
    const report = new IngestReportBuilder();
    const file = report.startFile('a.jsonl');
    file.reject('invalid_json', 1, 'not JSON');
    file.reject('missing_field', 2, 'not SageMaker Data Capture: ...');
    file.reject('missing_field', 3, 'not SageMaker Data Capture: ...');
    expect(commonestRejection(report.build())).toBe('a.jsonl line 2: not SageMaker Data Capture: ...');
    expect(commonestRejection(new IngestReportBuilder().build())).toBeNull();
  });
});
