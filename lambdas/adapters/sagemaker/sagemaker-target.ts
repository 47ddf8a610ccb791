/**
 * A SageMaker real-time endpoint as a replay target, over the AWS SDK v3 runtime client:
 * SigV4 and the default credential chain come from the SDK, and so does the endpoint URL
 * (`AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`, then `AWS_ENDPOINT_URL`, then the shared config's
 * `endpoint_url`; the regional `runtime.sagemaker.<region>.amazonaws.com` otherwise).
 *
 * `InvokeEndpoint` for a non-streaming request, `InvokeEndpointWithResponseStream` for a
 * streaming one. The body bytes go as given, with the request's content type and Accept;
 * `InferenceId` = the request id, so the endpoint's own Data Capture joins back to our
 * records (SageMaker allows 1-64 printable ASCII characters, the first not blank: an id
 * outside that is not sent, the SDK does not check it and the service would reject the
 * call). SDK retries are off (`maxAttempts: 1`): a retry would send the invocation twice
 * and fold two attempts into one timing.
 *
 * Timing: `requestStartNs` is the loop's pick-up, before the SDK's work; `requestWireNs` is
 * when node:http has written the request to its socket (wire-stamps.ts), so credentials,
 * endpoint resolution, signing and a busy event loop count as our lateness, not as the
 * endpoint's time. A middleware at the innermost position of the command's stack, next to
 * the HTTP handler, stamps the moment before the write (the fallback when the InferenceId
 * could not be sent) and the ack when the response headers arrive. Each content-bearing event of a
 * `PayloadPart` is stamped with the arrival of that part (see stream-decode.ts: SSE, JSON
 * lines and TGI events, buffered across parts); `requestEndNs` is the end of the body.
 *
 * Never rejects. Error types (sagemaker-errors.ts): the service's own names (`ModelError`
 * with the model's `OriginalStatusCode` as code, `ValidationError` 400, `ThrottlingException`
 * 429, `ModelNotReadyException` 429, `InternalFailure` 500, `ServiceUnavailable` 503,
 * `InternalDependencyException` 530, others with their HTTP status, when they are names;
 * `HTTPError` with the status for a response that is not the service's, e.g. a proxy's, or
 * whose error code is not a name), the stream's `ModelStreamError` / `InternalStreamFailure`
 * (code null: the HTTP status was 200), an event-stream error's own code when it is a name,
 * else `StreamError` (also an `error` object in the model's stream), `OversizedFrame` (an
 * event-stream message claiming more than 16 MiB: frame-guard.ts), `TimeoutError` (408, the
 * request ran out of timeoutMs), `CancelledError` (499, the caller's signal),
 * `ConnectionError` (refused/reset, code null), `MalformedStream` / `MalformedResponse` (a
 * 2xx response the SDK could not decode, code null; a non-streamed answer to a chat request
 * that is not one JSON object, code = status, as for an HTTP target),
 * `CredentialsError` / `ConfigurationError` (no credentials, no region: nothing was sent),
 * `ResponseError` (code = status: a 2xx answer carrying an `error` member). Every error is
 * recorded as core/metrics/error-details.ts allows.
 *
 * Bodies are read in bounded memory (../http/response-body.ts), by the same middleware,
 * before the SDK sees them: of an error response (status >= 300) the first 64 KiB are handed
 * to the SDK to name the error and the rest is read, counted and discarded; a non-streamed
 * answer is hashed and scanned for `usage` / `error` as it arrives and never held (the SDK
 * gets an empty body); an event stream passes through a check of each message's claimed size
 * (frame-guard.ts). Response text in a message is an excerpt of `responseExcerptChars`
 * (160 by default; 0: none). Implausible token counts count as missing.
 */
import { createHash } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Readable } from 'node:stream';
import { requestDeadline, type RequestDeadline } from '../request-deadline';
import { watchWire } from '../wire-stamps';
import {
  InvokeEndpointCommand,
  InvokeEndpointWithResponseStreamCommand,
  SageMakerRuntimeClient,
  type SageMakerRuntimeClientConfig,
  type InvokeEndpointCommandInput,
  type InvokeEndpointWithResponseStreamCommandInput,
  type ResponseStream,
} from '@aws-sdk/client-sagemaker-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { Clock, TargetClient, TargetRequest } from '../../ports';
import { recordedError } from '../../core/metrics/error-details';
import type { ErrorDetails, TargetResult, TokenUsage } from '../../core/types';
import { isJsonContentType } from '../../core/capture/body-type';
import { JsonMemberScanner, type JsonScanResult, notOneJsonObject, readCapped, RESPONSE_LIMITS, responseExcerpt, selectAnswerMembers, withExcerpt } from '../http/response-body';
import { guardFrames, type FrameGuardError } from './frame-guard';
import { NOT_KEPT, sageMakerErrorDetails } from './sagemaker-errors';
import { createStreamDecoder, inspectChunk } from './stream-decode';


