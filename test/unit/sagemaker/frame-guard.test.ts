/**
 * The event-stream size guard (adapters/sagemaker/frame-guard.ts): messages pass through
 * unchanged however the bytes are cut; a prelude claiming more than the limit, or bytes that
 * are not a prelude, stop the stream before the chunk holding them is passed on.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FrameGuardError, guardFrames, MAX_EVENT_STREAM_MESSAGE_BYTES } from '../../../lambdas/adapters/sagemaker/frame-guard';
import { encodePayloadPart } from '../../../lambdas/mocks/mock-sagemaker';

function prelude(totalBytes: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt32BE(totalBytes, 0);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  return out;
}

async function* chunksOf(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Runs the guard; what it passed on, how it stopped, and whether onStop ran first. */
async function guard(bytes: Buffer, size: number, limit?: number) {
  const passed: Uint8Array[] = [];
  let stopped: FrameGuardError | null = null;
  let thrown: unknown = null;
  try {
    for await (const chunk of guardFrames(chunksOf(bytes, size), (e) => (stopped = e), limit)) passed.push(chunk);
  } catch (error) {
    thrown = error;
  }
  return { passed: Buffer.concat(passed), stopped: stopped as FrameGuardError | null, thrown };
}

const STREAM = Buffer.concat([encodePayloadPart(Buffer.from('data: {"a":1}\n\n')), encodePayloadPart(Buffer.alloc(70_000, 'b')), encodePayloadPart(new Uint8Array(0))]);

describe('guardFrames', () => {
  it.each([1, 3, 7, 12, 13, 4096, 1 << 20])('passes well-formed messages through unchanged, cut every %i bytes', async (size) => {
    const { passed, stopped, thrown } = await guard(STREAM, size);
    expect(thrown).toBeNull();
    expect(stopped).toBeNull();
    expect(passed.equals(STREAM)).toBe(true);
  });

  it.each([1, 5, 12, 64])('stops at a prelude claiming 4 GiB (cut every %i bytes) without passing it on', async (size) => {
    const bytes = Buffer.concat([STREAM, prelude(0xffff_ffff), Buffer.alloc(256, 'x')]);
    const { passed, stopped, thrown } = await guard(bytes, size);
    expect(thrown).toBeInstanceOf(FrameGuardError);
    expect(stopped).toBe(thrown);
    expect(stopped).toMatchObject({ kind: 'oversized', message: `an event-stream message claims 4294967295 bytes, over the ${MAX_EVENT_STREAM_MESSAGE_BYTES}-byte limit` });
    // Only chunks before the one that completed the prelude went on.
    expect(passed.length).toBeLessThanOrEqual(STREAM.length + 11);
    expect(bytes.subarray(0, passed.length).equals(passed)).toBe(true);
  });

  it('the limit is a limit: a message of exactly that size passes, one byte more does not', async () => {
    const body = (total: number) => Buffer.concat([prelude(total), Buffer.alloc(total - 12)]);
    expect((await guard(body(64), 16, 64)).thrown).toBeNull();
    expect((await guard(body(65), 16, 64)).stopped).toMatchObject({ kind: 'oversized' });
  });

  it('bytes that are not a prelude (plain text, a broken checksum, less than the overhead) stop as malformed', async () => {
    expect((await guard(Buffer.from('plain text, not an event stream at all'), 8)).stopped).toMatchObject({ kind: 'malformed' });
    const broken = prelude(100);
    broken[11] = (broken[11] as number) ^ 1;
    expect((await guard(Buffer.concat([broken, Buffer.alloc(88)]), 100)).stopped).toMatchObject({ kind: 'malformed' });
    expect((await guard(prelude(15), 100)).stopped).toMatchObject({ kind: 'malformed' });
  });
});
