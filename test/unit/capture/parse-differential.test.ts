/**
 * Issue 11 part 4 made the parser faster (the body's JSON is checked, not parsed a second
 * time). Every accept/reject decision and every reported reason must stay what it was: the
 * parser as it was before (commit 5cd21d9, copied into ./oracle/parse-v1.ts) and the parser
 * now run over the same seeded corpus (good lines; bodies good and broken, JSON and base64;
 * every kind of bad line the hostile-input tests use; blind mutations of whole lines; BOMs,
 * CRLF, blanks, duplicates; cut into chunks at random places) and must yield the same records
 * and the same report, detail strings included.
 */
import { describe, expect, it } from 'vitest';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { parseCaptureLine } from '../../../lambdas/core/capture/line';
import { parseCaptureStream } from '../../../lambdas/core/capture/stream';
import type { CaptureRecord, IngestReport } from '../../../lambdas/core/types';
import { CHAT_BODY, OUTPUT_BODY, captureLine, view } from './capture-fixtures';
import { JSON_CORNERS, jsonDocument, mutate, rng, type Random } from './json-corpus';
import * as oracle from './oracle/parse-v1';

/** The parser now, its parts from their modules, to stand beside the oracle's. */
const current = { parseCaptureStream, IngestReportBuilder, DuplicateFilter, parseCaptureLine };

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

type Parser = Pick<typeof current, 'parseCaptureStream' | 'IngestReportBuilder' | 'DuplicateFilter'>;

async function run(
  parser: Parser,
  chunks: Buffer[],
  file: string,
): Promise<{ records: ReturnType<typeof view>[]; report: IngestReport }> {
  const builder = new parser.IngestReportBuilder();
  const records: CaptureRecord[] = [];
  async function* source() {
    // Fresh copies: a parser may not rely on a chunk staying as it was.
    for (const c of chunks) yield Buffer.from(c);
  }
  for await (const r of parser.parseCaptureStream(source(), file, builder, new parser.DuplicateFilter(), {
    nowMs: NOW,
  }))
    records.push(r);
  return { records: records.map(view), report: builder.build() };
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** A body text: mostly a good chat request, else a generated document, good or broken. */
function body(random: Random): string {
  const r = random();
  if (r < 0.3) return CHAT_BODY;
  if (r < 0.4) return pick(random, JSON_CORNERS);
  if (r < 0.5) return JSON.stringify(JSON.parse(CHAT_BODY), null, 2);
  if (r < 0.6) return mutate(random, CHAT_BODY);
  return jsonDocument(random, random() < 0.5 ? 0 : 1);
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/vnd.api+json',
  'text/csv',
  'application/jsonlines',
  null,
  undefined,
];
const TIMES = [
  '2026-04-29T00:03:18Z',
  '2026-04-29T00:03:18.250Z',
  '2026-04-29T02:03:18+02:00',
  '2026-02-30T00:00:00Z',
  'yesterday',
  '9999-12-31T23:59:59Z',
  '1999-01-01T00:00:00Z',
  '',
];

function outputField(random: Random): unknown {
  switch (Math.floor(random() * 7)) {
    case 0:
      return null; // no endpointOutput
    case 1:
      return undefined; // the fixture's answer with usage
    case 2:
      return {
        observedContentType: 'application/json',
        encoding: 'BASE64',
        data: Buffer.from(OUTPUT_BODY).toString('base64'),
      };
    case 3:
      return { observedContentType: 'application/json', encoding: 'JSON', data: '{"result":[1,2,3]}' };
    case 4:
      return { observedContentType: 'text/csv', encoding: 'CSV', data: '1,2,3' };
    case 5:
      return { observedContentType: 'application/json', encoding: 'BASE64', data: 'not*base64' };
    default:
      return pick(random, ['x', 42, [], { data: 7 }, { data: '{"usage":{"prompt_tokens":-1}}' }]);
  }
}

/** One line of the corpus (without its newline). */
function corpusLine(random: Random, id: number): string {
  const r = random();
  if (r < 0.05)
    return pick(random, [
      '',
      '   ',
      '\t',
      'not json',
      '[1]',
      'null',
      '"s"',
      '{"captureData":{}}',
      '{}',
      '\ufeff' + captureLine(),
    ]);
  const text = body(random);
  const base64 = random() < 0.3;
  const encoding =
    random() < 0.05
      ? pick(random, ['UTF-7', 'json', 'base64', null, 7])
      : base64
        ? 'BASE64'
        : pick(random, ['JSON', 'JSON', 'CSV']);
  const data =
    random() < 0.03 ? pick(random, ['***', 'YQ', 'YW-j', 12]) : base64 ? Buffer.from(text).toString('base64') : text;
  const contentType = pick(random, CONTENT_TYPES);
  const eventId = random() < 0.03 ? pick(random, ['', 5, null]) : `e-${random() < 0.1 ? 1 : id}`; // some repeat: duplicates
  const line = captureLine({
    input: { data, encoding, observedContentType: contentType },
    output: outputField(random),
    meta: {
      eventId,
      inferenceTime: pick(random, TIMES),
      ...(random() < 0.2 ? { inferenceId: random() < 0.5 ? 'caller' : 3 } : {}),
    },
  });
  return random() < 0.1 ? mutate(random, line) : line;
}

/** The corpus as one file's bytes, with a BOM, CRLF and a last line without newline at times. */
function corpusFile(random: Random, lines: number): Buffer {
  const eol = random() < 0.3 ? '\r\n' : '\n';
  let text = random() < 0.2 ? '\ufeff' : '';
  for (let i = 0; i < lines; i++) text += corpusLine(random, i) + (i < lines - 1 || random() < 0.5 ? eol : '');
  return Buffer.from(text, 'utf8');
}

/** Cuts bytes into chunks at random places (inside characters and lines too). */
function chunked(random: Random, bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const n = 1 + Math.floor(random() * (random() < 0.2 ? 16 : 4096));
    out.push(bytes.subarray(at, at + n));
    at += n;
  }
  return out;
}

