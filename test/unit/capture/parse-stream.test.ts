import { describe, expect, it } from 'vitest';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { parseCaptureLine } from '../../../lambdas/core/capture/line';
import { parseCaptureStream } from '../../../lambdas/core/capture/stream';
import type { CaptureRecord, IngestReport } from '../../../lambdas/core/types';
import { CHAT_BODY, captureLine, chunksOf, parseAll, view } from './capture-fixtures';

const good = (id: string, data = CHAT_BODY) => captureLine({ meta: { eventId: id }, input: { data } });

function expectBalanced(report: IngestReport): void {
  for (const f of [...report.files, report.totals]) expect(f.linesRead).toBe(f.blankLines + f.accepted + f.rejected);
  const sum = (o: Partial<Record<string, number>>) => Object.values(o).reduce((a: number, b) => a + (b ?? 0), 0);
  expect(sum(report.totals.rejectedByReason)).toBe(report.totals.rejected);
}

/** Splits bytes into pieces of `size`. */
const pieces = (bytes: Buffer, size: number) =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe('parseCaptureStream: one file, every outcome on its line', () => {
  const lines = [
    good('a'), // 1
    '', // 2 blank
    ' \t ', // 3 blank
    'garbage', // 4
    '[1]', // 5
    captureLine({ meta: { eventId: undefined } }), // 6
    captureLine({ meta: { eventId: 't', inferenceTime: 'yesterday' } }), // 7
    captureLine({ meta: { eventId: 'u' }, input: { encoding: 'UTF16' } }), // 8
    captureLine({ meta: { eventId: 'v' }, input: { encoding: 'BASE64', data: 'ab*d' } }), // 9
    captureLine({ meta: { eventId: 'w' }, input: { data: '{"messages":' } }), // 10
    good('a'), // 11 duplicate of line 1
    good('b'), // 12
    good('c').slice(0, 60), // 13 cut off, no newline
  ];
  const text = lines.join('\n');

  it('counts, rejects by reason with line numbers, and balances', async () => {
    const { records, report } = await parseAll([text]);
    expect(records.map((r) => [r.eventId, r.source.line])).toEqual([
      ['a', 1],
      ['b', 12],
    ]);
    const f = report.files[0]!;
    expect(f).toMatchObject({
      file: 'f.jsonl',
      bytesRead: Buffer.byteLength(text),
      linesRead: 13,
      blankLines: 2,
      accepted: 2,
      rejected: 9,
    });
    const lineOf = Object.fromEntries(
      Object.entries(f.examples).map(([reason, examples]) => [reason, examples.map((e) => e.line)]),
    );
    expect(lineOf).toEqual({
      invalid_json: [4],
      not_an_object: [5],
      missing_field: [6],
      bad_inference_time: [7],
      bad_encoding: [8],
      bad_base64: [9],
      bad_inner_json: [10],
      duplicate: [11],
      truncated_line: [13],
    });
    expect(Object.values(f.rejectedByReason)).toEqual(Array(9).fill(1));
    for (const examples of Object.values(f.examples)) expect(examples[0]!.file).toBe('f.jsonl');
    expectBalanced(report);
  });
});

describe('parseCaptureStream: line endings and the last line', () => {
  it.each([
    ['cut off, no newline', good('a') + '\n' + good('b').slice(0, 50), [], { truncated_line: 1 }],
    ['the same cut, with newline', good('a') + '\n' + good('b').slice(0, 50) + '\n', [], { invalid_json: 1 }],
    ['whole, no newline', good('a') + '\n' + good('b'), ['b'], {}],
    [
      'JSON but wrong, no newline (not truncated)',
      good('a') + '\n' + captureLine({ meta: { eventId: 'b', inferenceTime: 'soon' } }),
      [],
      { bad_inference_time: 1 },
    ],
    ['spaces, no newline', good('a') + '\n   ', [], {}],
  ])('%s', async (_name, text, lastIds, rejected) => {
    const { records, report } = await parseAll([text]);
    expect(records.map((r) => r.eventId)).toEqual(['a', ...lastIds]);
    expect(report.files[0]!.rejectedByReason).toEqual(rejected);
    expect(report.files[0]!.linesRead).toBe(2);
  });

  it('reads CRLF files like LF files, down to the details of a bad line', async () => {
    const lines = [good('a'), '', 'not json', good('b'), good('c').slice(0, 40)];
    const lf = await parseAll([lines.join('\n')]);
    const crlf = await parseAll([lines.join('\r\n')]);
    // Spans are file offsets: a CR per line moves them; everything else is the same.
    const noSpan = (r: Parameters<typeof view>[0]) => ({ ...view(r), span: undefined });
    expect(crlf.records.map(noSpan)).toEqual(lf.records.map(noSpan));
    expect({ ...crlf.report.files[0]!, bytesRead: 0 }).toEqual({ ...lf.report.files[0]!, bytesRead: 0 });
    expect(crlf.report.files[0]).toMatchObject({ linesRead: 5, blankLines: 1, accepted: 2 });
    expect(crlf.report.files[0]!.examples.invalid_json?.[0]?.detail).toBe('not JSON (8 chars)');
  });

  it("skips a UTF-8 byte-order mark at the start of the file, and at a line's start (files joined with their marks)", async () => {
    const text = '\uFEFF' + good('a') + '\n\uFEFF' + good('b') + '\n\uFEFF\n';
    const { records, report } = await parseAll([text]);
    expect(records.map((r) => r.eventId)).toEqual(['a', 'b']);
    expect(report.files[0]).toMatchObject({ linesRead: 3, accepted: 2, blankLines: 1, rejected: 0 });
    // The mark is outside the span: the span's bytes are the JSON line itself.
    const bytes = Buffer.from(text);
    for (const r of records) expect(bytes.subarray(r.span!.start, r.span!.end).toString('utf8')).toBe(good(r.eventId));
  });

  it('counts an empty file and a file of newlines', async () => {
    expect((await parseAll([])).report.files[0]).toMatchObject({
      bytesRead: 0,
      linesRead: 0,
      accepted: 0,
      rejected: 0,
    });
    expect((await parseAll(['\n\r\n\n'])).report.files[0]).toMatchObject({ bytesRead: 4, linesRead: 3, blankLines: 3 });
  });
});

