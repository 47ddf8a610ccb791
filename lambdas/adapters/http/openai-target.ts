/**
 * OpenAI-compatible chat target over HTTP (undici keep-alive pool, eventsource-parser for
 * SSE). Sends the body bytes exactly as given and measures: send, response headers (ack),
 * each content-bearing chunk, last byte. Never rejects: every failure becomes an error
 * result (AIPerf's {code, type, message}). Its error types, how bodies are read in bounded
 * memory (response-body.ts) and what of them is kept: docs/outputs.md#responses-what-is-read-what-is-kept.
 *
 * A key that can rotate (`apiKeySource`): a 401 or 403 makes the source read the key again,
 * once; the request is sent again, once, with a key that changed, and the refusal is the
 * request's result when the key did not change. Never more than two sends per request.
 */
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import { Pool } from 'undici';
import type { ApiKeySource, Clock, TargetClient, TargetRequest } from '../../ports';
import { requestDeadline, type RequestDeadline } from '../request-deadline';
import { watchWire } from '../wire-stamps';
import { createSocketReserve, type SocketReserve, type WarmOptions } from './socket-reserve';
import { clientTlsContext } from './tls-context';
import { plausibleOpenAIUsage } from '../../core/metrics/usage';
import type { ErrorDetails, TargetResult, TokenUsage } from '../../core/types';
import {
  eachChunk,
  errorBodyText,
  errorMessageOf,
  JsonMemberScanner,
  type ChunkSource,
  notOneJsonObject,
  readCapped,
  RESPONSE_LIMITS,
  responseExcerpt,
  selectAnswerMembers,
  withExcerpt,
} from './response-body';
import { ChunkTimes } from '../chunk-times';

export interface OpenAITargetOptions {
  name: string;
  baseUrl: string;
  path?: string;
  /** A fixed bearer key (the CLI's, from the environment). */
  apiKey?: string;
  /** A bearer key that can rotate (a Secrets Manager secret); takes precedence over `apiKey`. */
  apiKeySource?: ApiKeySource;
  timeoutMs: number;
  clock: Clock;
  connections?: number;
  /** Characters of response text kept in an error message (default RESPONSE_LIMITS.excerptChars); 0: none. */
  responseExcerptChars?: number;
  /** Connections can be opened ahead of need (`openAhead`, socket-reserve.ts); without it the pool connects as requests need. */
  reserveConnections?: boolean;
}

export interface OpenAITargetClient extends TargetClient {
  /**
   * Opens connections ahead, so that `connections` are ready for the requests to come (the
   * pool's idle keep-alive connections count); how many by when and at once: WarmOptions
   * (socket-reserve.ts). A no-op unless created with `reserveConnections`.
   */
  openAhead(connections: number, options?: WarmOptions): void;
}

/** Our own (not the response's) text in a message, e.g. a transport error's. */
const MAX_OWN_MESSAGE = 300;

interface StreamChunk {
  choices?: {
    delta?: { content?: unknown; reasoning_content?: unknown; reasoning?: unknown; tool_calls?: unknown };
    finish_reason?: unknown;
  }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  error?: { message?: unknown } | unknown;
  object?: unknown;
  message?: unknown;
}

/** An answer (a chunk or a whole body) that reports an error: an `error` member, or vLLM's `"object": "error"`. */
function carriesError(chunk: StreamChunk): boolean {
  return (chunk.error !== undefined && chunk.error !== null && chunk.error !== false) || chunk.object === 'error';
}

function hasContent(chunk: StreamChunk): boolean {
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) {
    const delta = choice?.delta;
    if (!delta) continue;
    if (typeof delta.content === 'string' && delta.content.length > 0) return true;
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content.length > 0) return true;
    if (typeof delta.reasoning === 'string' && delta.reasoning.length > 0) return true;
    if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) return true;
  }
  return false;
}

function hasFinish(chunk: StreamChunk): boolean {
  return (
    Array.isArray(chunk.choices) &&
    chunk.choices.some((c) => c?.finish_reason !== undefined && c?.finish_reason !== null)
  );
}

/** The target refused the credentials: what a rotated key looks like from here. */
const refused = (result: TargetResult) =>
  result.error?.type === 'HTTPError' && (result.error.code === 401 || result.error.code === 403);

function joinPath(basePath: string, path: string): string {
  return basePath.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, '');
}

