/**
 * An input without `observedContentType` (missing or null): `"encoding": "JSON"`, or a body
 * that is one JSON value, is `application/json`, counted as inferred in the ingest report and
 * checked as a declared JSON type is; anything else stays `application/octet-stream`, which a
 * chat target drops with its reason and a SageMaker target sends as captured. An output
 * without a content type stays without one: the request asks for none (no Accept).
 */
import { describe, expect, it } from 'vitest';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { parseCaptureLine } from '../../../lambdas/core/capture/line';
import { parseCaptureStream } from '../../../lambdas/core/capture/stream';
import { buildPlan, type PlanOptions } from '../../../lambdas/core/plan/plan';
import type { CaptureRecord, TargetKind } from '../../../lambdas/core/types';
import { CHAT_BODY, captureLine, chunksOf, parseAll } from './capture-fixtures';

const NOW = Date.UTC(2026, 5, 1);
const b64 = (text: string) => Buffer.from(text).toString('base64');
const withoutType = (input: Record<string, unknown>, how: 'missing' | 'null') => {
  const line = JSON.parse(captureLine({ input })) as { captureData: { endpointInput: Record<string, unknown> } };
  if (how === 'missing') delete line.captureData.endpointInput.observedContentType;
  else line.captureData.endpointInput.observedContentType = null;
  return JSON.stringify(line);
};

function parsed(line: string): CaptureRecord {
  const verdict = parseCaptureLine(line, { file: 'f.jsonl', line: 1 }, { nowMs: NOW });
  if (!verdict.ok) throw new Error(`rejected: ${verdict.reason} ${verdict.detail}`);
  return verdict.record;
}

const plan = (record: CaptureRecord, targetKind: TargetKind) =>
  buildPlan([record], { runId: 'r', targetKind, timeScale: 1, intraSecond: 'spread' } satisfies PlanOptions);

