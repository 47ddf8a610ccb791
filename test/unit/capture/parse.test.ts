import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseInferenceTime } from '../../../lambdas/core/capture/time';
import { captureLineSchema, parseCaptureLine } from '../../../lambdas/core/capture/line';
import type { CaptureRecord, RejectReason } from '../../../lambdas/core/types';
import { CHAT_BODY, SECRET, captureLine } from './capture-fixtures';

const SRC = { file: 's3://bucket/cap/ep/AllTraffic/2026/04/29/00/f.jsonl', line: 3 };

function accepted(line: string): CaptureRecord {
  const verdict = parseCaptureLine(line, SRC);
  if (!verdict.ok) throw new Error(`rejected: ${verdict.reason} ${verdict.detail}`);
  return verdict.record;
}

const bodyText = (r: CaptureRecord) => Buffer.from(r.input.body).toString('utf8');
const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

describe('parseCaptureLine: input encodings', () => {
  it.each([
    ['JSON (UTF-8 text)', { data: CHAT_BODY, encoding: 'JSON' }, CHAT_BODY, 'JSON'],
    [
      'CSV, several rows',
      { data: '1,2,3\n4,5,6', encoding: 'CSV', observedContentType: 'text/csv' },
      '1,2,3\n4,5,6',
      'CSV',
    ],
    ['BASE64 of JSON', { data: b64(CHAT_BODY), encoding: 'BASE64' }, CHAT_BODY, 'BASE64'],
    ['missing encoding means BASE64', { data: b64(CHAT_BODY), encoding: undefined }, CHAT_BODY, 'BASE64'],
    ['null encoding means BASE64', { data: b64(CHAT_BODY), encoding: null }, CHAT_BODY, 'BASE64'],
    ['lower-case encoding name', { data: CHAT_BODY, encoding: 'json' }, CHAT_BODY, 'JSON'],
    [
      'base64 wrapped in MIME lines',
      { data: b64(CHAT_BODY).replace(/(.{20})/g, '$1\r\n'), encoding: 'BASE64' },
      CHAT_BODY,
      'BASE64',
    ],
    [
      'JSON Lines (encoding JSON, not one document)',
      { data: '{"a":1}\n{"a":2}', encoding: 'JSON', observedContentType: 'application/jsonlines' },
      '{"a":1}\n{"a":2}',
      'JSON',
    ],
    [
      'CSV text that is not JSON under a CSV type',
      { data: 'a,"b', encoding: 'CSV', observedContentType: 'text/csv' },
      'a,"b',
      'CSV',
    ],
  ])('%s', (_name, input, expectedText, expectedEncoding) => {
    const record = accepted(captureLine({ input }));
    expect(bodyText(record)).toBe(expectedText);
    expect(record.input.encoding).toBe(expectedEncoding);
  });

  it('keeps binary base64 bodies byte for byte, padding of every length included', () => {
    for (const bytes of [
      Buffer.from([0, 255, 1, 254, 128]),
      Buffer.from([7]),
      Buffer.from([1, 2]),
      Buffer.from([1, 2, 3]),
      Buffer.alloc(0),
    ]) {
      const record = accepted(
        captureLine({
          input: { data: bytes.toString('base64'), encoding: 'BASE64', observedContentType: 'image/png' },
        }),
      );
      expect(Buffer.from(record.input.body).equals(bytes)).toBe(true);
    }
  });

  it('keeps a body larger than the shared slab exact, and bodies stay intact as later ones are decoded', () => {
    const big = `{"messages":[{"role":"user","content":"${'ü'.repeat(60_000)}"}]}`;
    const records = [
      accepted(captureLine({ input: { data: big } })),
      ...Array.from({ length: 400 }, (_, i) =>
        accepted(captureLine({ input: { data: `{"n":${i},"pad":"${'x'.repeat(i * 7)}"}` } })),
      ),
    ];
    expect(bodyText(records[0]!)).toBe(big);
    records.slice(1).forEach((r, i) => expect(bodyText(r)).toBe(`{"n":${i},"pad":"${'x'.repeat(i * 7)}"}`));
  });

  it('takes the content type as given and defaults it when absent', () => {
    expect(
      accepted(captureLine({ input: { observedContentType: 'application/json; charset=utf-8' } })).input.contentType,
    ).toBe('application/json; charset=utf-8');
    expect(
      accepted(captureLine({ input: { observedContentType: undefined, data: b64('x'), encoding: 'BASE64' } })).input
        .contentType,
    ).toBe('application/octet-stream');
  });
});