export function createOpenAITarget(options: OpenAITargetOptions): OpenAITargetClient {
  const base = new URL(options.baseUrl);
  const connections = options.connections ?? 1024;
  const reserve: SocketReserve | null = options.reserveConnections ? createSocketReserve(new URL(base.origin)) : null;
  const pool = new Pool(base.origin, {
    connections,
    ...(reserve
      ? { connect: reserve.connect }
      : base.protocol === 'https:'
        ? { connect: { secureContext: clientTlsContext() } }
        : {}),
    pipelining: 1,
    keepAliveTimeout: 30_000,
    // The whole-request timeout below is the one that counts; these must not fire first.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  // The pool's idle connections, as its connections less the requests on them: the pool's own
  // count (`pool.stats`) walks every connection, hundreds at a lane's rate, each time it is read.
  let connected = 0;
  pool.on('connect', () => connected++).on('disconnect', () => connected--);
  const target: Target = {
    pool,
    inFlight: 0,
    path: joinPath(base.pathname, options.path ?? '/v1/chat/completions'),
    clock: options.clock,
    timeoutMs: options.timeoutMs,
    excerptChars: options.responseExcerptChars ?? RESPONSE_LIMITS.excerptChars,
  };
  const keys = options.apiKeySource;
  const fixedKey = options.apiKey || undefined;

  /** One request; with a rotating key, sent again once if a refused key turns out to have changed. */
  async function send(request: TargetRequest, signal?: AbortSignal): Promise<TargetResult> {
    if (!keys) return sendWith(target, request, fixedKey, signal);
    const key = keys.current();
    const first = await sendWith(target, request, key, signal);
    if (!refused(first) || signal?.aborted) return first;
    const fresh = await keys.refreshed(key);
    return fresh === null ? first : sendWith(target, request, fresh, signal);
  }

  return {
    name: options.name,
    send,
    openAhead: (count, warm) =>
      reserve?.warm(Math.min(count, connections) - Math.max(0, connected - target.inFlight), warm),
    close: () => {
      reserve?.close();
      return pool.close();
    },
  };
}

/** What every request to one target shares. */
interface Target {
  pool: Pool;
  /** Requests sent and not yet ended: each holds one of the pool's connections (no pipelining). */
  inFlight: number;
  path: string;
  clock: Clock;
  timeoutMs: number;
  excerptChars: number;
}

/** One request's measurements so far: a failure is reported with what was measured before it. */
interface Measurement {
  startNs: bigint;
  ackNs: bigint | null;
  status: number | null;
  usage: TokenUsage | null;
  chunkTimes: ChunkTimes;
}

function failed(t: Target, m: Measurement, error: ErrorDetails): TargetResult {
  return {
    requestStartNs: m.startNs,
    requestAckNs: m.ackNs,
    requestEndNs: t.clock.nowNs(),
    contentChunkNs: m.chunkTimes.toNs(),
    httpStatus: m.status,
    usage: m.usage,
    error,
  };
}

/** The measured send, with the time its bytes were handed to the socket (wire-stamps.ts). */
async function sendWith(
  t: Target,
  request: TargetRequest,
  key: string | undefined,
  signal?: AbortSignal,
): Promise<TargetResult> {
  const wire = watchWire(request.requestId, t.clock);
  const deadline = requestDeadline(t.timeoutMs, signal);
  t.inFlight++;
  try {
    const result = await measure(t, request, key ? `Bearer ${key}` : undefined, deadline, signal);
    return { ...result, requestWireNs: wire.take() };
  } finally {
    t.inFlight--;
    deadline.release();
  }
}

async function measure(
  t: Target,
  request: TargetRequest,
  auth: string | undefined,
  deadline: RequestDeadline,
  signal?: AbortSignal,
): Promise<TargetResult> {
  const headers: Record<string, string> = {
    'content-type': request.contentType,
    'x-request-id': request.requestId,
    'x-correlation-id': request.correlationId,
    accept: request.streaming ? 'text/event-stream' : 'application/json',
  };
  if (auth) headers.authorization = auth;

  const m: Measurement = {
    startNs: t.clock.nowNs(),
    ackNs: null,
    status: null,
    usage: null,
    chunkTimes: new ChunkTimes(),
  };
  try {
    const response = await t.pool.request({
      path: t.path,
      method: 'POST',
      headers,
      body: request.body,
      signal: deadline.signal,
    });
    m.ackNs = t.clock.nowNs();
    const status = response.statusCode;
    m.status = status;
    const contentType = String(response.headers['content-type'] ?? '');
    if (status < 200 || status >= 300) {
      // Redirects are not followed (a replay measures the target it was given): errors too.
      const body = await readCapped(response.body as AsyncIterable<Uint8Array>);
      const location = status >= 300 && status < 400 ? response.headers.location : undefined;
      const said = location !== undefined ? `redirect to ${String(location)}` : errorBodyText(body);
      return failed(t, m, {
        code: status,
        type: 'HTTPError',
        message: withExcerpt(`HTTP ${status}`, said, t.excerptChars),
      });
    }
    if (contentType.includes('text/event-stream')) return await readEventStream(t, m, response.body);
    return await readAnswer(t, m, response.body as AsyncIterable<Uint8Array>, contentType);
  } catch (error) {
    if (deadline.timedOut)
      return failed(t, m, {
        code: 408,
        type: 'TimeoutError',
        message: `no complete response within ${t.timeoutMs} ms`,
      });
    if (signal?.aborted) return failed(t, m, { code: 499, type: 'CancelledError', message: 'request cancelled' });
    const err = error as { code?: string; message?: string; name?: string };
    return failed(t, m, {
      code: null,
      type: 'ConnectionError',
      message: `${err.code ?? err.name ?? 'error'}: ${(err.message ?? String(error)).slice(0, MAX_OWN_MESSAGE)}`,
    });
  }
}

/** A 2xx SSE answer: each content-bearing event's time, usage, and how the stream ended. */
async function readEventStream(t: Target, m: Measurement, body: ChunkSource): Promise<TargetResult> {
  const { chunkTimes } = m;
  const excerptChars = t.excerptChars;
  let done = false;
  let finished = false;
  let streamError: ErrorDetails | null = null;
  let nowNs = m.ackNs as bigint;
  const parser = createParser({
    maxBufferSize: RESPONSE_LIMITS.sseEventMaxChars,
    onError(error: ParseError) {
      if (error.type === 'max-buffer-size-exceeded' && !streamError) {
        streamError = {
          code: null,
          type: 'MalformedStream',
          message: `an SSE event exceeds ${RESPONSE_LIMITS.sseEventMaxChars} characters`,
        };
      }
    },
    onEvent(event: EventSourceMessage) {
      if (streamError) return;
      if (event.data === '[DONE]') {
        done = true;
        return;
      }
      let chunk: StreamChunk;
      try {
        chunk = JSON.parse(event.data) as StreamChunk;
      } catch {
        streamError = {
          code: null,
          type: 'MalformedStream',
          message: `SSE data is not JSON (${event.data.length} chars)`,
        };
        return;
      }
      if (chunk === null || typeof chunk !== 'object') {
        streamError = { code: null, type: 'MalformedStream', message: 'SSE data is not a JSON object' };
        return;
      }
      if (carriesError(chunk)) {
        // The server's message itself (as SageMaker's stream errors), or what it was.
        const said = responseExcerpt(errorMessageOf(chunk) ?? '', excerptChars);
        streamError = {
          code: null,
          type: 'StreamError',
          message: said || withExcerpt('error object in the stream', '', excerptChars),
        };
        return;
      }
      if (hasContent(chunk) && chunkTimes.length < RESPONSE_LIMITS.maxContentChunks) chunkTimes.push(nowNs);
      if (hasFinish(chunk)) finished = true;
      const u = plausibleOpenAIUsage(chunk.usage);
      if (u) m.usage = u;
    },
  });
  const decoder = new TextDecoder();
  await eachChunk(body, (bytes) => {
    // One timestamp per network read: events parsed from the same read arrived together.
    nowNs = t.clock.nowNs();
    parser.feed(decoder.decode(bytes, { stream: true }));
    // A server that reports an error and keeps the stream open must not turn it into a
    // timeout; stopping destroys the body (and that connection).
    return !streamError;
  });
  const endNs = t.clock.nowNs();
  if (streamError) return failed(t, m, streamError);
  if (!done && !finished)
    return failed(t, m, {
      code: null,
      type: 'StreamTruncated',
      message: 'stream ended without [DONE] or a finish_reason',
    });
  return {
    requestStartNs: m.startNs,
    requestAckNs: m.ackNs,
    requestEndNs: endNs,
    contentChunkNs: chunkTimes.toNs(),
    httpStatus: m.status,
    usage: m.usage,
    error: null,
  };
}

/** A whole 2xx answer: scanned as it arrives, only `usage` and `error` kept. */
async function readAnswer(
  t: Target,
  m: Measurement,
  body: AsyncIterable<Uint8Array>,
  contentType: string,
): Promise<TargetResult> {
  const scanner = new JsonMemberScanner(selectAnswerMembers, 2);
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    scanner.feed(chunk);
  }
  const endNs = t.clock.nowNs();
  const scan = scanner.end();
  const malformed = notOneJsonObject(scan, bytes, contentType);
  if (malformed !== null) return failed(t, m, { code: m.status, type: 'MalformedResponse', message: malformed });
  const answer = (scan.skeletons[0] ?? {}) as StreamChunk;
  if (carriesError(answer)) {
    return failed(t, m, {
      code: m.status,
      type: 'ResponseError',
      message: withExcerpt(`HTTP ${m.status} with an error object`, errorMessageOf(answer) ?? '', t.excerptChars),
    });
  }
  m.usage = plausibleOpenAIUsage(answer.usage);
  return {
    requestStartNs: m.startNs,
    requestAckNs: m.ackNs,
    requestEndNs: endNs,
    contentChunkNs: [],
    httpStatus: m.status,
    usage: m.usage,
    error: null,
  };
}