export interface SageMakerTargetOptions {
  name: string;
  endpointName: string;
  /** Default: the SDK's (AWS_REGION, the shared config). */
  region?: string;
  targetVariant?: string;
  targetContainerHostname?: string;
  inferenceComponentName?: string;
  customAttributes?: string;
  timeoutMs: number;
  clock: Clock;
  /** Connection pool size (sockets per host). Default 1024. */
  connections?: number;
  /**
   * A client to use instead of one built here (tests, shared clients). It is not destroyed
   * by close(); its owner must configure `maxAttempts: 1` or retries will double-send.
   */
  client?: SageMakerRuntimeClient;
  /** Characters of response text kept in an error message (default RESPONSE_LIMITS.excerptChars); 0: none. */
  responseExcerptChars?: number;
}

/** SageMaker's InferenceId constraint: 1-64 characters, `\A\S[\p{Print}]*\z` (printable ASCII). */
export function isValidInferenceId(id: string): boolean {
  return /^[\x21-\x7e][\x20-\x7e]{0,63}$/.test(id);
}

/** Rejects when the signal aborts: a stalled event stream must not outlive the timeout. */
function abortRace(signal: AbortSignal): { promise: Promise<never>; dispose(): void } {
  let onAbort: () => void = () => undefined;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason ?? new Error('aborted'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => undefined);
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/**
 * The runtime client's settings a target needs: SDK retries off (`maxAttempts: 1`), a
 * keep-alive pool of `connections` sockets (default 1024), nothing waiting past the timeout.
 * Exported for callers that build the client themselves (to add an endpoint or a middleware)
 * and pass it as `client`.
 */
export function sageMakerRuntimeClientConfig(options: Pick<SageMakerTargetOptions, 'region' | 'connections' | 'timeoutMs'>): SageMakerRuntimeClientConfig {
  const maxSockets = options.connections ?? 1024;
  return {
    ...(options.region ? { region: options.region } : {}),
    maxAttempts: 1,
    requestHandler: new NodeHttpHandler({
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets }),
      // The whole-request timeout is ours (requestDeadline below, body included); these
      // only make sure nothing waits longer than it, and fail instead of warning.
      requestTimeout: options.timeoutMs,
      throwOnRequestTimeout: true,
      socketTimeout: options.timeoutMs,
    }),
  };
}