describe('parseCaptureLine: metadata', () => {
  it('reads ids, time and the source', () => {
    const record = accepted(
      captureLine({ meta: { eventId: 'ev-9', inferenceId: 'caller-7', inferenceTime: '2026-04-29T00:03:18Z' } }),
    );
    expect(record).toMatchObject({
      eventId: 'ev-9',
      inferenceId: 'caller-7',
      inferenceTimeMs: 1_777_420_998_000,
      hasSubSecondTime: false,
      source: SRC,
    });
  });

  it.each([
    ['absent', undefined],
    ['null', null],
  ])('inferenceId %s is null', (_name, inferenceId) => {
    expect(accepted(captureLine({ meta: { inferenceId } })).inferenceId).toBeNull();
  });

  it('does not need eventVersion', () => {
    const value = JSON.parse(captureLine()) as Record<string, unknown>;
    delete value.eventVersion;
    expect(parseCaptureLine(JSON.stringify(value), SRC).ok).toBe(true);
  });

  it('marks fractional times as sub-second', () => {
    expect(accepted(captureLine({ meta: { inferenceTime: '2026-04-29T00:03:18.250Z' } }))).toMatchObject({
      inferenceTimeMs: 1_777_420_998_250,
      hasSubSecondTime: true,
    });
  });
});

describe('parseInferenceTime', () => {
  const T = 1_777_420_998_000; // 2026-04-29T00:03:18Z: 20,572 days * 86,400 s + 198 s
  it.each([
    ['2026-04-29T00:03:18Z', T, false],
    ['2026-04-29T00:03:18.250Z', T + 250, true],
    ['2026-04-29T00:03:18.5Z', T + 500, true],
    ['2026-04-29T00:03:18.000Z', T, true], // a fraction written, even .000: exact (issue 11)
    ['2026-04-29T00:03:18.123456789Z', T + 123.456789, true],
    ['2026-04-29T02:03:18+02:00', T, false],
    ['2026-04-28T19:03:18.5-05:00', T + 500, true],
    ['2026-04-29T05:33:18+0530', T, false],
    ['2026-04-29T01:03:18+01', T, false],
    ['2026-04-29T00:03:18-00:00', T, false],
    ['2024-02-29T12:00:00Z', 1_709_208_000_000, false], // leap day
    ['2000-02-29T00:00:00Z', 951_782_400_000, false], // 400-year leap day
    ['1969-12-31T23:59:59Z', -1000, false],
    ['0050-01-01T00:00:00Z', -60_589_296_000_000, false], // not 1950, as Date.UTC would make it
  ])('%s', (text, epochMs, subSecond) => {
    const t = parseInferenceTime(text);
    expect(t).not.toBeNull();
    expect(t!.epochMs).toBeCloseTo(epochMs, 6);
    expect(t!.subSecond).toBe(subSecond);
  });

  it.each([
    'yesterday',
    '',
    '2026-13-45T00:03:18Z',
    '2026-02-30T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-04-29T24:00:00Z',
    '2026-04-29T00:60:00Z',
    '2026-04-29T00:03:60Z',
    '2026-04-29 00:03:18Z',
    '2026-04-29T00:03:18',
    '2026-04-29T00:03:18z',
    '2026-04-29T00:03:18.Z',
    '2026-04-29T00:03:18.1234567891Z',
    '2026-04-29T00:03:18Zjunk',
    '2026-04-29T00:03:18+2:00',
    '2026-04-29T00:03:18+24:00',
    '2026-04-29T00:03:18+02:60',
    '2026-4-29T00:03:18Z',
    '+2026-04-29T00:03:18Z',
    '1777420998000',
  ])('rejects %j', (text) => {
    expect(parseInferenceTime(text)).toBeNull();
  });
});

