/**
 * An event stream cut into its messages, with a bound on the size of one. A message is
 * gathered at the size its prelude claims: a prelude claiming 4 GiB would cost memory for every
 * byte the server sends after it, per request in flight. Here the prelude's total length is
 * read as it passes, and a message claiming more than the limit ends the stream at once:
 * nothing of it is buffered. Bytes that are not a prelude (a plain-text body read as one claims
 * gigabytes) are stopped as well: the prelude's checksum tells them apart before any of it is
 * buffered.
 */
import { crc32 } from 'node:zlib';
import { FrameGuardError } from '../../core/errors';

/**
 * The largest event-stream message read, bytes: AWS's event-stream implementations refuse a message over 16 MiB
 * (`AWS_EVENT_STREAM_MAX_MESSAGE_SIZE` in aws-c-event-stream,
 * https://github.com/awslabs/aws-c-event-stream/blob/main/include/aws/event-stream/event_stream.h); SageMaker documents
 * no size of its own for a `PayloadPart`
 * (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_PayloadPart.html).
 */
export const MAX_EVENT_STREAM_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Prelude (total length, headers length) and its CRC32; the message's CRC32 ends it. Each length is 4 bytes,
 * big-endian, the total including the prelude and the CRC32s
 * (https://docs.aws.amazon.com/lexv2/latest/dg/event-stream-encoding.html).
 */
const PRELUDE_BYTES = 12;
const MIN_MESSAGE_BYTES = 16;

/** The reason to stop at this prelude, or null when it is a plausible message's. */
function preludeProblem(prelude: Buffer, limitBytes: number): FrameGuardError | null {
  if (crc32(prelude.subarray(0, 8)) !== prelude.readUInt32BE(8))
    return new FrameGuardError('malformed', 'not an event stream: a message prelude fails its checksum');
  const total = prelude.readUInt32BE(0);
  if (total < MIN_MESSAGE_BYTES)
    return new FrameGuardError(
      'malformed',
      `an event-stream message claims ${total} bytes, less than its own overhead`,
    );
  if (total > limitBytes)
    return new FrameGuardError(
      'oversized',
      `an event-stream message claims ${total} bytes, over the ${limitBytes}-byte limit`,
    );
  return null;
}

/**
 * Cuts a raw event stream into whole messages, however its bytes are chunked, checking each
 * prelude as soon as its 12 bytes are in: `push` throws a FrameGuardError at a refused prelude,
 * before anything of that message is buffered. A message a chunk holds whole is returned as a
 * view of the chunk (no copy); one cut across chunks is gathered in a buffer of the size its
 * prelude claims (at most the limit).
 */
export class MessageSplitter {
  private readonly prelude = Buffer.alloc(PRELUDE_BYTES);
  private preludeBytes = 0;
  /** The message being gathered across chunks, and how much of it is in. */
  private message: Buffer | null = null;
  private filled = 0;

  constructor(private readonly limitBytes: number = MAX_EVENT_STREAM_MESSAGE_BYTES) {}

  /** True when the bytes so far end inside a message. */
  get partial(): boolean {
    return this.preludeBytes > 0 || this.message !== null;
  }

  /** The messages `chunk` completes, in order. */
  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (this.message) {
        const take = Math.min(this.message.length - this.filled, chunk.length - i);
        this.message.set(chunk.subarray(i, i + take), this.filled);
        this.filled += take;
        i += take;
        if (this.filled === this.message.length) {
          out.push(this.message);
          this.message = null;
        }
        continue;
      }
      if (this.preludeBytes === 0 && chunk.length - i >= PRELUDE_BYTES) {
        // The usual case: a prelude whole in this chunk, read in place.
        const total = this.check(Buffer.from(chunk.buffer, chunk.byteOffset + i, PRELUDE_BYTES));
        if (chunk.length - i >= total) {
          out.push(chunk.subarray(i, i + total));
          i += total;
          continue;
        }
        this.start(total, chunk.subarray(i, i + PRELUDE_BYTES));
        i += PRELUDE_BYTES;
        continue;
      }
      const take = Math.min(PRELUDE_BYTES - this.preludeBytes, chunk.length - i);
      this.prelude.set(chunk.subarray(i, i + take), this.preludeBytes);
      this.preludeBytes += take;
      i += take;
      if (this.preludeBytes < PRELUDE_BYTES) continue;
      this.preludeBytes = 0;
      this.start(this.check(this.prelude), this.prelude);
    }
    return out;
  }

  /** The message's total length, once its prelude passes. */
  private check(prelude: Buffer): number {
    const problem = preludeProblem(prelude, this.limitBytes);
    if (problem) throw problem;
    return prelude.readUInt32BE(0);
  }

  private start(total: number, prelude: Uint8Array): void {
    this.message = Buffer.allocUnsafe(total);
    this.message.set(prelude, 0);
    this.filled = PRELUDE_BYTES;
  }
}
