/**
 * A SageMaker real-time endpoint as a replay target, over the AWS SDK v3 runtime client (SigV4,
 * the default credential chain and the endpoint URL all come from the SDK). `InvokeEndpoint` for
 * a non-streaming request, `InvokeEndpointWithResponseStream` for a streaming one; the body
 * bytes go as given. SDK retries are off: a retry would send the invocation twice and fold two
 * attempts into one timing.
 *
 * Never rejects: every failure is a record of its type. The endpoint's resolution, the
 * InferenceId, what each timestamp is, every error type and how bodies are read are in
 * docs/sagemaker-targets.md (#how-a-request-is-sent, #every-error-type); the innermost
 * middleware below stamps the write and the ack and reads bodies in bounded memory.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { requestDeadline, type RequestDeadline } from '../request-deadline';
import { watchWire } from '../wire-stamps';
import { ReservingHttpAgent, ReservingHttpsAgent, type ReservingAgent } from '../http/agent-reserve';
import type { WarmOptions } from '../http/socket-reserve';
import { clientTlsContext } from '../http/tls-context';
import {
  InvokeEndpointCommand,
  InvokeEndpointWithResponseStreamCommand,
  SageMakerRuntimeClient,
  type SageMakerRuntimeClientConfig,
  type InvokeEndpointCommandInput,
  type InvokeEndpointWithResponseStreamCommandInput,
} from '@aws-sdk/client-sagemaker-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { Clock, TargetClient, TargetRequest } from '../../ports';
import { recordedError } from '../../core/metrics/error-details';
import type { ErrorDetails, TargetResult, TokenUsage } from '../../core/types';
import { isJsonContentType } from '../../core/capture/body-type';
import {
  JsonMemberScanner,
  type ChunkSource,
  type JsonScanResult,
  notOneJsonObject,
  readCapped,
  RESPONSE_LIMITS,
  selectAnswerMembers,
  withExcerpt,
} from '../http/response-body';
import type { FrameGuardError } from '../../core/errors';
import { readResponseStream, type StreamEnd } from './response-stream';
import { sageMakerErrorDetails } from './sagemaker-errors';
import { createStreamDecoder, inspectChunk } from './stream-decode';
import { ChunkTimes } from '../chunk-times';

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
   * by close(); its owner must configure `maxAttempts: 1` or retries will double-send, and
   * should build it from sageMakerRuntimeClientConfig: with other agents, the wire stamp on
   * a kept-alive socket is taken after the write, and a pause there reads as a shorter TTFT.
   */
  client?: SageMakerRuntimeClient;
  /** Characters of response text kept in an error message (default RESPONSE_LIMITS.excerptChars); 0: none. */
  responseExcerptChars?: number;
}

/**
 * How long before its due time a request is handed over: the SDK serializes it, resolves the
 * credentials and the endpoint and signs it (SigV4) before it can be written, about 2.5 ms on
 * an idle machine and several times that under load; held then to its due time in the
 * innermost middleware, the request goes out with only the write left.
 */
export const PREPARE_AHEAD_MS = 20;

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
 * keep-alive pool of `connections` sockets (default 1024) whose agents take the wire stamp
 * before the write, nothing waiting past the timeout.
 * Exported for callers that build the client themselves (to add an endpoint or a middleware)
 * and pass it as `client`.
 */
export function sageMakerRuntimeClientConfig(
  options: Pick<SageMakerTargetOptions, 'region' | 'connections' | 'timeoutMs'>,
): SageMakerRuntimeClientConfig {
  const maxSockets = options.connections ?? 1024;
  const agents = {
    http: new ReservingHttpAgent({ keepAlive: true, maxSockets }),
    https: new ReservingHttpsAgent({ keepAlive: true, maxSockets, secureContext: clientTlsContext() }),
  };
  const requestHandler = new NodeHttpHandler({
    httpAgent: agents.http,
    httpsAgent: agents.https,
    requestTimeout: options.timeoutMs,
    throwOnRequestTimeout: true,
    socketTimeout: options.timeoutMs,
  });
  AGENTS.set(requestHandler, agents);
  return { ...(options.region ? { region: options.region } : {}), maxAttempts: 1, requestHandler };
}