export function createSageMakerTarget(options: SageMakerTargetOptions): TargetClient {
  const { clock } = options;
  const client = options.client ?? new SageMakerRuntimeClient(sageMakerRuntimeClientConfig(options));
  const excerptChars = options.responseExcerptChars ?? RESPONSE_LIMITS.excerptChars;

  function commonInput(request: TargetRequest) {
    return {
      EndpointName: options.endpointName,
      Body: request.body,
      ContentType: request.contentType,
      ...(request.accept ? { Accept: request.accept } : {}),
      ...(isValidInferenceId(request.requestId) ? { InferenceId: request.requestId } : {}),
      ...(options.targetVariant ? { TargetVariant: options.targetVariant } : {}),
      ...(options.targetContainerHostname ? { TargetContainerHostname: options.targetContainerHostname } : {}),
      ...(options.inferenceComponentName ? { InferenceComponentName: options.inferenceComponentName } : {}),
      ...(options.customAttributes ? { CustomAttributes: options.customAttributes } : {}),
    } satisfies InvokeEndpointCommandInput & InvokeEndpointWithResponseStreamCommandInput;
  }

  async function send(request: TargetRequest, signal?: AbortSignal): Promise<TargetResult> {
    const deadline = requestDeadline(options.timeoutMs, signal);
    try {
      return await invoke(request, deadline, signal);
    } finally {
      deadline.release();
    }
  }

  async function invoke(request: TargetRequest, deadline: RequestDeadline, signal?: AbortSignal): Promise<TargetResult> {
    const combined = deadline.signal;
    const chunkTimes: bigint[] = [];
    let usage: TokenUsage | null = null;
    let ackNs: bigint | null = null;
    let wireStartNs: bigint | null = null;
    let status: number | null = null;
    let outputSha256: string | null = null;
    /** The HTTP response stream: destroyed when we stop reading it early (frees the socket). */
    let rawBody: { destroy?: () => void } | null = null;
    // The loop's pick-up, before the SDK's own work (credentials, signing): the schedule lag's end.
    const wire = watchWire(request.requestId, clock);
    const sendNs = clock.nowNs();

    /** A non-streamed answer, read by the middleware: what the record needs of it, and its content type. */
    let answer: AnswerInspection | null = null;
    let answerType: string | undefined;
    /** Set when the event stream was stopped at a prelude: too large a message, or not one (frame-guard.ts). */
    let refused: FrameGuardError | null = null;

    // Innermost middleware: runs after signing, right before the HTTP handler writes the
    // request, and sees the raw response as soon as its headers are in (before the SDK
    // reads the body or parses an error). It reads the bodies the SDK would hold whole.
    const wireTiming =
      <A, R extends { response: unknown }>(next: (args: A) => Promise<R>) =>
      async (args: A): Promise<R> => {
        wireStartNs = clock.nowNs();
        const out = await next(args);
        ackNs = clock.nowNs();
        const response = out.response as { statusCode?: unknown; body?: unknown; headers?: Record<string, string | undefined> } | undefined;
        if (typeof response?.statusCode === 'number') status = response.statusCode;
        answerType = response?.headers?.['content-type'];
        const body = response?.body as (AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => void }) | undefined;
        rawBody = body ?? null;
        if (response && body && typeof body[Symbol.asyncIterator] === 'function') {
          if (status !== null && status >= 300) {
            // Enough for the SDK to name the error; the rest counted and dropped.
            const capped = await whileNotAborted(combined, body, () => readCapped(body, RESPONSE_LIMITS.errorBodyKeepBytes));
            response.body = Readable.from([capped.kept]);
          } else if (!request.streaming) {
            answer = await whileNotAborted(combined, body, () => inspectAnswer(body));
            response.body = Readable.from([]);
          } else {
            // The SDK holds each event-stream message whole, at the size its prelude claims.
            response.body = Readable.from(
              guardFrames(body, (error) => {
                refused = error;
                body.destroy?.();
              }),
            );
          }
        }
        return out;
      };
    const timingOptions = { step: 'deserialize', name: 'captureReplayWireTiming', priority: 'low' } as const;

    const result = (error: ErrorDetails | null, endNs = clock.nowNs()): TargetResult => ({
      requestStartNs: sendNs,
      // Written to the socket (node:http's diagnostics channel, found by InferenceId); the
      // middleware's stamp just before the HTTP handler when the id could not be sent.
      requestWireNs: wire.take() ?? wireStartNs,
      requestAckNs: ackNs,
      requestEndNs: endNs,
      contentChunkNs: chunkTimes,
      httpStatus: status,
      usage,
      // What the endpoint named and said, as every record holds it (a name, printable text, bounded).
      error: error === null ? null : recordedError(error),
      outputSha256,
    });
    const failure = (error: unknown, phase: 'request' | 'stream'): TargetResult => {
      if (refused) return result({ code: null, type: refused.kind === 'oversized' ? 'OversizedFrame' : 'MalformedStream', message: refused.message });
      if (deadline.timedOut) return result({ code: 408, type: 'TimeoutError', message: `no complete response within ${options.timeoutMs} ms` });
      if (signal?.aborted) return result({ code: 499, type: 'CancelledError', message: 'request cancelled' });
      return result(sageMakerErrorDetails(error, phase, status, request.streaming, excerptChars));
    };

    if (!request.streaming) {
      const command = new InvokeEndpointCommand(commonInput(request));
      command.middlewareStack.add(wireTiming, timingOptions);
      try {
        const out = await client.send(command, { abortSignal: combined });
        const endNs = clock.nowNs();
        // The middleware read the body (a client passed in without it: the SDK's bytes).
        const seen: AnswerInspection = answer ?? (await inspectAnswer([out.Body ?? new Uint8Array(0)]));
        outputSha256 = seen.sha256;
        usage = seen.usage;
        const notChat = notAChatAnswer(request, seen, answerType);
        if (notChat !== null) return result({ code: status, type: 'MalformedResponse', message: notChat }, endNs);
        if (seen.error !== null) return result({ code: status, type: 'ResponseError', message: withExcerpt(`HTTP ${status ?? 200} with an error object`, seen.error, excerptChars) }, endNs);
        return result(null, endNs);
      } catch (error) {
        return failure(error, 'request');
      }
    }

    const command = new InvokeEndpointWithResponseStreamCommand(commonInput(request));
    command.middlewareStack.add(wireTiming, timingOptions);
    let stream: AsyncIterable<ResponseStream> | undefined;
    try {
      const out = await client.send(command, { abortSignal: combined });
      stream = out.Body;
    } catch (error) {
      return failure(error, 'request');
    }
    const decoder = createStreamDecoder();
    const hash = createHash('sha256');
    const race = abortRace(combined);
    const iterator = (stream ?? emptyStream())[Symbol.asyncIterator]();
    const stop = () => {
      rawBody?.destroy?.();
      closeQuietly(iterator);
    };
    try {
      for (;;) {
        const next = await Promise.race([iterator.next(), race.promise]);
        if (next.done) break;
        const nowNs = clock.nowNs();
        const event = next.value;
        if (event.PayloadPart) {
          const bytes = event.PayloadPart.Bytes ?? new Uint8Array(0);
          hash.update(bytes);
          const content = decoder.push(bytes);
          for (let i = 0; i < content && chunkTimes.length < RESPONSE_LIMITS.maxContentChunks; i++) chunkTimes.push(nowNs);
          if (decoder.usage) usage = decoder.usage;
          if (decoder.error !== null) {
            // A model that reports an error and keeps streaming must not become a timeout.
            stop();
            return result({ code: null, type: 'StreamError', message: streamErrorMessage(decoder.error, excerptChars) });
          }
        } else if (event.ModelStreamError || event.InternalStreamFailure) {
          // Modeled stream errors normally arrive as exception messages (thrown below); as
          // plain events, they end the stream all the same.
          stop();
          const name = event.ModelStreamError ? 'ModelStreamError' : 'InternalStreamFailure';
          const e = (event.ModelStreamError ?? event.InternalStreamFailure) as { Message?: string; message?: string; ErrorCode?: string };
          return result(sageMakerErrorDetails({ name, message: e.message ?? e.Message, ErrorCode: e.ErrorCode }, 'stream', null, true, excerptChars));
        }
      }
      const endNs = clock.nowNs();
      const tail = decoder.end();
      for (let i = 0; i < tail && chunkTimes.length < RESPONSE_LIMITS.maxContentChunks; i++) chunkTimes.push(endNs);
      if (decoder.usage) usage = decoder.usage;
      outputSha256 = hash.digest('hex');
      if (decoder.error !== null) return result({ code: null, type: 'StreamError', message: streamErrorMessage(decoder.error, excerptChars) }, endNs);
      return result(null, endNs);
    } catch (error) {
      stop();
      return failure(error, 'stream');
    } finally {
      race.dispose();
    }
  }

  return {
    name: options.name,
    send,
    async close() {
      if (!options.client) client.destroy();
    },
  };
}

