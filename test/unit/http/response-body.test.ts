/**
 * Bounded reading of response bodies: the JSON member scanner against JSON.parse on the same
 * text cut at every position, excerpts, capped reads.
 */
import { describe, expect, it } from 'vitest';
import {
  errorBodyText,
  JsonMemberScanner,
  mediaTypeOf,
  notOneJsonObject,
  OversizedValue,
  readCapped,
  responseExcerpt,
  selectAnswerMembers,
  withExcerpt,
} from '../../../lambdas/adapters/http/response-body';

function scan(text: string | Buffer, pieces = 1, keepBytes?: number) {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const scanner = new JsonMemberScanner(selectAnswerMembers, 3, keepBytes);
  const step = Math.max(1, Math.ceil(bytes.length / pieces));
  for (let i = 0; i < bytes.length; i += step) scanner.feed(bytes.subarray(i, i + step));
  return scanner.end();
}

const ANSWER = JSON.stringify({
  id: 'x',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'he said "hi" \\ and {left} [it] \u00e9\ud83d\ude00' },
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
  error: null,
});

describe('JsonMemberScanner', () => {
  it('keeps usage and error of an answer, whatever the split of its bytes', () => {
    for (const pieces of [1, 2, 3, 7, 50, ANSWER.length]) {
      const result = scan(ANSWER, pieces);
      expect(result, `pieces ${pieces}`).toMatchObject({ values: 1, firstIsObject: true, wellFormed: true });
      expect(result.skeletons[0]).toEqual({
        usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
        error: null,
      });
    }
  });

  it('splits at every byte: the same result as the whole (escapes across chunk borders)', () => {
    const text = JSON.stringify({
      a: 'x\\"y\\\\',
      usage: { prompt_tokens: 1 },
      b: ['\\', '"', '\\\\"'],
      error: { message: 'e\\"' },
    });
    const whole = scan(text);
    expect(whole.wellFormed).toBe(true);
    expect(whole.skeletons[0]).toEqual({ usage: { prompt_tokens: 1 }, error: { message: 'e\\"' } });
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const scanner = new JsonMemberScanner(selectAnswerMembers, 2);
      scanner.feed(bytes.subarray(0, cut));
      scanner.feed(bytes.subarray(cut));
      expect(scanner.end(), `cut at ${cut}`).toEqual(whole);
    }
  });

  it('tells a cut-off body, non-JSON and several values apart', () => {
    for (let cut = 0; cut < ANSWER.length; cut++)
      expect(scan(ANSWER.slice(0, cut)).wellFormed, `cut at ${cut}`).toBe(false);
    for (const bad of ['<html>gateway</html>', '{"a":1,}', '{"a" 1}', '{"a":1]', '[1,2', '{"a":"x}', '', '   ', '{}}'])
      expect(scan(bad).wellFormed, bad).toBe(false);
    expect(scan('{"usage":{"prompt_tokens":1}}\n{"usage":{"prompt_tokens":2}}\n')).toMatchObject({
      values: 2,
      wellFormed: true,
      skeletons: [{ usage: { prompt_tokens: 1 } }, { usage: { prompt_tokens: 2 } }],
    });
    expect(scan('\ufeff{"object":"error","message":"bad"}')).toMatchObject({
      values: 1,
      wellFormed: true,
      skeletons: [{ object: 'error', message: 'bad' }],
    });
    expect(scan('123')).toMatchObject({ values: 1, firstIsObject: false, wellFormed: true });
    expect(scan('[]')).toMatchObject({ values: 1, firstIsObject: false, wellFormed: true });
  });

  it('reads members of answers that are arrays (TGI), and details.generated_tokens', () => {
    const result = scan(
      '[{"generated_text":"abc","details":{"finish_reason":"length","generated_tokens":5,"tokens":[{"id":1}]}}]',
    );
    expect(result.wellFormed).toBe(true);
    expect(result.skeletons[0]).toEqual([{ details: { generated_tokens: 5 } }]);
  });

  it('a member larger than the keep limit is noted, not kept; memory stays the limit', () => {
    const big = JSON.stringify({ error: { message: 'x'.repeat(10_000) }, usage: { prompt_tokens: 3 } });
    const result = scan(big, 13, 1024);
    expect(result.wellFormed).toBe(true);
    const skeleton = result.skeletons[0] as { error: unknown; usage: unknown };
    expect(skeleton.error).toBeInstanceOf(OversizedValue);
    expect(skeleton.usage).toEqual({ prompt_tokens: 3 });
  });

  it('scans 50 MB of content without holding it', () => {
    const content = Buffer.alloc(50 * 1024 * 1024, 'a');
    const scanner = new JsonMemberScanner(selectAnswerMembers, 2);
    scanner.feed(Buffer.from('{"choices":[{"message":{"content":"'));
    for (let i = 0; i < content.length; i += 65536) scanner.feed(content.subarray(i, i + 65536));
    scanner.feed(Buffer.from('"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}'));
    expect(scanner.end()).toMatchObject({
      wellFormed: true,
      skeletons: [{ usage: { prompt_tokens: 1, completion_tokens: 2 } }],
    });
  });
});

