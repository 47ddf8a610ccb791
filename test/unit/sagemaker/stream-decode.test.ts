/**
 * The decoder of what a SageMaker model streams: SSE (OpenAI chunks, TGI token events), JSON
 * lines (LMI, OpenAI chunks), plain text; PayloadParts that cut lines, events and UTF-8
 * characters anywhere; usage from the last chunk that reports it.
 */
import { describe, expect, it } from 'vitest';
import { createStreamDecoder, inspectChunk } from '../../../lambdas/adapters/sagemaker/stream-decode';

const utf8 = (s: string) => new TextEncoder().encode(s);

/** Feeds the parts; returns the content events reported per part (then the end's). */
function run(parts: (string | Uint8Array)[]) {
  const decoder = createStreamDecoder();
  const perPart = parts.map((p) => decoder.push(typeof p === 'string' ? utf8(p) : p));
  const atEnd = decoder.end();
  return { decoder, perPart, atEnd, total: perPart.reduce((a, b) => a + b, 0) + atEnd };
}

/** Every way of cutting `text` into parts of `size` bytes (the bytes, not the characters). */
function cut(text: string, size: number): Uint8Array[] {
  const bytes = utf8(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

const openaiChunk = (content: string | null, finish: string | null = null) =>
  `data: ` +
  JSON.stringify({
    id: 'c',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: content === null ? { role: 'assistant' } : { content }, finish_reason: finish }],
  }) +
  `\n\n`;
const OPENAI_STREAM =
  openaiChunk(null) +
  openaiChunk('Hél') +
  openaiChunk('lo 👋') +
  openaiChunk(' world', 'stop') +
  `data: ${JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } })}\n\n` +
  'data: [DONE]\n\n';

const tgiEvent = (text: string, last = false, special = false) =>
  JSON.stringify({
    token: { id: 42, text, logprob: -0.1, special },
    generated_text: last ? 'Hello world' : null,
    details: last ? { finish_reason: 'eos_token', generated_tokens: 3, seed: null } : null,
  });