async function* emptyStream(): AsyncGenerator<ResponseStream> {}

/** Ends an event stream we stop reading (releases its socket); its own failure is of no interest. */
function closeQuietly(iterator: AsyncIterator<unknown>): void {
  iterator.return?.()?.catch(() => undefined);
}

/** What a non-streamed answer's record needs: its digest, its usage, the error it carries, its shape. */
interface AnswerInspection {
  sha256: string;
  usage: TokenUsage | null;
  /** The message of an `error` member (a 2xx answer that reports a failure); null when none. */
  error: string | null;
  /** What its first non-blank byte says it is; null when it is empty or blank. */
  kind: 'json' | 'sse' | 'other' | null;
  bytes: number;
  /** The JSON structure seen (kind `json`); null otherwise. */
  scan: JsonScanResult | null;
}

const NOT_JSON: JsonScanResult = { values: 0, firstIsObject: false, wellFormed: false, skeletons: [] };

/**
 * Why a non-streamed answer to a chat request (a JSON body with a `messages` array) is not a
 * chat answer, or null. As for an HTTP target (response-body.ts notOneJsonObject), a chat
 * answer is one JSON object; SSE text a container buffered is read as a stream. Answers to
 * other requests (CSV, binary, `instances`, `inputs`) are only hashed, never judged.
 */