/** The agents of a handler made by sageMakerRuntimeClientConfig: what `openAhead` opens spares in. */
const AGENTS = new WeakMap<object, { http: ReservingAgent; https: ReservingAgent }>();

/**
 * The endpoint's origin as the SDK resolves it for this client: a configured endpoint (the
 * client's `endpoint`, or AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME / AWS_ENDPOINT_URL), else the
 * Region's endpoint from the SDK's own rules (FIPS and dual-stack included).
 */
async function endpointOrigin(client: SageMakerRuntimeClient): Promise<URL> {
  const config = client.config as typeof client.config & {
    serviceConfiguredEndpoint?: () => Promise<string | undefined>;
  };
  const explicit = await config.endpoint?.();
  if (explicit) return new URL(`${explicit.protocol}//${explicit.hostname}${explicit.port ? `:${explicit.port}` : ''}`);
  const configured = await config.serviceConfiguredEndpoint?.();
  if (configured) return new URL(configured);
  const resolved = config.endpointProvider({
    Region: await config.region(),
    UseFIPS: await config.useFipsEndpoint(),
    UseDualStack: await config.useDualstackEndpoint(),
  });
  return new URL(resolved.url.origin);
}

export function createSageMakerTarget(
  options: SageMakerTargetOptions,
): TargetClient & { openAhead(connections: number, options?: WarmOptions): void } {
  const client = options.client ?? new SageMakerRuntimeClient(sageMakerRuntimeClientConfig(options));
  const target: Target = {
    options,
    client,
    clock: options.clock,
    excerptChars: options.responseExcerptChars ?? RESPONSE_LIMITS.excerptChars,
  };

  async function send(request: TargetRequest, signal?: AbortSignal): Promise<TargetResult> {
    const deadline = requestDeadline(options.timeoutMs, signal);
    try {
      return await invoke(target, request, deadline, signal);
    } finally {
      deadline.release();
    }
  }

  let origin: Promise<URL | null> | null = null;
  /**
   * Spares opened so that `connections` are ready for the endpoint (WarmOptions; `withinMs`
   * counted from this call; clients not made by sageMakerRuntimeClientConfig: none).
   */
  const openAhead = (connections: number, options: WarmOptions = {}) => {
    const { withinMs } = options;
    const agents = AGENTS.get(client.config.requestHandler as object);
    if (!agents) return;
    const asked = performance.now();
    origin ??= endpointOrigin(client).catch(() => null);
    void origin.then(
      (url) =>
        url &&
        (url.protocol === 'https:' ? agents.https : agents.http).openAhead(url, connections, {
          ...options,
          ...(withinMs === undefined ? {} : { withinMs: withinMs - (performance.now() - asked) }),
        }),
    );
  };

  return {
    name: options.name,
    preparesAheadMs: PREPARE_AHEAD_MS,
    send,
    openAhead,
    async close() {
      if (!options.client) client.destroy();
    },
  };
}

/** What every invocation of one target shares. */
interface Target {
  options: SageMakerTargetOptions;
  client: SageMakerRuntimeClient;
  clock: Clock;
  excerptChars: number;
}