describe('SSE, OpenAI-style chunks', () => {
  it('one content event per chunk with content; usage from the usage-only last chunk; [DONE] ends it', () => {
    const { decoder, perPart, total } = run(OPENAI_STREAM.split(/(?<=\n\n)/));
    expect(perPart).toEqual([0, 1, 1, 1, 0, 0]);
    expect(total).toBe(3);
    expect(decoder.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
    expect(decoder.finished).toBe(true);
    expect(decoder.format).toBe('sse');
    expect(decoder.error).toBeNull();
  });

  it.each([1, 2, 3, 5, 7, 13, 64])(
    'the same result whatever the parts cut (every %i bytes, through multi-byte characters)',
    (size) => {
      const { decoder, total } = run(cut(OPENAI_STREAM, size));
      expect(total).toBe(3);
      expect(decoder.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
      expect(decoder.finished).toBe(true);
      expect(decoder.malformed).toBe(0);
    },
  );

  it('an event completes in the part that brings its blank line', () => {
    const event = openaiChunk('x');
    const { perPart } = run([event.slice(0, 10), event.slice(10, -1), '\n']);
    expect(perPart).toEqual([0, 0, 1]);
  });

  it('CRLF line endings and data without the space', () => {
    const text = `data:${JSON.stringify({ choices: [{ delta: { content: 'a' } }] })}\r\n\r\ndata:[DONE]\r\n\r\n`;
    const { total, decoder } = run(cut(text, 4));
    expect(total).toBe(1);
    expect(decoder.finished).toBe(true);
  });

  it('counts reasoning, tool calls and completion text; not roles, empty strings or empty tool calls', () => {
    const events = [
      { choices: [{ delta: { reasoning_content: 'think' } }] },
      { choices: [{ delta: { reasoning: 'think' } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{' } }] } }] },
      { choices: [{ text: 'completion' }] },
      { choices: [{ delta: { role: 'assistant' } }] },
      { choices: [{ delta: { content: '' } }] },
      { choices: [{ delta: { tool_calls: [] } }] },
      { choices: [] },
    ];
    const { perPart } = run(events.map((e) => `data: ${JSON.stringify(e)}\n\n`));
    expect(perPart).toEqual([1, 1, 1, 1, 0, 0, 0, 0]);
  });

  it('the last usage wins when several chunks report one', () => {
    const usage = (c: number) =>
      `data: ${JSON.stringify({ choices: [{ delta: { content: 'x' } }], usage: { prompt_tokens: 1, completion_tokens: c } })}\n\n`;
    expect(run([usage(1), usage(2), usage(3)]).decoder.usage).toEqual({ promptTokens: 1, completionTokens: 3 });
  });

  it('a last event without its blank line still counts at the end', () => {
    const { perPart, atEnd, decoder } = run([
      `data: ${JSON.stringify({ choices: [{ delta: { content: 'x' } }], usage: { prompt_tokens: 2, completion_tokens: 1 } })}`,
    ]);
    expect(perPart).toEqual([0]);
    expect(atEnd).toBe(1);
    expect(decoder.usage).toEqual({ promptTokens: 2, completionTokens: 1 });
  });

  it('comments, event names and ids are SSE too; non-JSON data is text content', () => {
    const { perPart, decoder } = run([
      ': keep-alive\n\n',
      'event: token\nid: 1\ndata: plain words\n\n',
      'data: {not json\n\n',
    ]);
    expect(decoder.format).toBe('sse');
    expect(perPart).toEqual([0, 1, 0]);
    expect(decoder.malformed).toBe(1);
  });

  it('an error object in the stream is reported, not thrown, and stops counting', () => {
    const { decoder, total } = run([
      openaiChunk('a'),
      `data: ${JSON.stringify({ error: { message: 'CUDA out of memory', type: 'server_error' } })}\n\n`,
      openaiChunk('b'),
    ]);
    expect(decoder.error).toBe('CUDA out of memory');
    expect(total).toBe(1);
  });
});

describe('SSE, TGI token events', () => {
  const stream = `data:${tgiEvent('Hello')}\n\ndata:${tgiEvent(' world')}\n\ndata:${tgiEvent('</s>', true, true)}\n\n`;

  it('one content event per non-special token; usage from details.generated_tokens', () => {
    const { perPart, decoder } = run(stream.split(/(?<=\n\n)/));
    expect(perPart).toEqual([1, 1, 0]);
    expect(decoder.usage).toEqual({ promptTokens: null, completionTokens: 3 });
    expect(decoder.finished).toBe(true);
  });

  it.each([1, 3, 11])('split every %i bytes: same result', (size) => {
    const { total, decoder } = run(cut(stream, size));
    expect(total).toBe(2);
    expect(decoder.usage).toEqual({ promptTokens: null, completionTokens: 3 });
  });

  it('a last token that is text (not special) counts', () => {
    const { total } = run([`data:${tgiEvent('Hello')}\n\n`, `data:${tgiEvent(' world', true)}\n\n`]);
    expect(total).toBe(2);
  });

  it("TGI's error event is reported", () => {
    const { decoder } = run([
      `data:${tgiEvent('a')}\n\n`,
      `data:${JSON.stringify({ error: 'Request failed during generation: out of memory', error_type: 'generation' })}\n\n`,
    ]);
    expect(decoder.error).toBe('Request failed during generation: out of memory');
  });
});

describe('JSON lines', () => {
  const lmi = [tgiEvent('Hello'), tgiEvent(' world'), tgiEvent('!', true)].map((l) => l + '\n').join('');

  it('LMI-style token lines, cut anywhere: one content event per line, usage from the last', () => {
    for (const size of [1, 2, 9, 40, 1000]) {
      const { total, decoder } = run(cut(lmi, size));
      expect(decoder.format).toBe('json');
      expect(total).toBe(3);
      expect(decoder.usage).toEqual({ promptTokens: null, completionTokens: 3 });
      expect(decoder.finished).toBe(true);
    }
  });

  it('a line completes in the part that closes its object; the last line needs no newline', () => {
    const line = tgiEvent('x');
    const { perPart, atEnd } = run([line.slice(0, 20), line.slice(20) + '\n' + line.slice(0, 5), line.slice(5)]);
    expect(perPart).toEqual([0, 1, 1]);
    expect(atEnd).toBe(0);
  });

  it('OpenAI chunks as JSON lines, with usage in the last line', () => {
    const lines = [
      { choices: [{ delta: { content: 'a' } }] },
      { choices: [{ delta: { content: 'b' }, finish_reason: 'stop' }] },
      { choices: [], usage: { prompt_tokens: 4, completion_tokens: 2 } },
    ].map((l) => JSON.stringify(l) + '\n');
    const { total, decoder } = run(cut(lines.join(''), 6));
    expect(total).toBe(2);
    expect(decoder.usage).toEqual({ promptTokens: 4, completionTokens: 2 });
  });

  it('concatenated and pretty-printed objects; braces and quotes inside strings do not confuse it', () => {
    const text = '{"outputs": ["a } \\" {"]}{"generated_text": "b"}\n{\n  "token": {\n    "text": "c]"\n  }\n}\r\n  ';
    const { total, decoder } = run(cut(text, 3));
    expect(total).toBe(3);
    expect(decoder.malformed).toBe(0);
  });

  it('a JSON array per line is one event', () => {
    const { total } = run(['[{"generated_text": "a"}]\n', '[{"generated_text": ""}]\n']);
    expect(total).toBe(1);
  });

  it('an object the stream never closes is malformed, not content', () => {
    const { total, decoder } = run(['{"token": {"text": "a"}}\n{"token": {"te']);
    expect(total).toBe(1);
    expect(decoder.malformed).toBe(1);
  });
});

describe('format sniffing', () => {
  it('waits while the first bytes could still be an SSE field', () => {
    const { perPart, decoder } = run([
      '  \n',
      'da',
      `ta: ${JSON.stringify({ choices: [{ delta: { content: 'x' } }] })}\n\n`,
    ]);
    expect(decoder.format).toBe('sse');
    expect(perPart).toEqual([0, 0, 1]);
  });

  it('a byte-order mark and blank lines before JSON', () => {
    const { decoder, total } = run(['\uFEFF\n\n{"generated_text": "a"}']);
    expect(decoder.format).toBe('json');
    expect(total).toBe(1);
  });

  it('plain text: every part with non-blank text is one content event', () => {
    const { decoder, perPart, atEnd } = run(['Once', ' upon', ' ', 'a time']);
    expect(decoder.format).toBe('text');
    expect(perPart).toEqual([1, 1, 0, 1]);
    expect(atEnd).toBe(0);
    expect(decoder.usage).toBeNull();
  });

  it('a short stream that ends while ambiguous is text', () => {
    const { decoder, total } = run(['da']);
    expect(decoder.format).toBe('text');
    expect(total).toBe(1);
  });

  it('an empty stream reports nothing', () => {
    const { decoder, total } = run([]);
    expect(total).toBe(0);
    expect(decoder.usage).toBeNull();
    expect(decoder.finished).toBe(false);
  });
});

describe('inspectChunk', () => {
  it.each([
    [{ usage: { prompt_tokens: 3 } }, { promptTokens: 3, completionTokens: null }],
    [{ usage: { prompt_tokens: -1, completion_tokens: 'x' } }, null],
    [{ usage: null }, null],
    [{ details: { generated_tokens: 9 } }, { promptTokens: null, completionTokens: 9 }],
    [
      { details: { generated_tokens: 9 }, usage: { prompt_tokens: 1, completion_tokens: 2 } },
      { promptTokens: 1, completionTokens: 2 },
    ],
  ])('usage of %j is %j', (chunk, usage) => {
    expect(inspectChunk(chunk).usage).toEqual(usage);
  });

  it('a long error message is cut to 300 characters', () => {
    expect(inspectChunk({ error: 'e'.repeat(1000) }).error).toHaveLength(300);
  });

  it('error: null is no error', () => {
    expect(inspectChunk({ error: null, choices: [{ delta: { content: 'a' } }] })).toMatchObject({
      error: null,
      content: true,
    });
  });
});
