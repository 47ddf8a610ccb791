import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listCaptureFiles, readCaptures } from '../../../lambdas/adapters/local/capture-files';
import { DuplicateFilter, IngestReportBuilder, parseCaptureLine, parseCaptureStream, parseInferenceTime } from '../../../lambdas/core/capture/parse';
import type { CaptureRecord } from '../../../lambdas/core/types';

const SRC = { file: 'f.jsonl', line: 1 };

function line(overrides: { input?: Record<string, unknown>; output?: Record<string, unknown> | null; meta?: Record<string, unknown> } = {}): string {
  const captureData: Record<string, unknown> = {
    endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data: '{"messages":[{"role":"user","content":"hi"}]}', encoding: 'JSON', ...overrides.input },
  };
  if (overrides.output !== null) {
    captureData.endpointOutput = {
      observedContentType: 'application/json',
      mode: 'OUTPUT',
      data: '{"usage":{"prompt_tokens":7,"completion_tokens":30}}',
      encoding: 'JSON',
      ...overrides.output,
    };
  }
  return JSON.stringify({ captureData, eventMetadata: { eventId: 'e-1', inferenceTime: '2026-04-29T00:03:18Z', ...overrides.meta }, eventVersion: '0' });
}

async function* chunksOf(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? Buffer.from(p) : p;
}

async function parseAll(bytes: (string | Uint8Array)[], dedupe = new DuplicateFilter()): Promise<{ records: CaptureRecord[]; report: ReturnType<IngestReportBuilder['build']> }> {
  const builder = new IngestReportBuilder();
  const records: CaptureRecord[] = [];
  for await (const r of parseCaptureStream(chunksOf(...bytes), 'f.jsonl', builder, dedupe)) records.push(r);
  return { records, report: builder.build() };
}

describe('parseCaptureLine: encodings', () => {
  const body = '{"messages":[{"role":"user","content":"héllo"}]}';
  it.each([
    ['JSON', { data: body, encoding: 'JSON' }, body],
    ['CSV', { data: '1,2,3\n4,5,6', encoding: 'CSV', observedContentType: 'text/csv' }, '1,2,3\n4,5,6'],
    ['BASE64 of JSON', { data: Buffer.from(body).toString('base64'), encoding: 'BASE64' }, body],
    ['missing encoding means BASE64', { data: Buffer.from(body).toString('base64'), encoding: undefined }, body],
    ['lower-case encoding', { data: body, encoding: 'json' }, body],
  ])('%s', (_name, input, expected) => {
    const verdict = parseCaptureLine(line({ input }), SRC);
    expect(verdict.ok).toBe(true);
    if (verdict.ok) expect(Buffer.from(verdict.record.input.body).toString('utf8')).toBe(expected);
  });

  it('keeps binary base64 bodies byte for byte', () => {
    const bytes = Buffer.from([0, 255, 1, 254, 128]);
    const verdict = parseCaptureLine(line({ input: { data: bytes.toString('base64'), encoding: 'BASE64', observedContentType: 'application/x-image' } }), SRC);
    expect(verdict.ok && Buffer.from(verdict.record.input.body).equals(bytes)).toBe(true);
  });

  it('reads ids, content type, usage of the captured output, and the source', () => {
    const verdict = parseCaptureLine(line({ meta: { inferenceId: 'caller-7' } }), { file: 'x.jsonl', line: 9 });
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    expect(verdict.record).toMatchObject({
      eventId: 'e-1',
      inferenceId: 'caller-7',
      inferenceTimeMs: Date.UTC(2026, 3, 29, 0, 3, 18),
      hasSubSecondTime: false,
      input: { contentType: 'application/json', encoding: 'JSON' },
      output: { contentType: 'application/json', usage: { promptTokens: 7, completionTokens: 30 } },
      source: { file: 'x.jsonl', line: 9 },
    });
  });

  it('accepts a record without output, and an output that is not JSON', () => {
    const none = parseCaptureLine(line({ output: null }), SRC);
    expect(none.ok && none.record.output).toBeNull();
    const odd = parseCaptureLine(line({ output: { data: 'not json at all' } }), SRC);
    expect(odd.ok && odd.record.output?.usage).toBeNull();
  });
});