function commonInput(options: SageMakerTargetOptions, request: TargetRequest) {
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

function invoke(
  t: Target,
  request: TargetRequest,
  deadline: RequestDeadline,
  signal?: AbortSignal,
): Promise<TargetResult> {
  const call = new Invocation(t, request, deadline, signal);
  return request.streaming ? invokeStreaming(t, call) : invokeWhole(t, call);
}

const TIMING_OPTIONS = { step: 'deserialize', name: 'captureReplayWireTiming', priority: 'low' } as const;

/** One invocation: what has been measured and seen of it, and its result built from them. */
class Invocation {
  readonly chunkTimes = new ChunkTimes();
  usage: TokenUsage | null = null;
  ackNs: bigint | null = null;
  wireStartNs: bigint | null = null;
  status: number | null = null;
  outputSha256: string | null = null;
  /** The HTTP response stream: destroyed when we stop reading it early (frees the socket). */
  rawBody: { destroy?: () => void } | null = null;
  /** A non-streamed answer, read by the middleware: what the record needs of it, and its content type. */
  answer: AnswerInspection | null = null;
  answerType: string | undefined;
  /** Set when the event stream was stopped at a prelude: too large a message, or not one (frame-guard.ts). */
  refused: FrameGuardError | null = null;
  /** A 2xx event stream being read (response-stream.ts): how it ended. */
  stream: Promise<StreamEnd> | null = null;
  private readonly wire: ReturnType<typeof watchWire>;
  private readonly sendNs: bigint;

  constructor(
    private readonly t: Target,
    readonly request: TargetRequest,
    readonly deadline: RequestDeadline,
    private readonly signal?: AbortSignal,
  ) {
    this.wire = watchWire(request.requestId, t.clock);
    // The loop's pick-up, before the SDK's own work (credentials, signing): the schedule lag's end.
    // Handed over ahead (PREPARE_AHEAD_MS): the request starts when it may be written.
    const now = t.clock.nowNs();
    this.sendNs = request.notBeforeNs !== undefined && request.notBeforeNs > now ? request.notBeforeNs : now;
  }

  /**
   * Innermost middleware: runs after signing, right before the HTTP handler writes the
   * request, and sees the raw response as soon as its headers are in (before the SDK reads
   * the body or parses an error). It reads the bodies the SDK would hold whole.
   */
  readonly wireTiming =
    <A, R extends { response: unknown }>(next: (args: A) => Promise<R>) =>
    async (args: A): Promise<R> => {
      const clock = this.t.clock;
      // Serialized and signed by now: held to the due time, so that only the write is left then.
      if (this.request.notBeforeNs !== undefined) await clock.waitUntil(this.request.notBeforeNs, this.deadline.signal);
      this.wireStartNs = clock.nowNs();
      const out = await next(args);
      this.ackNs = clock.nowNs();
      const response = out.response as
        | { statusCode?: unknown; body?: unknown; headers?: Record<string, string | undefined> }
        | undefined;
      if (typeof response?.statusCode === 'number') this.status = response.statusCode;
      this.answerType = response?.headers?.['content-type'];
      const body = response?.body as (AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => void }) | undefined;
      this.rawBody = body ?? null;
      if (response && body && typeof body[Symbol.asyncIterator] === 'function') {
        if (this.status !== null && this.status >= 300) {
          // Enough for the SDK to name the error; the rest counted and dropped.
          const capped = await whileNotAborted(this.deadline.signal, body, () =>
            readCapped(body, RESPONSE_LIMITS.errorBodyKeepBytes),
          );
          response.body = Readable.from([capped.kept]);
        } else if (!this.request.streaming) {
          this.answer = await whileNotAborted(this.deadline.signal, body, () => inspectAnswer(body));
          response.body = Readable.from([]);
        } else {
          // Read here as it arrives (response-stream.ts); the SDK's deserializer gets nothing.
          this.stream = readResponseStream(body as unknown as ChunkSource, this, {
            clock,
            excerptChars: this.t.excerptChars,
            signal: this.deadline.signal,
          });
          response.body = Readable.from([]);
        }
      }
      return out;
    };

  result(error: ErrorDetails | null, endNs = this.t.clock.nowNs()): TargetResult {
    return {
      requestStartNs: this.sendNs,
      // Handed to the socket (wire-stamps.ts, found by InferenceId); the middleware's stamp
      // just before the HTTP handler when the id could not be sent.
      requestWireNs: this.wire.take() ?? this.wireStartNs,
      requestAckNs: this.ackNs,
      requestEndNs: endNs,
      contentChunkNs: this.chunkTimes.toNs(),
      httpStatus: this.status,
      usage: this.usage,
      // What the endpoint named and said, as every record holds it (a name, printable text, bounded).
      error: error === null ? null : recordedError(error),
      outputSha256: this.outputSha256,
    };
  }

  failure(error: unknown, phase: 'request' | 'stream'): TargetResult {
    const refused = this.refused;
    if (refused)
      return this.result({
        code: null,
        type: refused.kind === 'oversized' ? 'OversizedFrame' : 'MalformedStream',
        message: refused.message,
      });
    if (this.deadline.timedOut)
      return this.result({
        code: 408,
        type: 'TimeoutError',
        message: `no complete response within ${this.t.options.timeoutMs} ms`,
      });
    if (this.signal?.aborted) return this.result({ code: 499, type: 'CancelledError', message: 'request cancelled' });
    return this.result(sageMakerErrorDetails(error, phase, this.status, this.request.streaming, this.t.excerptChars));
  }
}