describe('parseCaptureStream: chunk boundaries', () => {
  const file = Buffer.from(
    [
      captureLine({ meta: { eventId: 'ü-€-𝄞' } }),
      '',
      'bad line',
      captureLine({
        meta: { eventId: 'jp', inferenceTime: '2026-04-29T00:03:18.5+09:00' },
        input: { data: '{"messages":[{"role":"user","content":"日本語 ✓ 𝄞"}]}' },
      }),
      captureLine({
        meta: { eventId: 'b64' },
        input: { encoding: 'BASE64', data: Buffer.from('{"x":"é"}').toString('base64') },
      }),
      captureLine({ meta: { eventId: 'cut' } }).slice(0, 70),
    ].join('\r\n'),
  );

  it('gives the same records and report wherever the bytes are split', async () => {
    const whole = await parseAll([file]);
    expect(whole.records.map((r) => r.eventId)).toEqual(['ü-€-𝄞', 'jp', 'b64']);
    expect(whole.report.files[0]!.rejectedByReason).toEqual({ invalid_json: 1, truncated_line: 1 });
    expectBalanced(whole.report);
    for (let cut = 0; cut <= file.length; cut++) {
      const split = await parseAll([file.subarray(0, cut), file.subarray(cut)]);
      expect(split.records.map(view), `cut at ${cut}`).toEqual(whole.records.map(view));
      expect(split.report, `cut at ${cut}`).toEqual(whole.report);
    }
  });

  it('gives each record the byte span of its line in the file (CR and BOM excluded), so the line can be read back', async () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), file]);
    for (const bytes of [file, withBom]) {
      const { records } = await parseAll(pieces(bytes, 7));
      expect(records).toHaveLength(3);
      for (const r of records) {
        const line = bytes.subarray(r.span!.start, r.span!.end).toString('utf8');
        expect(line.startsWith('{') && line.endsWith('}'), line.slice(0, 20)).toBe(true);
        const again = parseCaptureLine(line, r.source);
        expect(again.ok && view({ ...again.record, span: r.span })).toEqual(view({ ...r, dedupe: undefined }));
      }
    }
  });

  it('gives the same result one byte at a time, and from plain Uint8Array chunks', async () => {
    const whole = await parseAll([file]);
    const bytewise = await parseAll(pieces(file, 1));
    expect(bytewise.records.map(view)).toEqual(whole.records.map(view));
    expect(bytewise.report).toEqual(whole.report);
    const plain = await parseAll(pieces(file, 37).map((b) => new Uint8Array(b)));
    expect(plain.records.map(view)).toEqual(whole.records.map(view));
  });

  it('keeps a 4-byte character intact when a chunk ends inside it', async () => {
    const clef = file.indexOf(Buffer.from('𝄞'));
    for (const cut of [clef + 1, clef + 2, clef + 3]) {
      const { records } = await parseAll([file.subarray(0, cut), file.subarray(cut)]);
      expect(records[0]!.eventId).toBe('ü-€-𝄞');
      expect(
        records.some((r) => r.eventId.includes('\uFFFD') || Buffer.from(r.input.body).toString().includes('\uFFFD')),
      ).toBe(false);
    }
  });

  it('joins a long line spread over many chunks', async () => {
    const data = JSON.stringify({ messages: [{ role: 'user', content: 'word '.repeat(20_000) }] });
    const { records } = await parseAll(pieces(Buffer.from(good('long', data) + '\n' + good('next') + '\n'), 1000));
    expect(records.map((r) => r.eventId)).toEqual(['long', 'next']);
    expect(Buffer.from(records[0]!.input.body).toString()).toBe(data);
  });
});