describe('parseCaptureLine: captured output (information only)', () => {
  const out = (data: string, extra: Record<string, unknown> = {}) => ({
    observedContentType: 'application/json',
    mode: 'OUTPUT',
    data,
    encoding: 'JSON',
    ...extra,
  });
  it.each([
    [
      'OpenAI usage',
      out('{"usage":{"prompt_tokens":7,"completion_tokens":30}}'),
      { promptTokens: 7, completionTokens: 30 },
    ],
    [
      'usage with *_details objects',
      out(
        '{"id":"x","usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":1},"completion_tokens":2,"total_tokens":7}}',
      ),
      { promptTokens: 5, completionTokens: 2 },
    ],
    [
      'usage in a base64 answer',
      out(b64('{"usage":{"prompt_tokens":3,"completion_tokens":4}}'), { encoding: 'BASE64' }),
      { promptTokens: 3, completionTokens: 4 },
    ],
    [
      '"usage" quoted inside the answer text is not the usage',
      out(
        '{"choices":[{"message":{"content":"my \\"usage\\": {\\"prompt_tokens\\": ' +
          '999}"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}',
      ),
      { promptTokens: 3, completionTokens: 4 },
    ],
    [
      'only the answer text mentions usage',
      out('{"choices":[{"message":{"content":"\\"usage\\": {\\"prompt_tokens\\": 999}"}}]}'),
      null,
    ],
    [
      'one count missing, one negative',
      out('{"usage":{"prompt_tokens":-1,"completion_tokens":4}}'),
      { promptTokens: null, completionTokens: 4 },
    ],
    ['fractional counts', out('{"usage":{"prompt_tokens":1.5,"completion_tokens":"4"}}'), null],
    ['usage is null', out('{"usage":null}'), null],
    ['no usage', out('{"predictions":[1,2]}'), null],
    ['not JSON at all', out('oops {'), null],
    ['CSV answer', out('0.1,0.9', { observedContentType: 'text/csv', encoding: 'CSV' }), null],
  ])('%s', (_name, output, usage) => {
    expect(accepted(captureLine({ output })).output?.usage).toEqual(usage);
  });

  it.each([
    ['JSON text: UTF-8 bytes', out('{"a":"é"}'), 10],
    ['base64 with two padding chars', out(b64(Buffer.from([1])), { encoding: 'BASE64' }), 1],
    ['base64 with one padding char', out(b64(Buffer.from([1, 2])), { encoding: 'BASE64' }), 2],
    ['base64 without padding', out(b64(Buffer.from([1, 2, 3])), { encoding: 'BASE64' }), 3],
    ['missing encoding means base64', out(b64(Buffer.alloc(100)), { encoding: undefined }), 100],
  ])('byte length, %s', (_name, output, byteLength) => {
    expect(accepted(captureLine({ output })).output?.byteLength).toBe(byteLength);
  });

  it.each([
    ['absent', null],
    ['a string', 'oops'],
    ['without data', { observedContentType: 'application/json' }],
    ['data not a string', { data: 42 }],
  ])('an output that is %s gives no summary and keeps the line', (_name, output) => {
    expect(accepted(captureLine({ output })).output).toBeNull();
  });

  it('keeps the line when the output is invalid base64; no type declared stays none (replayed without Accept)', () => {
    expect(accepted(captureLine({ output: { data: '***', encoding: 'BASE64' } })).output).toEqual({
      contentType: null,
      byteLength: 2,
      usage: null,
      sha256: null,
    });
  });

  it('digests outputs without token usage (deterministic models), from their decoded bytes; not LLM answers', () => {
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    expect(
      accepted(captureLine({ output: out('0.1,0.9', { observedContentType: 'text/csv', encoding: 'CSV' }) })).output
        ?.sha256,
    ).toBe(sha(Buffer.from('0.1,0.9')));
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255]);
    expect(
      accepted(captureLine({ output: out(b64(png), { encoding: 'BASE64', observedContentType: 'image/png' }) })).output
        ?.sha256,
    ).toBe(sha(png));
    expect(
      accepted(captureLine({ output: out('{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}') })).output
        ?.sha256,
    ).toBeNull();
  });
});

