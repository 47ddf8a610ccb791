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
 * Never rejects. Error types: the service's own names (`ModelError` with the model's
 * `OriginalStatusCode` as code, `ValidationError` 400, `ThrottlingException` 429,
 * `ModelNotReadyException` 429, `InternalFailure` 500, `ServiceUnavailable` 503,
 * `InternalDependencyException` 530, others with their HTTP status; `HTTPError` with the
 * status for a response that is not the service's, e.g. a proxy's), the stream's
 * `ModelStreamError` / `InternalStreamFailure` (code null: the HTTP status was 200) and
 * `StreamError` (an `error` object in the model's stream), `TimeoutError` (408, the request
 * ran out of timeoutMs), `CancelledError` (499, the caller's signal), `ConnectionError`
 * (refused/reset, code null), `MalformedStream` / `MalformedResponse` (a 2xx response the
 * SDK could not decode, code null),
 * `CredentialsError` / `ConfigurationError` (no credentials, no region: nothing was sent),
 * `ResponseError` (code = status: a 2xx answer carrying an `error` member).
 *
 * Bodies are read in bounded memory (../http/response-body.ts), by the same middleware,
 * before the SDK sees them: of an error response (status >= 300) the first 64 KiB are handed
 * to the SDK to name the error and the rest is read, counted and discarded; a non-streamed
 * answer is hashed and scanned for `usage` / `error` as it arrives and never held (the SDK
 * gets an empty body). Response text in a message is an excerpt of `responseExcerptChars`
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
import type { ErrorDetails, TargetResult, TokenUsage } from '../../core/types';
import { JsonMemberScanner, readCapped, RESPONSE_LIMITS, responseExcerpt, selectAnswerMembers, withExcerpt } from '../http/response-body';
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

/** Our own (or the SDK's) text in a message, not the response's. */
const MAX_OWN_MESSAGE = 300;
const NOT_KEPT = 'response text not kept';

/** SageMaker's InferenceId constraint: 1-64 characters, `\A\S[\p{Print}]*\z` (printable ASCII). */
export function isValidInferenceId(id: string): boolean {
  return /^[\x21-\x7e][\x20-\x7e]{0,63}$/.test(id);
}

/** The HTTP status the service models for each of its errors (used when the response had none). */
const MODELED_STATUS: Record<string, number> = {
  ValidationError: 400,
  ModelError: 424,
  ModelNotReadyException: 429,
  ThrottlingException: 429,
  InternalFailure: 500,
  ServiceUnavailable: 503,
  InternalDependencyException: 530,
};

const STREAM_ERRORS = new Set(['ModelStreamError', 'InternalStreamFailure']);
const UNNAMED = new Set(['Unknown', 'UnknownError', 'SageMakerRuntimeServiceException']);

interface SdkError {
  name?: string;
  message?: string;
  code?: string;
  $fault?: string;
  $metadata?: { httpStatusCode?: number };
  OriginalStatusCode?: number;
  ErrorCode?: string;
}

const excerpt = (text: string | undefined): string => (text ?? '').replace(/\s+/g, ' ').trim().slice(0, MAX_OWN_MESSAGE);

/**
 * An SDK error (service exception, stream event error, transport) as AIPerf's error shape.
 * Text the service or the model sent is cut to `excerptChars` (0: left out).
 */
export function sageMakerErrorDetails(
  error: unknown,
  phase: 'request' | 'stream',
  httpStatus: number | null = null,
  streaming = phase === 'stream',
  excerptChars: number = RESPONSE_LIMITS.excerptChars,
): ErrorDetails {
  const said = (text: string | undefined): string => (excerptChars <= 0 ? (text?.trim() ? NOT_KEPT : '') : responseExcerpt(text ?? '', excerptChars));
  const err = (error ?? {}) as SdkError;
  const name = err.name ?? 'Error';
  if (STREAM_ERRORS.has(name)) {
    const code = err.ErrorCode ? `${err.ErrorCode}: ` : '';
    return { code: null, type: name, message: said(`${code}${err.message ?? ''}`) };
  }
  if (err.$fault === 'client' || err.$fault === 'server') {
    if (name === 'ModelError') {
      const original = typeof err.OriginalStatusCode === 'number' ? err.OriginalStatusCode : null;
      return { code: original ?? err.$metadata?.httpStatusCode ?? 424, type: name, message: said(err.message) };
    }
    const status = name === 'ThrottlingException' ? 429 : (err.$metadata?.httpStatusCode ?? MODELED_STATUS[name] ?? null);
    // A response the SDK cannot name (not the service's JSON: a proxy, a load balancer page).
    if (UNNAMED.has(name)) {
      const text = said(err.message);
      return { code: status, type: 'HTTPError', message: `HTTP ${status ?? '?'}${text ? `: ${text}` : ''}` };
    }
    return { code: status, type: name, message: said(err.message) };
  }
  // An error status whose body the SDK could not read as the service's error (an HTML page
  // from a proxy): the SDK's message quotes that body, so it is not kept.
  if (phase === 'request' && httpStatus !== null && httpStatus >= 300) return { code: httpStatus, type: 'HTTPError', message: `HTTP ${httpStatus}: not a SageMaker error response (${name})` };
  if (name === 'TimeoutError' || err.code === 'ETIMEDOUT') return { code: 408, type: 'TimeoutError', message: excerpt(err.message) };
  if (name === 'CredentialsProviderError') return { code: null, type: 'CredentialsError', message: excerpt(err.message) };
  if (/region is missing|invalid region/i.test(err.message ?? '')) return { code: null, type: 'ConfigurationError', message: excerpt(err.message) };
  // The response came (2xx) but could not be decoded: not a connection problem.
  const malformed = phase === 'stream' || (httpStatus !== null && httpStatus < 300);
  if (malformed && !err.code) {
    const detail = (err.message ?? String(error)).replace(/\s*Deserialization error:.*$/s, '');
    return { code: null, type: phase === 'stream' || streaming ? 'MalformedStream' : 'MalformedResponse', message: excerpt(`${name}: ${detail}`) };
  }
  return { code: null, type: 'ConnectionError', message: excerpt(`${err.code ?? name}: ${err.message ?? String(error)}`) };
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

    /** A non-streamed answer, read by the middleware: what the record needs of it. */
    let answer: AnswerInspection | null = null;

    // Innermost middleware: runs after signing, right before the HTTP handler writes the
    // request, and sees the raw response as soon as its headers are in (before the SDK
    // reads the body or parses an error). It reads the bodies the SDK would hold whole.
    const wireTiming =
      <A, R extends { response: unknown }>(next: (args: A) => Promise<R>) =>
      async (args: A): Promise<R> => {
        wireStartNs = clock.nowNs();
        const out = await next(args);
        ackNs = clock.nowNs();
        const response = out.response as { statusCode?: unknown; body?: unknown } | undefined;
        if (typeof response?.statusCode === 'number') status = response.statusCode;
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
      error,
      outputSha256,
    });
    const failure = (error: unknown, phase: 'request' | 'stream'): TargetResult => {
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

/** What a non-streamed answer's record needs: its digest, its usage, the error it carries. */
interface AnswerInspection {
  sha256: string;
  usage: TokenUsage | null;
  /** The message of an `error` member (a 2xx answer that reports a failure); null when none. */
  error: string | null;
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
  for await (const chunk of body) {
    hash.update(chunk);
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
  if (kind === 'json') {
    for (const skeleton of scanner.end().skeletons) {
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
  return { sha256: hash.digest('hex'), usage, error };
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