function notAChatAnswer(request: TargetRequest, seen: AnswerInspection, contentType: string | undefined): string | null {
  if (seen.kind === 'sse') return null;
  const problem = notOneJsonObject(seen.scan ?? NOT_JSON, seen.bytes, contentType);
  return problem !== null && isChatRequest(request) ? problem : null;
}

/** A JSON object with a `messages` array (plan.ts sends only these as chat requests). Parsed only for an answer that is not one JSON object. */
function isChatRequest(request: TargetRequest): boolean {
  if (!isJsonContentType(request.contentType)) return false;
  try {
    const parsed = JSON.parse(Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength).toString('utf8')) as unknown;
    return parsed !== null && typeof parsed === 'object' && Array.isArray((parsed as { messages?: unknown }).messages);
  } catch {
    return false;
  }
}

/**
 * Reads a non-streamed answer as it arrives, holding none of it: SHA-256 of all its bytes,
 * and `usage` / `error` of an OpenAI-style JSON answer (also JSON lines, TGI arrays) or of
 * SSE text a container buffered. Other outputs (CSV, binary, text) are only hashed.
 */
async function inspectAnswer(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<AnswerInspection> {
  const hash = createHash('sha256');
  let kind: 'json' | 'sse' | 'other' | null = null;
  const scanner = new JsonMemberScanner(selectAnswerMembers, 3);
  const decoder = createStreamDecoder();
  let decoderFailed = false;
  let bytes = 0;
  for await (const chunk of body) {
    hash.update(chunk);
    bytes += chunk.byteLength;
    if (kind === null) {
      let i = 0;
      while (i < chunk.length && (chunk[i] === 0x20 || chunk[i] === 0x0a || chunk[i] === 0x0d || chunk[i] === 0x09 || chunk[i] === 0xef || chunk[i] === 0xbb || chunk[i] === 0xbf)) i++;
      if (i === chunk.length) {
        // Blank so far: the decision waits (the blank bytes go to neither: both skip them).
        continue;
      }
      const first = chunk[i];
      kind = first === 0x7b /* { */ || first === 0x5b /* [ */ ? 'json' : first === 0x64 /* d(ata:) */ || first === 0x3a /* : */ || first === 0x65 /* e(vent:) */ ? 'sse' : 'other';
    }
    if (kind === 'json') scanner.feed(chunk);
    else if (kind === 'sse' && !decoderFailed) {
      try {
        decoder.push(chunk);
      } catch {
        decoderFailed = true;
      }
    }
  }
  let usage: TokenUsage | null = null;
  let error: string | null = null;
  const scan = kind === 'json' ? scanner.end() : null;
  if (scan !== null) {
    for (const skeleton of scan.skeletons) {
      if (skeleton === undefined) continue;
      const seen = inspectChunk(skeleton);
      usage = seen.usage ?? usage;
      error ??= seen.error;
    }
  } else if (kind === 'sse' && !decoderFailed) {
    try {
      decoder.end();
      usage = decoder.usage;
      error = decoder.error;
    } catch {
      // Undecodable: no usage, no error.
    }
  }
  return { sha256: hash.digest('hex'), usage, error, kind, bytes, scan };
}

/**
 * Runs `read` over a body, destroying the body when the signal aborts first (a stalled body
 * must not outlive the timeout or the caller's cancellation); rejects then.
 */
async function whileNotAborted<T>(signal: AbortSignal, body: { destroy?: (error?: Error) => void }, read: () => Promise<T>): Promise<T> {
  const race = abortRace(signal);
  const onAbort = () => body.destroy?.(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([read(), race.promise]);
  } finally {
    signal.removeEventListener('abort', onAbort);
    race.dispose();
  }
}

/** The model's in-stream error message as an excerpt, or a note that it is not kept. */
function streamErrorMessage(message: string, excerptChars: number): string {
  if (excerptChars <= 0) return `error object in the stream (${NOT_KEPT})`;
  return responseExcerpt(message, excerptChars) || 'error object in the stream';
}
