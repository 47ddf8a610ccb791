/**
 * The second round of issue 11 part 4 (bench/RESULTS.md): the cases each speed-up singles out,
 * held to the parser before it (./oracle/parse-v1.ts) record for record and report for report.
 * - Bodies go into the shared slab by their exact UTF-8 size above a third of the slab's body
 *   limit in characters: sizes on both sides of each threshold, ASCII, two- and four-byte text.
 * - `"usage"` is searched forwards in the answer's last 512 characters, the whole answer only
 *   when it is not there: usage just inside and outside that tail, twice, and only early.
 * - Control bytes are found by Wasm SIMD: a body with one raw control character at places
 *   around 16-byte blocks and the 64 KiB scratch page must still be `bad_inner_json`.
 */
import { describe, expect, it } from 'vitest';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { parseCaptureStream } from '../../../lambdas/core/capture/stream';
import type { CaptureRecord, IngestReport } from '../../../lambdas/core/types';
import { captureLine, chunksOf, view } from './capture-fixtures';
import * as oracle from './oracle/parse-v1';

/** The parser now, its parts from their modules, to stand beside the oracle's. */
const current = { parseCaptureStream, IngestReportBuilder, DuplicateFilter };

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
type Parser = Pick<typeof current, 'parseCaptureStream' | 'IngestReportBuilder' | 'DuplicateFilter'>;

async function run(
  parser: Parser,
  lines: string[],
): Promise<{ records: ReturnType<typeof view>[]; report: IngestReport }> {
  const builder = new parser.IngestReportBuilder();
  const records: CaptureRecord[] = [];
  for await (const r of parser.parseCaptureStream(
    chunksOf([lines.join('\n') + '\n']),
    'f.jsonl',
    builder,
    new parser.DuplicateFilter(),
    { nowMs: NOW },
  ))
    records.push(r);
  return { records: records.map(view), report: builder.build() };
}

async function same(lines: string[]): Promise<{ records: ReturnType<typeof view>[]; report: IngestReport }> {
  const now = await run(current, lines);
  expect(now).toEqual(await run(oracle as unknown as Parser, lines));
  return now;
}

/** A chat body of exactly `chars` UTF-16 units, its filler made of `unit`. */
function bodyOf(chars: number, unit: string): string {
  const shell = '{"messages":[{"role":"user","content":""}]}';
  const fill = unit.repeat(Math.ceil((chars - shell.length) / unit.length)).slice(0, chars - shell.length);
  // Never cut a surrogate pair in half (that would be a lone surrogate: valid, but not this test).
  const text = /[\uD800-\uDBFF]$/.test(fill) ? fill.slice(0, -1) + 'x' : fill;
  return `{"messages":[{"role":"user","content":"${text}"}]}`;
}

describe('bodies around the slab thresholds', () => {
  it('keeps every body byte for byte, the same as the parser before', async () => {
    const lines: string[] = [];
    let id = 0;
    // 32 KiB / 3 = 10,922 characters (the old bound on every body), 32 KiB bytes (the slab's body limit).
    for (const chars of [10_921, 10_922, 10_923, 11_000, 16_384, 32_767, 32_768, 32_769, 40_000]) {
      for (const unit of ['a', 'é', '東', '😀']) {
        const data = bodyOf(chars, unit);
        lines.push(captureLine({ input: { data }, meta: { eventId: `e-${id++}` } }));
        lines.push(
          captureLine({
            input: { data: Buffer.from(data).toString('base64'), encoding: 'BASE64' },
            meta: { eventId: `e-${id++}` },
          }),
        );
      }
    }
    const { records, report } = await same(lines);
    expect(report.totals.accepted).toBe(lines.length);
    for (const [i, r] of records.entries()) {
      const input = (
        JSON.parse(lines[i] as string) as { captureData: { endpointInput: { data: string; encoding: string } } }
      ).captureData.endpointInput;
      expect(r.input.body).toBe(
        input.encoding === 'JSON' ? input.data : Buffer.from(input.data, 'base64').toString('utf8'),
      );
    }
  });
});

describe('usage found from the end of the answer', () => {
  const usage = (prompt: number) => `"usage":{"prompt_tokens":${prompt},"completion_tokens":2}`;
  const answer = (before: string, after: number, second = '') =>
    `{"id":"x",${before ? `${before},` : ''}"choices":[{"message":{"content":"${'w'.repeat(after)}"}}]${second ? `,${second}` : ''}}`;
  const out = (data: string) => ({ observedContentType: 'application/json', mode: 'OUTPUT', data, encoding: 'JSON' });

  it.each([
    ['last, in the tail', answer('', 10, usage(1)), 1],
    // `"usage"` starts 89 characters + the content's length before the end.
    ['first, 512 characters before the end (the first place in the tail)', answer(usage(3), 512 - 89), 3],
    ['first, 513 characters before the end (just outside the tail)', answer(usage(4), 513 - 89), 4],
    ['first, far before the end', answer(usage(5), 20_000), 5],
    ['twice, both in the tail (the last counts)', answer(usage(6), 30, usage(7)), 7],
    ['twice, one far before, one in the tail', answer(usage(8), 5000, usage(9)), 9],
  ])('%s', async (_name, data, prompt) => {
    if (prompt === 3 || prompt === 4) expect(data.length - data.indexOf('"usage"')).toBe(prompt === 3 ? 512 : 513);
    const { records } = await same([captureLine({ output: out(data) })]);
    expect(records[0]?.output?.usage).toEqual({ promptTokens: prompt, completionTokens: 2 });
  });

  it('none at all: no usage, and the answer is digested', async () => {
    const { records } = await same([captureLine({ output: out(answer('', 3000)) })]);
    expect(records[0]?.output?.usage).toBeNull();
    expect(records[0]?.output?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('raw control characters in bodies (the Wasm scan)', () => {
  it('rejects each as bad_inner_json wherever it sits, like the parser before', async () => {
    const good = bodyOf(70_000, 'abcdefghij');
    const lines: string[] = [];
    let id = 0;
    // Inside the content string: around block edges of the first bytes, the 64 KiB page edge and the end.
    const at = good.indexOf('abc');
    for (const offset of [0, 1, 15, 16, 17, 31, 65_535 - at, 65_536 - at, 65_537 - at, good.length - at - 10]) {
      for (const control of ['\u0000', '\n', '\u001f']) {
        const data = good.slice(0, at + offset) + control + good.slice(at + offset + 1);
        lines.push(captureLine({ input: { data }, meta: { eventId: `c-${id++}` } }));
        lines.push(
          captureLine({
            input: { data: Buffer.from(data).toString('base64'), encoding: 'BASE64' },
            meta: { eventId: `c-${id++}` },
          }),
        );
      }
    }
    // The same body with no control character, and with legal whitespace between tokens.
    lines.push(captureLine({ input: { data: good }, meta: { eventId: 'good' } }));
    lines.push(captureLine({ input: { data: good.replace('{"role"', '{\n\t"role"') }, meta: { eventId: 'spaced' } }));
    const { report } = await same(lines);
    expect(report.totals.rejectedByReason).toEqual({ bad_inner_json: lines.length - 2 });
    expect(report.totals.accepted).toBe(2);
  });
});