describe('parseCaptureStream: lines past the size cap', () => {
  const long = 'x'.repeat(3000);
  const text = [good('a'), long, good('b'), long].join('\n');
  it.each([
    ['in one chunk', [text]],
    ['across 256-byte chunks', pieces(Buffer.from(text), 256)],
  ])('are counted and skipped without holding them, %s', async (_name, parts) => {
    const { records, report } = await parseAll(parts, { maxLineBytes: 1000 });
    expect(records.map((r) => [r.eventId, r.source.line])).toEqual([
      ['a', 1],
      ['b', 3],
    ]);
    const f = report.files[0]!;
    expect(f.rejectedByReason).toEqual({ line_too_long: 2 });
    expect(f.examples.line_too_long).toEqual([
      { file: 'f.jsonl', line: 2, detail: 'line of 3000 bytes exceeds the 1000-byte limit' },
      { file: 'f.jsonl', line: 4, detail: 'line of 3000 bytes exceeds the 1000-byte limit' },
    ]);
    expectBalanced(report);
  });
});

describe('duplicates', () => {
  const other = '{"messages":[{"role":"user","content":"something else"}]}';

  it.each([
    ['same eventId and body: replayed once', [good('a'), good('a')], ['a'], 1],
    ['same eventId, another body: both', [good('a'), good('a', other)], ['a', 'a'], 0],
    ['same body, another eventId: both', [good('a'), good('b')], ['a', 'b'], 0],
    [
      'same bytes once as JSON text, once base64: one request',
      [
        good('a'),
        captureLine({
          meta: { eventId: 'a' },
          input: { encoding: 'BASE64', data: Buffer.from(CHAT_BODY).toString('base64') },
        }),
      ],
      ['a'],
      1,
    ],
    ['three copies among others', [good('a'), good('b'), good('a'), good('a', other), good('a')], ['a', 'b', 'a'], 2],
  ])('%s', async (_name, lines, ids, duplicates) => {
    const { records, report } = await parseAll([lines.join('\n')]);
    expect(records.map((r) => r.eventId)).toEqual(ids);
    expect(report.files[0]!.rejectedByReason.duplicate ?? 0).toBe(duplicates);
  });

  it('names the line and the eventId of a duplicate, never the body', async () => {
    const { report } = await parseAll([[good('a'), good('b'), good('a')].join('\n')]);
    expect(report.files[0]!.examples.duplicate).toEqual([
      { file: 'f.jsonl', line: 3, detail: 'eventId a with the same body was seen before' },
    ]);
  });

  it('spans the files of a run when the filter is shared, and is off without one', async () => {
    const shared = new DuplicateFilter();
    await parseAll([good('a')], { duplicates: shared, file: 'one.jsonl' });
    const second = await parseAll([good('a') + '\n' + good('c')], { duplicates: shared, file: 'two.jsonl' });
    expect(second.records.map((r) => r.eventId)).toEqual(['c']);
    expect(second.report.files[0]!.examples.duplicate?.[0]).toMatchObject({ file: 'two.jsonl', line: 1 });
    expect(shared.size).toBe(2);
    const unfiltered = await parseAll([good('a') + '\n' + good('a')], { duplicates: null });
    expect(unfiltered.records).toHaveLength(2);
  });

  it('admit() remembers a record and answers for its copies', () => {
    const parse = (line: string) => {
      const v = parseCaptureLine(line, { file: 'f', line: 1 });
      if (!v.ok) throw new Error(v.reason);
      return v.record;
    };
    const filter = new DuplicateFilter();
    expect(
      [good('a'), good('a'), good('a', other), good('a', other)].map((l) => filter.admit(parse(l)).duplicate),
    ).toEqual([false, true, false, true]);
  });
});

describe('the ingest report', () => {
  it('keeps at most five examples per reason but counts them all', async () => {
    const { report } = await parseAll([Array.from({ length: 12 }, () => 'nope\n').join('')]);
    expect(report.files[0]!.rejectedByReason.invalid_json).toBe(12);
    expect(report.files[0]!.examples.invalid_json?.map((e) => e.line)).toEqual([1, 2, 3, 4, 5]);
  });

  it('adds files up in the totals, lists skipped files apart, and hands out copies', async () => {
    const builder = new IngestReportBuilder();
    const drain = async (records: AsyncIterable<CaptureRecord>) => {
      for await (const record of records) void record;
    };
    await drain(parseCaptureStream(chunksOf([good('a') + '\nbad\n\n']), 'one.jsonl', builder));
    await drain(parseCaptureStream(chunksOf([good('b') + '\n[]\nbad\n' + good('c')]), 'two.jsonl', builder));
    builder.skipFile('notes.txt', 'not a .jsonl file');
    const report = builder.build();
    expect(report.files.map((f) => f.file)).toEqual(['one.jsonl', 'two.jsonl']);
    expect(report.totals).toEqual({
      files: 2,
      linesRead: 7,
      blankLines: 1,
      accepted: 3,
      rejected: 3,
      contentTypeInferred: 0,
      rejectedByReason: { invalid_json: 2, not_an_object: 1 },
    });
    expect(report.skippedFiles).toEqual([{ file: 'notes.txt', reason: 'not a .jsonl file' }]);
    expectBalanced(report);
    report.files[0]!.accepted = 99;
    expect(builder.build().files[0]!.accepted).toBe(1);
  });
});