describe.each(['missing', 'null'] as const)('input content type %s', (how) => {
  it.each([
    ['encoding JSON, a chat body', { encoding: 'JSON', data: CHAT_BODY }],
    ['encoding JSON, a JSON array', { encoding: 'JSON', data: '[[1.5, 2], [3, 4]]' }],
    ['BASE64, a chat body', { encoding: 'BASE64', data: b64(CHAT_BODY) }],
    ['no encoding (BASE64), a JSON object', { encoding: undefined, data: b64('{"instances": [1, 2]}') }],
    ['BASE64, a JSON scalar', { encoding: 'BASE64', data: b64(' 42 ') }],
  ])('%s: application/json, inferred', (_name, input) => {
    const record = parsed(withoutType(input, how));
    expect(record.input).toMatchObject({ contentType: 'application/json', contentTypeInferred: true });
  });

  it.each([
    ['encoding CSV, CSV rows', { encoding: 'CSV', data: '5.1,3.5,1.4,0.2\n6.2,2.9,4.3,1.3' }],
    ['encoding CSV, a number (CSV says it is not JSON)', { encoding: 'CSV', data: '0.95' }],
    ['BASE64, CSV text', { encoding: 'BASE64', data: b64('34,52000.5,"Lyon, FR"') }],
    ['BASE64, binary', { encoding: 'BASE64', data: b64('\u0000\u00ff\u0089PNG') }],
    ['BASE64, empty', { encoding: 'BASE64', data: '' }],
  ])('%s: stays application/octet-stream, not inferred', (_name, input) => {
    const record = parsed(withoutType(input, how));
    expect(record.input.contentType).toBe('application/octet-stream');
    expect(record.input.contentTypeInferred).toBeUndefined();
  });

  it('encoding JSON with a body that is not JSON: bad_inner_json, as for a declared JSON type (no prompt text in the detail)', () => {
    const verdict = parseCaptureLine(
      withoutType({ encoding: 'JSON', data: '{"messages": [{"role": "user", "content": "SECRET' }, how),
      { file: 'f', line: 1 },
      { nowMs: NOW },
    );
    expect(verdict).toMatchObject({ ok: false, reason: 'bad_inner_json' });
    expect(!verdict.ok && verdict.detail).toMatch(/^no content type and encoding JSON, but the data is not JSON \(/);
    expect(!verdict.ok && verdict.detail).not.toContain('SECRET');
  });
});

describe('what the targets get', () => {
  it('an inferred chat request is replayed to a chat target; a SageMaker target gets Content-Type application/json', () => {
    const record = parsed(withoutType({ encoding: 'JSON', data: CHAT_BODY }, 'missing'));
    const chat = plan(record, 'openai-chat');
    expect(chat.incompatible).toHaveLength(0);
    expect(chat.requests).toHaveLength(1);
    expect(plan(record, 'sagemaker').requests[0]!.contentType).toBe('application/json');
  });

  it('an unknown (CSV-looking) body: a chat target drops it as unsupported_content_type, a SageMaker target sends it as captured', () => {
    const record = parsed(withoutType({ encoding: 'CSV', data: '1,2,3' }, 'missing'));
    expect(plan(record, 'openai-chat').incompatible.map((i) => i.reason)).toEqual(['unsupported_content_type']);
    const [request] = plan(record, 'sagemaker').requests;
    expect(request).toMatchObject({ contentType: 'application/octet-stream' });
    expect(Buffer.from(request!.body).toString()).toBe('1,2,3');
  });

  it('a declared type is kept as declared, even over a JSON body', () => {
    const record = parsed(
      captureLine({ input: { observedContentType: 'text/plain', encoding: 'JSON', data: CHAT_BODY } }),
    );
    expect(record.input.contentType).toBe('text/plain');
    expect(record.input.contentTypeInferred).toBeUndefined();
  });

  it.each([
    ['absent', {}],
    ['null', { observedContentType: null }],
  ])('an output content type %s: none asked for (accept null), token usage still read', (_name, extra) => {
    const record = parsed(
      captureLine({
        output: {
          mode: 'OUTPUT',
          encoding: 'JSON',
          data: '{"usage":{"prompt_tokens":3,"completion_tokens":5}}',
          ...extra,
        },
      }),
    );
    expect(record.output).toMatchObject({ contentType: null, usage: { promptTokens: 3, completionTokens: 5 } });
    expect(plan(record, 'sagemaker').requests[0]!.accept).toBeNull();
  });

  it('a declared output content type is the Accept', () => {
    const record = parsed(captureLine({ output: { observedContentType: 'text/csv', encoding: 'CSV', data: '0.5' } }));
    expect(plan(record, 'sagemaker').requests[0]!.accept).toBe('text/csv');
  });
});

describe('the ingest report counts inferred types, per file and in total', () => {
  it('only accepted records', async () => {
    const lines = [
      withoutType({ encoding: 'JSON', data: CHAT_BODY }, 'missing'), // inferred
      withoutType({ encoding: 'BASE64', data: b64('{"instances": []}') }, 'null'), // inferred
      withoutType({ encoding: 'CSV', data: '1,2' }, 'missing'), // unknown, not inferred
      withoutType({ encoding: 'JSON', data: '{"broken' }, 'missing'), // rejected
      captureLine({ meta: { eventId: 'declared' } }), // declared
    ];
    const { report } = await parseAll([
      lines.map((l, i) => l.replace('"eventId":"e-1"', `"eventId":"e-${i}"`)).join('\n') + '\n',
    ]);
    expect(report.files[0]).toMatchObject({
      accepted: 4,
      rejected: 1,
      contentTypeInferred: 2,
      rejectedByReason: { bad_inner_json: 1 },
    });
    expect(report.totals.contentTypeInferred).toBe(2);
  });

  it('an earlier copy read later takes the count with it to its own file', async () => {
    const copy = (second: number) =>
      withoutType({ encoding: 'JSON', data: CHAT_BODY }, 'missing').replace('00:03:18Z', `00:03:0${second}Z`);
    const builder = new IngestReportBuilder();
    const duplicates = new DuplicateFilter();
    for (const [file, text] of [
      ['a.jsonl', copy(3)],
      ['b.jsonl', copy(1)],
    ] as const) {
      for await (const record of parseCaptureStream(chunksOf([text + '\n']), file, builder, duplicates, { nowMs: NOW }))
        void record;
    }
    const report = builder.build();
    expect(
      report.files.map((f) => [f.file, f.accepted, f.contentTypeInferred, f.rejectedByReason.duplicate ?? 0]),
    ).toEqual([
      ['a.jsonl', 0, 0, 1],
      ['b.jsonl', 1, 1, 0],
    ]);
    expect(report.totals).toMatchObject({ accepted: 1, contentTypeInferred: 1 });
  });
});