describe('the parser decides and reports exactly as before (oracle: the parser of commit 5cd21d9)', () => {
  it('over 40 seeded files of 300 mixed lines, cut into random chunks', async () => {
    const random = rng(2611);
    const seen = new Set<string>();
    let accepted = 0;
    for (let f = 0; f < 40; f++) {
      const chunks = chunked(random, corpusFile(random, 300));
      const file = `corpus-${f}.jsonl`;
      const [before, after] = [await run(oracle as unknown as Parser, chunks, file), await run(current, chunks, file)];
      expect(after.report).toEqual(before.report);
      expect(after.records).toEqual(before.records);
      for (const reason of Object.keys(before.report.totals.rejectedByReason)) seen.add(reason);
      accepted += before.report.totals.accepted;
    }
    // The corpus reaches every reason a line can get here (line_too_long is the stream's, below).
    expect([...seen].sort()).toEqual([
      'bad_base64',
      'bad_encoding',
      'bad_inference_time',
      'bad_inner_json',
      'duplicate',
      'implausible_time',
      'invalid_json',
      'missing_field',
      'not_an_object',
      'truncated_line',
    ]);
    expect(accepted).toBeGreaterThan(1000);
  });

  it('on the line cap, gzip, an empty file and a lone byte', async () => {
    const random = rng(2612);
    const cases: Buffer[][] = [
      [Buffer.from(`${captureLine()}\n${'x'.repeat(3000)}\n${captureLine({ meta: { eventId: 'e-2' } })}`)],
      [Buffer.from([0x1f, 0x8b, 0x08, 0x00])],
      [Buffer.from([0x1f]), Buffer.from([0x8b])],
      [],
      [Buffer.from('{')],
      chunked(random, Buffer.from(`${captureLine()}\n`.repeat(20))),
    ];
    for (const chunks of cases) {
      for (const maxLineBytes of [undefined, 2048]) {
        const options = { nowMs: NOW, ...(maxLineBytes ? { maxLineBytes } : {}) };
        const go = async (parser: Parser) => {
          const builder = new parser.IngestReportBuilder();
          const records: CaptureRecord[] = [];
          async function* source() {
            for (const c of chunks) yield Buffer.from(c);
          }
          for await (const r of parser.parseCaptureStream(source(), 'f.jsonl', builder, undefined, options))
            records.push(r);
          return { records: records.map(view), report: builder.build() };
        };
        expect(await go(current)).toEqual(await go(oracle as unknown as Parser));
      }
    }
  });

  it('parseCaptureLine gives the same verdict line by line, details included', () => {
    const random = rng(2613);
    for (let i = 0; i < 5000; i++) {
      const line = corpusLine(random, i);
      const source = { file: 'f.jsonl', line: i + 1 };
      const before = oracle.parseCaptureLine(line, source, { nowMs: NOW });
      const after = current.parseCaptureLine(line, source, { nowMs: NOW });
      const comparable = (v: typeof after) => (v.ok ? { ...v, record: view(v.record) } : v);
      expect(comparable(after)).toEqual(comparable(before as typeof after));
    }
  });
});