/** InvokeEndpoint: the whole answer, read by the middleware as it arrives. */
async function invokeWhole(t: Target, call: Invocation): Promise<TargetResult> {
  const { request } = call;
  const command = new InvokeEndpointCommand(commonInput(t.options, request));
  command.middlewareStack.add(call.wireTiming, TIMING_OPTIONS);
  try {
    const out = await t.client.send(command, { abortSignal: call.deadline.signal });
    const endNs = t.clock.nowNs();
    // The middleware read the body (a client passed in without it: the SDK's bytes).
    const seen: AnswerInspection = call.answer ?? (await inspectAnswer([out.Body ?? new Uint8Array(0)]));
    call.outputSha256 = seen.sha256;
    call.usage = seen.usage;
    const status = call.status;
    const notChat = notAChatAnswer(request, seen, call.answerType);
    if (notChat !== null) return call.result({ code: status, type: 'MalformedResponse', message: notChat }, endNs);
    if (seen.error !== null)
      return call.result(
        {
          code: status,
          type: 'ResponseError',
          message: withExcerpt(`HTTP ${status ?? 200} with an error object`, seen.error, t.excerptChars),
        },
        endNs,
      );
    return call.result(null, endNs);
  } catch (error) {
    return call.failure(error, 'request');
  }
}

/** InvokeEndpointWithResponseStream: the event stream read by the middleware as it arrives (response-stream.ts). */
async function invokeStreaming(t: Target, call: Invocation): Promise<TargetResult> {
  const command = new InvokeEndpointWithResponseStreamCommand(commonInput(t.options, call.request));
  command.middlewareStack.add(call.wireTiming, TIMING_OPTIONS);
  try {
    await t.client.send(command, { abortSignal: call.deadline.signal });
  } catch (error) {
    // A stream being read (the SDK failed after its headers) is let go.
    call.rawBody?.destroy?.();
    await call.stream;
    return call.failure(error, 'request');
  }
  const end: StreamEnd = (await call.stream) ?? {
    ok: false,
    thrown: new Error('no event stream in a 2xx answer'),
    refused: null,
  };
  if (end.ok) return call.result(end.error, end.endNs);
  call.refused = end.refused;
  return call.failure(end.thrown, 'stream');
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
function notAChatAnswer(
  request: TargetRequest,
  seen: AnswerInspection,
  contentType: string | undefined,
): string | null {
  if (seen.kind === 'sse') return null;
  const problem = notOneJsonObject(seen.scan ?? NOT_JSON, seen.bytes, contentType);
  return problem !== null && isChatRequest(request) ? problem : null;
}

/**
 * A JSON object with a `messages` array (plan.ts sends only these as chat requests). Parsed only for an answer that
 * is not one JSON object.
 */
function isChatRequest(request: TargetRequest): boolean {
  if (!isJsonContentType(request.contentType)) return false;
  try {
    const parsed = JSON.parse(
      Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength).toString('utf8'),
    ) as unknown;
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
      while (
        i < chunk.length &&
        (chunk[i] === 0x20 ||
          chunk[i] === 0x0a ||
          chunk[i] === 0x0d ||
          chunk[i] === 0x09 ||
          chunk[i] === 0xef ||
          chunk[i] === 0xbb ||
          chunk[i] === 0xbf)
      )
        i++;
      if (i === chunk.length) {
        // Blank so far: the decision waits (the blank bytes go to neither: both skip them).
        continue;
      }
      const first = chunk[i];
      kind =
        first === 0x7b /* { */ || first === 0x5b /* [ */
          ? 'json'
          : first === 0x64 /* d(ata:) */ || first === 0x3a /* : */ || first === 0x65 /* e(vent:) */
            ? 'sse'
            : 'other';
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
async function whileNotAborted<T>(
  signal: AbortSignal,
  body: { destroy?: (error?: Error) => void },
  read: () => Promise<T>,
): Promise<T> {
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