describe('parseCaptureLine: every reject reason', () => {
  const cases: [RejectReason, string, RegExp][] = [
    ['invalid_json', '{"captureData": ', /not JSON/],
    ['invalid_json', `${SECRET} is not json`, /^not JSON \(25 chars\)$/], // V8's message quotes the text: not used
    ['invalid_json', `{"k":"${SECRET}",}`, /^not JSON \(at char 21 of 22\)$/],
    ['invalid_json', captureLine().slice(0, -1), /not JSON/],
    ['not_an_object', '[1,2,3]', /array/],
    ['not_an_object', `"${SECRET}"`, /string/],
    ['not_an_object', 'null', /null/],
    ['not_an_object', '42', /number/],
    [
      'missing_field',
      JSON.stringify({ eventMetadata: { eventId: 'e', inferenceTime: '2026-04-29T00:03:18Z' } }),
      /^captureData:/,
    ],
    [
      'missing_field',
      JSON.stringify({ captureData: 'x', eventMetadata: { eventId: 'e', inferenceTime: '2026-04-29T00:03:18Z' } }),
      /^captureData:/,
    ],
    ['missing_field', captureLine({ meta: { eventId: 42 } }), /^eventMetadata\.eventId:/],
    ['missing_field', captureLine({ meta: { eventId: '' } }), /^eventMetadata\.eventId:/],
    ['missing_field', captureLine({ meta: { inferenceTime: undefined } }), /^eventMetadata\.inferenceTime:/],
    ['missing_field', captureLine({ meta: { inferenceTime: 1777420998 } }), /^eventMetadata\.inferenceTime:/],
    ['missing_field', captureLine({ meta: { inferenceId: 7 } }), /^eventMetadata\.inferenceId:/],
    ['missing_field', captureLine({ input: { data: undefined } }), /^captureData\.endpointInput\.data:/],
    ['missing_field', captureLine({ input: { data: { messages: [] } } }), /^captureData\.endpointInput\.data:/],
    ['missing_field', captureLine({ input: { encoding: 3 } }), /^captureData\.endpointInput\.encoding:/],
    [
      'missing_field',
      captureLine({ input: { observedContentType: ['application/json'] } }),
      /^captureData\.endpointInput\.observedContentType:/,
    ],
    [
      'bad_inference_time',
      captureLine({ meta: { inferenceTime: 'yesterday' } }),
      /"yesterday" is not an ISO-8601 instant/,
    ],
    ['bad_inference_time', captureLine({ meta: { inferenceTime: '2026-13-45T00:03:18Z' } }), /not an ISO-8601 instant/],
    ['bad_encoding', captureLine({ input: { encoding: 'UTF16' } }), /unknown encoding "UTF16"/],
    ['bad_encoding', captureLine({ input: { encoding: '' } }), /unknown encoding/],
    [
      'bad_base64',
      captureLine({ input: { encoding: 'BASE64', data: 'not*base64!' } }),
      /not valid base64 \(11 chars\)/,
    ],
    ['bad_base64', captureLine({ input: { encoding: 'BASE64', data: 'abc' } }), /base64/],
    ['bad_base64', captureLine({ input: { encoding: 'BASE64', data: 'ab*dabcd' } }), /base64/],
    ['bad_base64', captureLine({ input: { encoding: 'BASE64', data: 'ab==abcd' } }), /base64/],
    ['bad_base64', captureLine({ input: { encoding: 'BASE64', data: 'ab-_abcd' } }), /base64/], // base64url alphabet
    ['bad_base64', captureLine({ input: { encoding: 'BASE64', data: 'abcd abc' } }), /base64/],
    ['bad_base64', captureLine({ input: { encoding: undefined, data: CHAT_BODY } }), /base64/], // JSON text without its encoding
    [
      'bad_inner_json',
      captureLine({ input: { encoding: 'JSON', data: `{"messages": ["${SECRET}"` } }),
      /content type application\/json but the data is not JSON \(.*\d+\)/,
    ],
    ['bad_inner_json', captureLine({ input: { encoding: 'BASE64', data: b64(`{${SECRET}`) } }), /not JSON/],
    ['bad_inner_json', captureLine({ input: { encoding: 'CSV', data: '1,2' } }), /not JSON/],
    ['bad_inner_json', captureLine({ input: { encoding: 'JSON', data: '' } }), /not JSON/],
    [
      'bad_inner_json',
      captureLine({ input: { observedContentType: 'application/vnd.api+json; charset=utf-8', data: '{' } }),
      /vnd\.api\+json/,
    ],
  ];
  it.each(cases)('%s (case %#)', (reason, line, detail) => {
    const verdict = parseCaptureLine(line, SRC);
    expect(verdict).toMatchObject({ ok: false, reason });
    if (verdict.ok) return;
    expect(verdict.detail).toMatch(detail);
    expect(verdict.detail).not.toContain(SECRET);
    expect(verdict.detail.length).toBeLessThan(200);
  });
});

