/**
 * isJsonText must say what JSON.parse says: every document it takes, JSON.parse takes (or a
 * bad body would be replayed), and every one it refuses, JSON.parse refuses (or the parser
 * pays for a second opinion). Over the grammar's corners, seeded generated documents with
 * and without planted faults, and blind mutations of good ones; with the UTF-8 bytes given
 * (the control-byte shortcut) and without (the regex).
 */
import { describe, expect, it } from 'vitest';
import { hasControlByte, isJsonText } from '../../../lambdas/core/capture/json-check';
import { JSON_CORNERS, jsonDocument, mutate, rng } from './json-corpus';

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Verdicts that differ from JSON.parse's, as [text, JSON.parse, isJsonText without bytes, with bytes]. */
function disagreements(texts: Iterable<string>): [string, boolean, boolean, boolean][] {
  const out: [string, boolean, boolean, boolean][] = [];
  for (const text of texts) {
    const expected = parses(text);
    const plain = isJsonText(text);
    const withBytes = isJsonText(text, Buffer.from(text, 'utf8'));
    if (plain !== expected || withBytes !== expected)
      out.push([text.length > 200 ? `${text.slice(0, 200)}...` : text, expected, plain, withBytes]);
  }
  return out;
}

describe('isJsonText agrees with JSON.parse', () => {
  it('on the corners of the grammar', () => {
    expect(disagreements(JSON_CORNERS)).toEqual([]);
    // The corpus holds both verdicts (a checker that always said one thing would fail above).
    expect(JSON_CORNERS.filter(parses).length).toBeGreaterThan(20);
    expect(JSON_CORNERS.filter((t) => !parses(t)).length).toBeGreaterThan(40);
  });

  it('on 20,000 generated documents, half with planted faults', () => {
    const random = rng(11);
    const docs = Array.from({ length: 20_000 }, (_, i) => jsonDocument(random, i % 2));
    expect(disagreements(docs)).toEqual([]);
    const good = docs.filter(parses).length;
    expect(good).toBeGreaterThan(8000);
    expect(good).toBeLessThan(18_000);
  });

  it('on 40,000 blind mutations of good documents (1-3 edits each)', () => {
    const random = rng(12);
    const docs: string[] = [];
    while (docs.length < 40_000) {
      const doc = jsonDocument(random, 0);
      if (!parses(doc)) continue;
      let text = doc;
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) text = mutate(random, text);
      docs.push(text);
    }
    expect(disagreements(docs)).toEqual([]);
    expect(docs.filter(parses).length).toBeGreaterThan(1000);
  });

  it('on capture-like bodies: chat requests with escapes, pretty-printed, and every 1-character cut of one', () => {
    const random = rng(13);
    const chat = JSON.stringify({
      model: 'm',
      messages: [{ role: 'user', content: 'line 1\nline "2"\ttab \\ back é 😀 \u0001' }],
      max_tokens: 5,
      temperature: 0.7,
    });
    const pretty = JSON.stringify(JSON.parse(chat), null, 2);
    const cuts = [chat, pretty].flatMap((t) =>
      Array.from({ length: t.length }, (_, i) => t.slice(0, i) + t.slice(i + 1)),
    );
    const edits = Array.from({ length: 5000 }, () => mutate(random, random() < 0.5 ? chat : pretty));
    expect(disagreements([chat, pretty, ...cuts, ...edits])).toEqual([]);
  });
});

describe('hasControlByte', () => {
  it('finds a byte below 0x20 at any offset and alignment, and only then', () => {
    const random = rng(14);
    const backing = Buffer.alloc(4096, 0x61);
    for (let i = 0; i < backing.length; i++) backing[i] = 0x20 + Math.floor(random() * 0xe0); // 0x20-0xff: none below
    for (let start = 0; start < 12; start++) {
      for (const length of [0, 1, 3, 4, 7, 31, 32, 33, 64, 65, 127, 1000, 4000]) {
        const view = backing.subarray(start, Math.min(backing.length, start + length));
        expect(hasControlByte(view)).toBe(false);
        for (const at of [0, view.length >> 1, view.length - 1]) {
          if (at < 0 || at >= view.length) continue;
          for (const bad of [0x00, 0x0a, 0x1f]) {
            const saved = view[at] as number;
            view[at] = bad;
            expect(hasControlByte(view), `start ${start} length ${length} at ${at} byte ${bad}`).toBe(true);
            view[at] = saved;
          }
        }
      }
    }
    // Bytes just outside the view do not count.
    const outside = Buffer.from('\u0001' + 'a'.repeat(100) + '\u0001');
    expect(hasControlByte(outside.subarray(1, 101))).toBe(false);
  });

  it('agrees with a byte loop on random buffers', () => {
    const random = rng(15);
    for (let n = 0; n < 3000; n++) {
      const bytes = Buffer.alloc(Math.floor(random() * 200) + 8);
      for (let i = 0; i < bytes.length; i++)
        bytes[i] = random() < 0.004 ? Math.floor(random() * 0x20) : 0x20 + Math.floor(random() * 0xe0);
      const view = bytes.subarray(Math.floor(random() * 4));
      expect(hasControlByte(view)).toBe(view.some((b) => b < 0x20));
    }
  });
});