describe('parseInferenceTime', () => {
  it.each([
    ['2026-04-29T00:03:18Z', Date.UTC(2026, 3, 29, 0, 3, 18), false],
    ['2026-04-29T00:03:18.250Z', Date.UTC(2026, 3, 29, 0, 3, 18, 250), true],
    ['2026-04-29T00:03:18.000Z', Date.UTC(2026, 3, 29, 0, 3, 18), false],
    ['2026-04-29T02:03:18+02:00', Date.UTC(2026, 3, 29, 0, 3, 18), false],
    ['2026-04-28T19:03:18.5-05:00', Date.UTC(2026, 3, 29, 0, 3, 18, 500), true],
    ['2026-04-29T00:03:18.123456Z', Date.UTC(2026, 3, 29, 0, 3, 18, 123) + 0.456, true],
  ])('%s', (text, epochMs, subSecond) => {
    const t = parseInferenceTime(text);
    expect(t?.epochMs).toBeCloseTo(epochMs, 6);
    expect(t?.subSecond).toBe(subSecond);
  });

  it.each(['yesterday', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-04-29 00:03:18', '2026-04-29T24:00:00Z', '2026-04-29T00:03:18', ''])('rejects %j', (text) => {
    expect(parseInferenceTime(text)).toBeNull();
  });
});

describe('parseCaptureLine: every reject reason', () => {
  it.each([
    ['invalid_json', '{"captureData": '],
    ['not_an_object', '[1,2,3]'],
    ['not_an_object', '"a string"'],
    ['missing_field', JSON.stringify({ eventMetadata: { eventId: 'e', inferenceTime: '2026-04-29T00:03:18Z' } })],
    ['missing_field', line({ meta: { eventId: 42 } })],
    ['missing_field', line({ meta: { inferenceTime: undefined } })],
    ['missing_field', line({ input: { data: undefined } })],
    ['bad_inference_time', line({ meta: { inferenceTime: 'not a time' } })],
    ['bad_encoding', line({ input: { encoding: 'UTF16' } })],
    ['bad_base64', line({ input: { encoding: 'BASE64', data: 'not*base64!' } })],
    ['bad_base64', line({ input: { encoding: 'BASE64', data: 'abc' } })],
    ['bad_base64', line({ input: { encoding: 'BASE64', data: 'ab*dabcd' } })],
    ['bad_base64', line({ input: { encoding: 'BASE64', data: 'ab==abcd' } })],
    ['bad_inner_json', line({ input: { encoding: 'JSON', data: '{"messages": [' } })],
    ['bad_inner_json', line({ input: { encoding: 'BASE64', data: Buffer.from('{oops').toString('base64') } })],
  ])('%s (case %#)', (reason, text) => {
    const verdict = parseCaptureLine(text, SRC);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.reason).toBe(reason);
      expect(verdict.detail).not.toContain('hi'); // never prompt text
    }
  });
});

