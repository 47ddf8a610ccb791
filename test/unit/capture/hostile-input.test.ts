/**
 * Input that must not stop a run (issue 10): each case ends as a counted rejection with its
 * reason, or a skipped file with its reason, never a throw. And issue 11's rule: the TEXT of
 * inferenceTime decides whether it is whole-second.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { EARLIEST_PLAUSIBLE_TIME_MS, MAX_FUTURE_MS } from '../../../lambdas/core/capture/time';
import { parseCaptureLine } from '../../../lambdas/core/capture/line';
import { GZIP_SKIP_REASON, parseCaptureStream } from '../../../lambdas/core/capture/stream';
import { MAX_LINE_BYTES_ENV, maxLineBytesFrom } from '../../../lambdas/adapters/local/capture-files';
import { buildPlan } from '../../../lambdas/core/plan/plan';
import type { CaptureRecord } from '../../../lambdas/core/types';
import { captureLine, chunksOf, parseAll } from './capture-fixtures';

const SRC = { file: 'f.jsonl', line: 1 };
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const at = (time: string, id = 'e') => captureLine({ meta: { eventId: id, inferenceTime: time } });

describe('implausible_time: before SageMaker (2017-11-29) or more than a day ahead of the clock', () => {
  it.each([
    ['9999-12-31T23:59:59Z', 'implausible_time'],
    ['0000-01-01T00:00:00Z', 'implausible_time'],
    ['0050-06-01T00:00:00Z', 'implausible_time'], // year 50, not 1950
    ['0099-12-31T23:59:59Z', 'implausible_time'],
    ['1999-01-01T00:00:00Z', 'implausible_time'],
    ['2017-11-28T23:59:59.999Z', 'implausible_time'],
    ['2017-11-29T00:00:00Z', null],
    ['2026-11-24T12:00:00Z', null], // exactly a day ahead
    ['2026-11-24T12:00:00.001Z', 'implausible_time'],
    ['2026-11-25T00:00:00+14:00', null], // 10:00Z on the 24th: the offset counts
    ['2026-04-29T00:03:18Z', null],
  ])('%s', (time, reason) => {
    const verdict = parseCaptureLine(at(time), SRC, { nowMs: NOW });
    if (reason === null) expect(verdict.ok).toBe(true);
    else expect(verdict).toMatchObject({ ok: false, reason });
  });

  it('says which bound, and quotes only the time', () => {
    const past = parseCaptureLine(at('0050-06-01T00:00:00Z'), SRC, { nowMs: NOW });
    const future = parseCaptureLine(at('9999-12-31T23:59:59Z'), SRC, { nowMs: NOW });
    expect(!past.ok && past.detail).toBe(
      'inferenceTime "0050-06-01T00:00:00Z" is before 2017-11-29, when SageMaker launched',
    );
    expect(!future.ok && future.detail).toBe(
      `inferenceTime "9999-12-31T23:59:59Z" is more than a day ahead of this machine's clock (2026-11-23T12:00:00.000Z)`,
    );
    expect(EARLIEST_PLAUSIBLE_TIME_MS).toBe(Date.parse('2017-11-29T00:00:00Z'));
    expect(MAX_FUTURE_MS).toBe(86_400_000);
  });

  it('a stream counts them by line and keeps the rest: a 9999 record cannot stretch the schedule', async () => {
    const lines = [
      at('2026-04-29T00:00:00Z', 'a'),
      at('9999-01-01T00:00:00Z', 'b'),
      at('2026-04-29T00:00:01Z', 'c'),
      at('0001-01-01T00:00:00Z', 'd'),
    ];
    const builder = new IngestReportBuilder();
    const records: CaptureRecord[] = [];
    for await (const r of parseCaptureStream(chunksOf([lines.join('\n')]), 'f.jsonl', builder, undefined, {
      nowMs: NOW,
    }))
      records.push(r);
    expect(records.map((r) => r.eventId)).toEqual(['a', 'c']);
    expect(builder.build().files[0]!.examples.implausible_time?.map((e) => e.line)).toEqual([2, 4]);
    expect(
      buildPlan(records, { runId: 'r', targetKind: 'openai-chat', timeScale: 1, intraSecond: 'spread' }).durationMs,
    ).toBe(1000);
  });
});

describe('whole seconds follow the text of inferenceTime (issue 11)', () => {
  it.each([
    ['2026-04-29T00:03:18Z', false],
    ['2026-04-29T00:03:18.000Z', true],
    ['2026-04-29T00:03:18.0Z', true],
    ['2026-04-29T00:03:18.000000000Z', true],
    ['2026-04-29T02:03:18.000+02:00', true],
    ['2026-04-29T02:03:18+02:00', false],
    ['2026-04-29T00:03:18.250Z', true],
  ])('%s: exact = %s', (time, exact) => {
    const verdict = parseCaptureLine(at(time), SRC);
    expect(verdict.ok && verdict.record.hasSubSecondTime).toBe(exact);
  });

  it(
    '`...:18Z` records are spread across their second, `...:18.000Z` ones are kept, and the plan says how many ' +
      'moved and by how much',
    async () => {
      const lines = [
        at('2026-04-29T00:03:18Z', 'w1'),
        at('2026-04-29T00:03:18.000Z', 'x1'),
        at('2026-04-29T00:03:18Z', 'w2'),
        at('2026-04-29T00:03:18.000Z', 'x2'),
        at('2026-04-29T00:03:18Z', 'w3'),
        at('2026-04-29T00:03:19Z', 'w4'),
      ];
      const { records } = await parseAll([lines.join('\n')]);
      const plan = buildPlan(records, { runId: 'r', targetKind: 'openai-chat', timeScale: 1, intraSecond: 'spread' });
      const offsets = Object.fromEntries(plan.requests.map((r) => [r.eventId, r.offsetMs]));
      expect(offsets).toEqual({ w1: 0, x1: 0, x2: 0, w2: 1000 / 3, w3: 2000 / 3, w4: 1000 });
      expect(plan.timing).toEqual({
        intraSecond: 'spread',
        wholeSecondRecords: 4,
        exactTimeRecords: 2,
        spreadRecords: 2,
        maxSpreadMs: 2000 / 3,
      });
      const burst = buildPlan(records, { runId: 'r', targetKind: 'openai-chat', timeScale: 1, intraSecond: 'burst' });
      expect(burst.timing).toEqual({
        intraSecond: 'burst',
        wholeSecondRecords: 4,
        exactTimeRecords: 2,
        spreadRecords: 0,
        maxSpreadMs: 0,
      });
    },
  );
});

describe('byte-order marks', () => {
  it('are skipped by parseCaptureLine too (every path: the stream, read-back, direct calls)', () => {
    expect(parseCaptureLine('\uFEFF' + at('2026-04-29T00:03:18Z'), SRC).ok).toBe(true);
    expect(parseCaptureLine('\uFEFF\uFEFF' + at('2026-04-29T00:03:18Z'), SRC)).toMatchObject({
      ok: false,
      reason: 'invalid_json',
    });
  });

  it('a file of only a mark is one blank line; a mark split across chunks is still found', async () => {
    expect((await parseAll([Buffer.from([0xef, 0xbb, 0xbf])])).report.files[0]).toMatchObject({
      bytesRead: 3,
      linesRead: 1,
      blankLines: 1,
      accepted: 0,
      rejected: 0,
    });
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(at('2026-04-29T00:03:18Z') + '\n')]);
    for (const cut of [1, 2, 3]) {
      const { records, report } = await parseAll([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(records, `cut at ${cut}`).toHaveLength(1);
      expect(report.files[0]!.rejected).toBe(0);
    }
  });
});

describe('gzip files (magic bytes 1f 8b) are skipped with their reason, not parsed', () => {
  const gz = gzipSync(Buffer.from(at('2026-04-29T00:03:18Z') + '\n'));
  it.each([
    ['in one chunk', [gz]],
    ['the first byte alone', [gz.subarray(0, 1), gz.subarray(1)]],
    ['byte by byte', Array.from(gz, (b) => Buffer.from([b]))],
  ])('%s', async (_name, parts) => {
    const { records, report } = await parseAll(parts);
    expect(records).toEqual([]);
    expect(report.files).toEqual([]);
    expect(report.skippedFiles).toEqual([{ file: 'f.jsonl', reason: GZIP_SKIP_REASON }]);
    expect(report.totals.files).toBe(0);
  });

  it('a file that only starts with 1f is read as usual, a single 1f byte included', async () => {
    expect((await parseAll([Buffer.from([0x1f, 0x41, 0x0a])])).report.files[0]).toMatchObject({
      linesRead: 1,
      rejectedByReason: { invalid_json: 1 },
    });
    expect((await parseAll([Buffer.from([0x1f])])).report.files[0]).toMatchObject({
      bytesRead: 1,
      linesRead: 1,
      rejectedByReason: { truncated_line: 1 },
    });
  });

  it('an empty file is a file of no lines', async () => {
    const { report } = await parseAll([]);
    expect(report.files[0]).toMatchObject({ bytesRead: 0, linesRead: 0 });
    expect(report.skippedFiles).toEqual([]);
  });
});

describe('deeply nested JSON', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  it('in the line itself (100,000 levels, outside the fields read) is parsed, not a stack overflow', () => {
    const line = at('2026-04-29T00:03:18Z').replace(
      '"eventVersion":"0"',
      `"eventVersion":"0","extra":${deep(100_000)}`,
    );
    expect(parseCaptureLine(line, SRC).ok).toBe(true);
  });

  it('in a field the shape check reads is a missing_field, explained without walking it', () => {
    const line = at('2026-04-29T00:03:18Z').replace(/"data":"(?:[^"\\]|\\.)*"/, `"data":${deep(100_000)}`);
    expect(parseCaptureLine(line, SRC)).toMatchObject({ ok: false, reason: 'missing_field' });
  });

  it('in the body (100,000 levels) is accepted, and its JSON check does not overflow either', () => {
    const body = `{"messages":[{"role":"user","content":"x"}],"deep":${deep(100_000)}}`;
    expect(parseCaptureLine(captureLine({ input: { data: body } }), SRC).ok).toBe(true);
    expect(parseCaptureLine(captureLine({ input: { data: body.slice(0, -1) } }), SRC)).toMatchObject({
      ok: false,
      reason: 'bad_inner_json',
    });
  });
});

describe('lines past the cap, whatever their size', () => {
  it('a 40 MiB line under a 1 MiB cap is counted while streaming: never held, the next line still read', async () => {
    const chunk = Buffer.alloc(1 << 20, 0x61);
    async function* source(): AsyncGenerator<Uint8Array> {
      yield Buffer.from(at('2026-04-29T00:03:18Z', 'before') + '\n{"x":"');
      for (let i = 0; i < 40; i++) yield chunk;
      yield Buffer.from('"}\n' + at('2026-04-29T00:03:18Z', 'after') + '\n{"unterminated":"');
      for (let i = 0; i < 3; i++) yield chunk;
    }
    const builder = new IngestReportBuilder();
    const ids: string[] = [];
    for await (const r of parseCaptureStream(source(), 'big.jsonl', builder, undefined, { maxLineBytes: 1 << 20 }))
      ids.push(r.eventId);
    expect(ids).toEqual(['before', 'after']);
    const f = builder.build().files[0]!;
    expect(f).toMatchObject({ linesRead: 4, accepted: 2, rejectedByReason: { line_too_long: 2 } });
    expect(f.examples.line_too_long!.map((e) => e.line)).toEqual([2, 4]);
    expect(f.examples.line_too_long![0]!.detail).toBe(
      `line of ${40 * (1 << 20) + 8} bytes exceeds the ${1 << 20}-byte limit`,
    );
  });

  it('the cap comes from CAPTURE_REPLAY_MAX_LINE_BYTES in the CLI, within its bounds', () => {
    expect(maxLineBytesFrom({})).toBe(128 * 1024 * 1024);
    expect(maxLineBytesFrom({ [MAX_LINE_BYTES_ENV]: '65536' })).toBe(65536);
    for (const bad of ['10', '1e12', 'lots', '65536.5', String(256 * 1024 * 1024)]) {
      expect(maxLineBytesFrom({ [MAX_LINE_BYTES_ENV]: bad })).toMatch(
        /^CAPTURE_REPLAY_MAX_LINE_BYTES must be a whole number of bytes from 1024 to 134217728/,
      );
    }
  });
});