describe('the hand-checked fast path agrees with the zod schema', () => {
  const meta = { eventId: 'e', inferenceTime: '2026-04-29T00:03:18Z' };
  const input = { observedContentType: 'application/json', data: '{}', encoding: 'JSON' };
  const shapes: unknown[] = [
    { captureData: { endpointInput: input }, eventMetadata: meta },
    { captureData: { endpointInput: input, endpointOutput: 'odd' }, eventMetadata: meta },
    { captureData: { endpointInput: { data: b64('x') } }, eventMetadata: meta },
    {
      captureData: { endpointInput: { ...input, observedContentType: null, encoding: null, data: b64('{}') } },
      eventMetadata: { ...meta, inferenceId: null },
    },
    { captureData: { endpointInput: input, extra: 1 }, eventMetadata: { ...meta, extra: true }, more: [] },
    { captureData: { endpointInput: input }, eventMetadata: { ...meta, eventId: '' } },
    { captureData: { endpointInput: input }, eventMetadata: { ...meta, eventId: null } },
    { captureData: { endpointInput: input }, eventMetadata: { ...meta, inferenceId: 1 } },
    { captureData: { endpointInput: input }, eventMetadata: { ...meta, inferenceTime: null } },
    { captureData: { endpointInput: { ...input, data: null } }, eventMetadata: meta },
    { captureData: { endpointInput: { ...input, encoding: false } }, eventMetadata: meta },
    { captureData: { endpointInput: { ...input, observedContentType: 1 } }, eventMetadata: meta },
    { captureData: { endpointInput: null }, eventMetadata: meta },
    { captureData: { endpointInput: [input] }, eventMetadata: meta },
    { captureData: null, eventMetadata: meta },
    { captureData: { endpointInput: input }, eventMetadata: [] },
    { captureData: { endpointInput: input } },
    {},
  ];
  it.each(shapes.map((s, i) => [i, s]))('shape %i', (_i, shape) => {
    const verdict = parseCaptureLine(JSON.stringify(shape), SRC);
    const schemaAccepts = captureLineSchema.safeParse(shape).success;
    expect(!verdict.ok && verdict.reason === 'missing_field').toBe(!schemaAccepts);
  });
});