describe('parseCaptureStream', () => {
  const good = (id: string) => line({ meta: { eventId: id } });

  it('counts blank lines, rejects by reason with line numbers, and balances', async () => {
    const text = [good('a'), '', '   ', 'garbage', good('b'), '[1]', good('c')].join('\n') + '\n';
    const { records, report } = await parseAll([text]);
    expect(records.map((r) => r.eventId)).toEqual(['a', 'b', 'c']);
    expect(records.map((r) => r.source.line)).toEqual([1, 5, 7]);
    const f = report.files[0]!;
    expect(f).toMatchObject({ linesRead: 7, blankLines: 2, accepted: 3, rejected: 2, rejectedByReason: { invalid_json: 1, not_an_object: 1 } });
    expect(f.examples.invalid_json).toEqual([{ file: 'f.jsonl', line: 4, detail: expect.any(String) }]);
    expect(f.bytesRead).toBe(Buffer.byteLength(text));
    expect(report.totals.linesRead).toBe(report.totals.blankLines + report.totals.accepted + report.totals.rejected);
  });

  it('calls a cut-off last line truncated, and a complete bad line invalid', async () => {
    const { report } = await parseAll([good('a') + '\n' + good('b').slice(0, 50)]);
    expect(report.files[0]!.rejectedByReason).toEqual({ truncated_line: 1 });
    const complete = await parseAll([good('a') + '\n' + good('b').slice(0, 50) + '\n']);
    expect(complete.report.files[0]!.rejectedByReason).toEqual({ invalid_json: 1 });
  });

  it('accepts a valid last line without newline, and CRLF endings', async () => {
    const { records } = await parseAll([good('a') + '\r\n' + good('b')]);
    expect(records.map((r) => r.eventId)).toEqual(['a', 'b']);
  });

  it('gives the same result however the bytes are split into chunks, multi-byte characters included', async () => {
    const text = Buffer.from([good('a'), '', line({ meta: { eventId: 'ü-€-𝄞' }, input: { data: '{"messages":[{"content":"日本語 ✓"}]}' } }), 'bad'].join('\r\n') + '\n');
    const whole = await parseAll([text]);
    for (let cut = 1; cut < text.length; cut += 7) {
      const split = await parseAll([text.subarray(0, cut), text.subarray(cut)]);
      expect(split.records.map((r) => [r.eventId, Buffer.from(r.input.body).toString()])).toEqual(whole.records.map((r) => [r.eventId, Buffer.from(r.input.body).toString()]));
      expect(split.report.files[0]!.rejectedByReason).toEqual({ invalid_json: 1 });
    }
    expect(whole.records[1]!.eventId).toBe('ü-€-𝄞');
  });

  it('replays a duplicate (same eventId and body) once, but not a same-id record with another body', async () => {
    const other = line({ meta: { eventId: 'a' }, input: { data: '{"messages":[{"role":"user","content":"other"}]}' } });
    const dedupe = new DuplicateFilter();
    const first = await parseAll([[good('a'), good('a'), other].join('\n')], dedupe);
    expect(first.records).toHaveLength(2);
    expect(first.report.files[0]!.rejectedByReason).toEqual({ duplicate: 1 });
    // The filter spans files of one run.
    const second = await parseAll([good('a')], dedupe);
    expect(second.records).toHaveLength(0);
    expect(second.report.files[0]!.rejectedByReason).toEqual({ duplicate: 1 });
  });

  it('keeps at most five examples per reason', async () => {
    const { report } = await parseAll([Array.from({ length: 12 }, () => 'nope\n').join('')]);
    expect(report.files[0]!.rejectedByReason.invalid_json).toBe(12);
    expect(report.files[0]!.examples.invalid_json).toHaveLength(5);
  });
});

describe('local capture files', () => {
  it('walks hourly partitions in path order and reports other files as skipped', async () => {
    const root = mkdtempSync(join(tmpdir(), 'captures-'));
    try {
      for (const hour of ['01', '00']) mkdirSync(join(root, '2026/04/29', hour), { recursive: true });
      writeFileSync(join(root, '2026/04/29/01/b.jsonl'), line({ meta: { eventId: 'late', inferenceTime: '2026-04-29T01:00:00Z' } }) + '\n');
      writeFileSync(join(root, '2026/04/29/00/a.jsonl'), line({ meta: { eventId: 'early', inferenceTime: '2026-04-29T00:00:00Z' } }) + '\nbroken\n');
      writeFileSync(join(root, '2026/04/29/00/notes.txt'), 'hello');
      const listing = await listCaptureFiles(root);
      expect(listing.files.map((f) => f.slice(root.length))).toEqual(['/2026/04/29/00/a.jsonl', '/2026/04/29/01/b.jsonl']);
      expect(listing.skipped).toEqual([{ file: join(root, '2026/04/29/00/notes.txt'), reason: 'not a .jsonl file' }]);
      const builder = new IngestReportBuilder();
      const ids: string[] = [];
      for await (const r of readCaptures(root, builder, new DuplicateFilter())) ids.push(r.eventId);
      expect(ids).toEqual(['early', 'late']);
      const report = builder.build();
      expect(report.totals).toMatchObject({ files: 2, accepted: 2, rejected: 1, rejectedByReason: { invalid_json: 1 } });
      expect(report.skippedFiles).toHaveLength(1);
      await expect(listCaptureFiles(join(root, 'missing'))).rejects.toThrow(/captures path not found/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
