/**
 * The Wasm SIMD control-byte scan against the plain answer (`some(b < 0x20)`) and the JS word
 * loop: every byte value at every place relative to the 16-byte blocks and the 64 KiB page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSimdControlCheck } from '../../../lambdas/core/capture/control-bytes';
import { hasControlByte, hasControlByteWords } from '../../../lambdas/core/capture/json-check';
import { rng } from './json-corpus';

const PAGE = 64 * 1024;
const naive = (bytes: Uint8Array) => bytes.some((b) => b < 0x20);

/** Printable filler (0x20-0x7e) with some bytes >= 0x80, which an unsigned compare must pass. */
function filler(length: number, random: () => number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++)
    bytes[i] = random() < 0.2 ? 0x80 + Math.floor(random() * 128) : 0x20 + Math.floor(random() * 95);
  return bytes;
}

describe('createSimdControlCheck', () => {
  const simd = createSimdControlCheck();

  it('runs on this Node (so the tests below test the Wasm path, not a fallback)', () => {
    expect(simd).not.toBeNull();
  });

  it('finds each byte below 0x20 at every place of short buffers, and passes 0x20 and up', () => {
    const check = simd as (bytes: Uint8Array) => boolean;
    const random = rng(7);
    // Views at offsets 0-3 of a larger buffer, lengths across several 16-byte blocks.
    const backing = filler(200, random);
    // The cases it gets wrong, named (one expect at the end: 130,000 would cost more than the scans).
    const wrong: string[] = [];
    for (let start = 0; start < 4; start++) {
      for (let length = 0; length <= 80; length++) {
        const view = backing.subarray(start, start + length);
        if (check(view)) wrong.push(`start ${start} length ${length}: clean view seen as dirty`);
        for (let at = 0; at < length; at++) {
          const saved = view[at] as number;
          for (const byte of [0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x20, 0x7f, 0x80, 0x9f, 0xff]) {
            view[at] = byte;
            if (check(view) !== byte < 0x20) wrong.push(`start ${start} length ${length} at ${at} byte ${byte}`);
          }
          view[at] = saved;
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('does not see bytes outside the view', () => {
    const check = simd as (bytes: Uint8Array) => boolean;
    const outside = Buffer.alloc(300, 0x41);
    outside[0] = 0x0a;
    outside[299] = 0x00;
    expect(check(outside.subarray(1, 299))).toBe(false);
    expect(check(outside.subarray(0, 299))).toBe(true);
    expect(check(outside.subarray(1, 300))).toBe(true);
  });

  it('reads buffers larger than its 64 KiB page a page at a time, to the last byte', () => {
    const check = simd as (bytes: Uint8Array) => boolean;
    const big = filler(3 * PAGE + 5, rng(11));
    expect(check(big)).toBe(false);
    for (const at of [0, 15, 16, PAGE - 1, PAGE, PAGE + 1, 2 * PAGE + 7, 3 * PAGE, 3 * PAGE + 4]) {
      const saved = big[at] as number;
      big[at] = 0x01;
      expect(check(big), `at ${at}`).toBe(true);
      big[at] = saved;
    }
    // A clean page after a dirty one: the scratch page is overwritten, not carried over.
    const clean = filler(PAGE + 33, rng(12));
    big[10] = 0x00;
    expect(check(big)).toBe(true);
    expect(check(clean)).toBe(false);
  });

  it('agrees with the JS word loop and the plain answer on random buffers', () => {
    const check = simd as (bytes: Uint8Array) => boolean;
    const random = rng(13);
    const wrong: string[] = [];
    for (let n = 0; n < 3000; n++) {
      const length = Math.floor(random() ** 2 * 5000);
      const bytes = filler(length + 8, random).subarray(Math.floor(random() * 8), length);
      if (random() < 0.5 && bytes.length > 0) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 0x20);
      const expected = naive(bytes);
      const answers = { simd: check(bytes), words: hasControlByteWords(bytes), hasControlByte: hasControlByte(bytes) };
      for (const [name, answer] of Object.entries(answers))
        if (answer !== expected) wrong.push(`${name} on buffer ${n} (length ${bytes.length}): ${answer}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('createSimdControlCheck without WebAssembly', () => {
  const global = globalThis as { WebAssembly?: unknown };
  const saved = global.WebAssembly;
  afterEach(() => {
    global.WebAssembly = saved;
  });

  it('gives null (json-check.ts then uses the JS loop)', () => {
    // As under `node --jitless`, where the global is absent.
    global.WebAssembly = undefined;
    expect(createSimdControlCheck()).toBeNull();
  });
});