describe('excerpts', () => {
  it('collapses blanks and control characters, cuts with an ellipsis, keeps surrogate pairs whole', () => {
    expect(responseExcerpt('  a\n\tb\u0000c  ', 160)).toBe('a b c');
    expect(responseExcerpt('x'.repeat(500), 160)).toHaveLength(160);
    expect(responseExcerpt('x'.repeat(500), 160).endsWith('…')).toBe(true);
    expect(responseExcerpt('anything', 0)).toBe('');
    const emoji = 'a'.repeat(8) + '\ud83d\ude00' + 'b';
    expect(responseExcerpt(emoji, 10)).toBe('a'.repeat(8) + '…');
  });

  it('withExcerpt: head and excerpt, or head alone saying text was left out', () => {
    expect(withExcerpt('HTTP 500', 'boom', 160)).toBe('HTTP 500: boom');
    expect(withExcerpt('HTTP 500', 'boom', 0)).toBe('HTTP 500 (response text not kept)');
    expect(withExcerpt('HTTP 500', '', 160)).toBe('HTTP 500');
  });
});

describe('what a malformed answer says of itself', () => {
  it.each([
    [undefined, 'none'],
    ['', 'none'],
    ['Application/JSON; charset=utf-8', 'application/json'],
    ['application/vnd.amazon.eventstream', 'application/vnd.amazon.eventstream'],
    ['text/html;\u001b]0;PWNED\u0007', 'text/html'],
    ['you said secret things', 'other'],
    [`text/${'x'.repeat(100)}`, 'other'],
    ['text/html\u001b[31m', 'other'],
  ])('media type of %j: %s', (contentType, expected) => expect(mediaTypeOf(contentType)).toBe(expected));

  it('notOneJsonObject: null for one object; else the shared message', () => {
    expect(notOneJsonObject(scan('{"a":1}'), 7, 'application/json')).toBeNull();
    expect(notOneJsonObject(scan('[1]'), 3, 'application/json')).toBe(
      'response is not one JSON object (3 bytes, content-type application/json)',
    );
    expect(notOneJsonObject(scan('{"a":1}{"b":2}'), 14, undefined)).toBe(
      'response is not one JSON object (14 bytes, content-type none)',
    );
  });
});

describe('readCapped', () => {
  async function* pieces(n: number, size: number) {
    for (let i = 0; i < n; i++) yield Buffer.alloc(size, i % 256);
  }

  it('keeps the first bytes, counts all', async () => {
    const body = await readCapped(pieces(100, 1000), 2500);
    expect(body.totalBytes).toBe(100_000);
    expect(body.kept.length).toBe(2500);
    expect(body.kept[2499]).toBe(2);
  });

  it('errorBodyText: the message of a whole JSON error, else the text kept', () => {
    const json = Buffer.from('{"error":{"message":"injected failure","type":"server_error"}}');
    expect(errorBodyText({ kept: json, totalBytes: json.length })).toBe('injected failure');
    expect(errorBodyText({ kept: Buffer.from('{"detail":"Not Found"}'), totalBytes: 22 })).toBe('Not Found');
    expect(errorBodyText({ kept: Buffer.from('{"error":{"mess'), totalBytes: 1e6 })).toBe('{"error":{"mess');
    expect(errorBodyText({ kept: Buffer.from('<html>bad gateway</html>'), totalBytes: 24 })).toBe(
      '<html>bad gateway</html>',
    );
  });
});
