/**
 * InvokeEndpointWithResponseStream's answer read from the raw HTTP body, not through the SDK's
 * event-stream deserializer: a streamed answer is a message per token, and the SDK hands each
 * one through several async generators (and our loop a promise race per event), about 120 us
 * of CPU per token where a fire invocation receives thousands a second. Here each network read
 * is handled in the body's 'data' event: cut into messages (frame-guard.ts, its size bound
 * included), each decoded with the SDK's own codec (@smithy/eventstream-codec, checksums
 * checked), and dispatched as the SDK's unmarshaller does
 * (@smithy/eventstream-serde-universal): an `event` of type `PayloadPart` is the model's bytes,
 * other modeled events (`ModelStreamError`, `InternalStreamFailure`) end the stream with that
 * error, unknown events are skipped; an `exception` is the error its `:exception-type` names
 * (a modeled one's `Message` and `ErrorCode`, else its body as the message); an `error` is the
 * error named by `:error-code` with `:error-message`; any other message type is not an event
 * stream. The messages of one read share its arrival time.
 */
import { createHash } from 'node:crypto';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import type { Message } from '@smithy/types';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { Clock } from '../../ports';
import type { ErrorDetails, TokenUsage } from '../../core/types';
import { eachChunk, RESPONSE_LIMITS, responseExcerpt, type ChunkSource } from '../http/response-body';
import { FrameGuardError } from '../../core/errors';
import { MessageSplitter } from './frame-guard';
import { NOT_KEPT, sageMakerErrorDetails } from './sagemaker-errors';
import { createStreamDecoder } from './stream-decode';
import type { ChunkTimes } from '../chunk-times';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const MODELED_STREAM_ERRORS = new Set(['ModelStreamError', 'InternalStreamFailure']);

/** What a streamed answer's record needs, filled in as the stream is read. */
export interface StreamedAnswer {
  chunkTimes: ChunkTimes;
  usage: TokenUsage | null;
  outputSha256: string | null;
}

/**
 * How the stream ended: read to its end or to an error it carried (`error`, null for a complete
 * answer), or not (`thrown`: the transport, the decoding or a refused prelude, for the caller to
 * name).
 */
export type StreamEnd =
  | { ok: true; endNs: bigint; error: ErrorDetails | null }
  | { ok: false; thrown: unknown; refused: FrameGuardError | null };

export interface StreamReading {
  clock: Clock;
  excerptChars: number;
  /** Aborted by the request's deadline or the caller: the body is destroyed. */
  signal: AbortSignal;
}

/** The model's in-stream error message as an excerpt, or a note that it is not kept. */
export function streamErrorMessage(message: string, excerptChars: number): string {
  if (excerptChars <= 0) return `error object in the stream (${NOT_KEPT})`;
  return responseExcerpt(message, excerptChars) || 'error object in the stream';
}

const header = (m: Message, name: string): string | undefined => {
  const h = m.headers[name];
  return h && typeof h.value === 'string' ? h.value : undefined;
};

/** A modeled error's members from its JSON body ({} when it is not JSON). */
function members(body: Uint8Array): { Message?: unknown; message?: unknown; ErrorCode?: unknown } {
  try {
    const parsed = JSON.parse(toUtf8(body)) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A stream error as the SDK raises it, as a record's error. */
function namedError(name: string, message: unknown, errorCode: unknown, excerptChars: number): ErrorDetails {
  return sageMakerErrorDetails(
    { name, message: typeof message === 'string' ? message : '', ErrorCode: errorCode },
    'stream',
    null,
    true,
    excerptChars,
  );
}

/** Reads the raw event stream of a 2xx answer into `answer`; never rejects. */
export async function readResponseStream(
  body: ChunkSource,
  answer: StreamedAnswer,
  o: StreamReading,
): Promise<StreamEnd> {
  const splitter = new MessageSplitter();
  const decoder = createStreamDecoder();
  const hash = createHash('sha256');
  const { chunkTimes } = answer;
  let error: ErrorDetails | null = null;

  /** One message of the stream; an error ends the stream. */
  const onMessage = (message: Message, nowNs: bigint): ErrorDetails | null => {
    const type = header(message, ':message-type');
    if (type === 'event') {
      const event = header(message, ':event-type') ?? '';
      if (event === 'PayloadPart') {
        hash.update(message.body);
        const content = decoder.push(message.body);
        for (let i = 0; i < content && chunkTimes.length < RESPONSE_LIMITS.maxContentChunks; i++)
          chunkTimes.push(nowNs);
        if (decoder.usage) answer.usage = decoder.usage;
        return decoder.error === null
          ? null
          : { code: null, type: 'StreamError', message: streamErrorMessage(decoder.error, o.excerptChars) };
      }
      if (MODELED_STREAM_ERRORS.has(event)) {
        const m = members(message.body);
        return namedError(event, m.Message ?? m.message, m.ErrorCode, o.excerptChars);
      }
      return null;
    }
    if (type === 'exception') {
      const name = header(message, ':exception-type') ?? 'UnknownError';
      if (!MODELED_STREAM_ERRORS.has(name)) return namedError(name, toUtf8(message.body), undefined, o.excerptChars);
      const m = members(message.body);
      return namedError(name, m.Message ?? m.message, m.ErrorCode, o.excerptChars);
    }
    if (type === 'error')
      return namedError(
        header(message, ':error-code') ?? 'UnknownError',
        header(message, ':error-message') || 'UnknownError',
        undefined,
        o.excerptChars,
      );
    throw new Error(`Unrecognizable event type: ${header(message, ':event-type') ?? String(type)}`);
  };

  const onAbort = () => body.destroy(o.signal.reason instanceof Error ? o.signal.reason : new Error('aborted'));
  o.signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (o.signal.aborted) onAbort();
    await eachChunk(body, (chunk) => {
      const nowNs = o.clock.nowNs();
      for (const bytes of splitter.push(chunk)) {
        error = onMessage(codec.decode(bytes), nowNs);
        // A model that reports an error and keeps streaming must not become a timeout.
        if (error) return false;
      }
      return true;
    });
    const endNs = o.clock.nowNs();
    if (error) return { ok: true, endNs, error };
    if (splitter.partial) throw new Error('Truncated event message received.');
    const tail = decoder.end();
    for (let i = 0; i < tail && chunkTimes.length < RESPONSE_LIMITS.maxContentChunks; i++) chunkTimes.push(endNs);
    if (decoder.usage) answer.usage = decoder.usage;
    answer.outputSha256 = hash.digest('hex');
    return {
      ok: true,
      endNs,
      error:
        decoder.error === null
          ? null
          : { code: null, type: 'StreamError', message: streamErrorMessage(decoder.error, o.excerptChars) },
    };
  } catch (thrown) {
    return { ok: false, thrown, refused: thrown instanceof FrameGuardError ? thrown : null };
  } finally {
    o.signal.removeEventListener('abort', onAbort);
  }
}
