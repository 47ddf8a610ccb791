/**
 * The event-stream splitter and its size guard (adapters/sagemaker/frame-guard.ts): the
 * messages come out whole and unchanged however the bytes are cut; a prelude claiming more
 * than the limit, or bytes that are not a prelude, stop the stream as soon as the prelude is in,
 * before anything of its message is buffered.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_EVENT_STREAM_MESSAGE_BYTES, MessageSplitter } from '../../../lambdas/adapters/sagemaker/frame-guard';
import { FrameGuardError } from '../../../lambdas/core/errors';
import { encodePayloadPart } from '../../../lambdas/mocks/mock-sagemaker';

function prelude(totalBytes: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt32BE(totalBytes, 0);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  return out;
}

/**
 * Runs the splitter over `bytes` cut every `size` bytes: the messages, how it stopped, and how many bytes it had been
 * given when it did.
 */
function split(bytes: Buffer, size: number, limit?: number) {
  const splitter = new MessageSplitter(limit);
  const messages: Buffer[] = [];
  let stopped: FrameGuardError | null = null;
  let given = 0;
  try {
    for (let i = 0; i < bytes.length; i += size) {
      const chunk = bytes.subarray(i, i + size);
      given += chunk.length;
      for (const m of splitter.push(chunk)) messages.push(Buffer.from(m));
    }
  } catch (error) {
    if (!(error instanceof FrameGuardError)) throw error;
    stopped = error;
  }
  return { messages, stopped, given, partial: splitter.partial };
}

const MESSAGES = [
  encodePayloadPart(Buffer.from('data: {"a":1}\n\n')),
  encodePayloadPart(Buffer.alloc(70_000, 'b')),
  encodePayloadPart(new Uint8Array(0)),
].map((m) => Buffer.from(m));
const STREAM = Buffer.concat(MESSAGES);

describe('MessageSplitter', () => {
  it.each([1, 3, 7, 12, 13, 4096, 1 << 20])('gives each message whole and unchanged, cut every %i bytes', (size) => {
    const { messages, stopped, partial } = split(STREAM, size);
    expect(stopped).toBeNull();
    expect(partial).toBe(false);
    expect(messages).toHaveLength(MESSAGES.length);
    messages.forEach((m, i) => expect(m.equals(MESSAGES[i]!)).toBe(true));
  });

  it('says when the bytes end inside a message', () => {
    expect(split(STREAM.subarray(0, STREAM.length - 1), 100).partial).toBe(true);
    expect(split(STREAM.subarray(0, 5), 100).partial).toBe(true);
  });

  it.each([1, 5, 12, 64])(
    'stops at a prelude claiming 4 GiB (cut every %i bytes) as soon as the prelude is in',
    (size) => {
      const bytes = Buffer.concat([STREAM, prelude(0xffff_ffff), Buffer.alloc(256, 'x')]);
      const { messages, stopped, given } = split(bytes, size);
      expect(stopped).toMatchObject({
        kind: 'oversized',
        message: `an event-stream message claims 4294967295 bytes, over the ${MAX_EVENT_STREAM_MESSAGE_BYTES}-byte limit`,
      });
      expect(messages).toHaveLength(MESSAGES.length);
      // Stopped by the chunk that completed the prelude: no later chunk was taken.
      expect(given).toBeLessThan(STREAM.length + 12 + size);
    },
  );

  it('the limit is a limit: a message of exactly that size passes, one byte more does not', () => {
    const body = (total: number) => Buffer.concat([prelude(total), Buffer.alloc(total - 12)]);
    expect(split(body(64), 16, 64)).toMatchObject({ stopped: null, partial: false });
    expect(split(body(64), 16, 64).messages).toHaveLength(1);
    expect(split(body(65), 16, 64).stopped).toMatchObject({ kind: 'oversized' });
  });

  it('bytes that are not a prelude (plain text, a broken checksum, less than the overhead) stop as malformed', () => {
    expect(split(Buffer.from('plain text, not an event stream at all'), 8).stopped).toMatchObject({
      kind: 'malformed',
    });
    const broken = prelude(100);
    broken[11] = (broken[11] as number) ^ 1;
    expect(split(Buffer.concat([broken, Buffer.alloc(88)]), 100).stopped).toMatchObject({ kind: 'malformed' });
    expect(split(prelude(15), 100).stopped).toMatchObject({ kind: 'malformed' });
  });
});
