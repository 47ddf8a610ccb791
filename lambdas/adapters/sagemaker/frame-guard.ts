/**
 * A bound on the size of one event-stream message, checked on the raw bytes before the SDK
 * sees them. The SDK's decoder (@smithy/core event-streams `getChunkedStream`) allocates each
 * message at the size its prelude claims and fills it as the bytes come: a prelude claiming
 * 4 GiB costs memory for every byte the server sends after it, per request in flight. Here
 * the prelude's total length is read as it passes, and a message claiming more than the limit
 * ends the stream at once: nothing of it is buffered.
 *
 * The limit: AWS's event-stream implementations refuse a message over 16 MiB
 * (`AWS_EVENT_STREAM_MAX_MESSAGE_SIZE` in aws-c-event-stream,
 * https://github.com/awslabs/aws-c-event-stream/blob/main/include/aws/event-stream/event_stream.h);
 * SageMaker documents no size of its own for a `PayloadPart`
 * (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_PayloadPart.html).
 * Each message starts with a prelude: its total length and its headers' length (4 bytes each,
 * big-endian, the total including the prelude and the 4-byte CRC32 that follows it)
 * (https://docs.aws.amazon.com/lexv2/latest/dg/event-stream-encoding.html). Bytes that are not
 * a prelude (a plain-text body read as one claims gigabytes) are stopped as well: the prelude's
 * checksum tells them apart before any of it is buffered.
 */
import { crc32 } from 'node:zlib';


/** The largest event-stream message let through to the SDK, bytes. */
export const MAX_EVENT_STREAM_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Prelude (total length, headers length) and its CRC32; the message's CRC32 ends it. */
const PRELUDE_BYTES = 12;
const MIN_MESSAGE_BYTES = 16;

/**
 * Why the stream was stopped: a message whose prelude claims more than the limit
 * (`oversized`), or bytes that are not a message prelude at all (`malformed`: its checksum
 * does not match, or it claims less than a message's 16 bytes of overhead).
 */
export class FrameGuardError extends Error {
  constructor(
    readonly kind: 'oversized' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'FrameGuardError';
  }
}

/** The reason to stop at this prelude, or null when it is a plausible message's. */
function preludeProblem(prelude: Buffer, limitBytes: number): FrameGuardError | null {
  if (crc32(prelude.subarray(0, 8)) !== prelude.readUInt32BE(8)) return new FrameGuardError('malformed', 'not an event stream: a message prelude fails its checksum');
  const total = prelude.readUInt32BE(0);
  if (total < MIN_MESSAGE_BYTES) return new FrameGuardError('malformed', `an event-stream message claims ${total} bytes, less than its own overhead`);
  if (total > limitBytes) return new FrameGuardError('oversized', `an event-stream message claims ${total} bytes, over the ${limitBytes}-byte limit`);
  return null;
}

/**
 * Passes `body`'s chunks through unchanged while following the message boundaries; throws a
 * FrameGuardError (after `onStop`, which should destroy the body) as soon as a prelude is
 * refused, before the chunk holding it reaches the SDK. Holds at most one prelude's 12 bytes.
 */
export async function* guardFrames(body: AsyncIterable<Uint8Array>, onStop: (error: FrameGuardError) => void, limitBytes: number = MAX_EVENT_STREAM_MESSAGE_BYTES): AsyncGenerator<Uint8Array> {
  /** Bytes of the current message still to pass after its prelude; 0: a prelude comes next. */
  let rest = 0;
  const prelude = Buffer.alloc(PRELUDE_BYTES);
  let preludeBytes = 0;
  for await (const chunk of body) {
    let i = 0;
    while (i < chunk.length) {
      if (rest > 0) {
        const take = Math.min(rest, chunk.length - i);
        rest -= take;
        i += take;
        continue;
      }
      const take = Math.min(PRELUDE_BYTES - preludeBytes, chunk.length - i);
      prelude.set(chunk.subarray(i, i + take), preludeBytes);
      preludeBytes += take;
      i += take;
      if (preludeBytes < PRELUDE_BYTES) continue;
      const problem = preludeProblem(prelude, limitBytes);
      if (problem) {
        onStop(problem);
        throw problem;
      }
      rest = prelude.readUInt32BE(0) - PRELUDE_BYTES;
      preludeBytes = 0;
    }
    yield chunk;
  }
}
