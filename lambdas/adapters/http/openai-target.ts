/**
 * OpenAI-compatible chat target over HTTP (undici keep-alive pool, eventsource-parser for
 * SSE). Sends the body bytes exactly as given and measures: send, response headers (ack),
 * each content-bearing chunk, last byte. Never rejects: every failure becomes an error
 * result (AIPerf's {code, type, message}).
 *
 * Error types: HTTPError (code = status), TimeoutError (code 408: the whole request ran out
 * of --timeout; no server sent a 408), ConnectionError (refused/reset, code null),
 * MalformedStream / StreamError (bad SSE data or an error object in the stream, code null),
 * StreamTruncated (the stream ended with neither [DONE] nor a finish_reason),
 * MalformedResponse (a non-streaming 2xx body that is not JSON).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Pool } from 'undici';
import type { Clock, TargetClient, TargetRequest } from '../../ports';
import type { ErrorDetails, TargetResult, TokenUsage } from '../../core/types';

export interface OpenAITargetOptions {
  name: string;
  baseUrl: string;
  path?: string;
  apiKey?: string;
  timeoutMs: number;
  clock: Clock;
  connections?: number;
}

const MAX_ERROR_EXCERPT = 300;

interface StreamChunk {
  choices?: { delta?: { content?: unknown; reasoning_content?: unknown; reasoning?: unknown; tool_calls?: unknown }; finish_reason?: unknown }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  error?: { message?: unknown } | unknown;
}

function usageOf(raw: StreamChunk['usage']): TokenUsage | null {
  if (!raw || typeof raw !== 'object') return null;
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
  return { promptTokens: count(raw.prompt_tokens), completionTokens: count(raw.completion_tokens) };
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
  return Array.isArray(chunk.choices) && chunk.choices.some((c) => c?.finish_reason !== undefined && c?.finish_reason !== null);
}

function joinPath(basePath: string, path: string): string {
  return basePath.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, '');
}

export function createOpenAITarget(options: OpenAITargetOptions): TargetClient {
  const base = new URL(options.baseUrl);
  const path = joinPath(base.pathname, options.path ?? '/v1/chat/completions');
  const pool = new Pool(base.origin, {
    connections: options.connections ?? 1024,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    // The whole-request timeout below is the one that counts; these must not fire first.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const { clock } = options;
  const auth = options.apiKey ? `Bearer ${options.apiKey}` : undefined;

  async function send(request: TargetRequest, signal?: AbortSignal): Promise<TargetResult> {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      'content-type': request.contentType,
      'x-request-id': request.requestId,
      'x-correlation-id': request.correlationId,
      accept: request.streaming ? 'text/event-stream' : 'application/json',
    };
    if (auth) headers.authorization = auth;

    const chunkTimes: bigint[] = [];
    let usage: TokenUsage | null = null;
    let ackNs: bigint | null = null;
    let status: number | null = null;
    const startNs = clock.nowNs();
    const fail = (error: ErrorDetails): TargetResult => ({
      requestStartNs: startNs,
      requestAckNs: ackNs,
      requestEndNs: clock.nowNs(),
      contentChunkNs: chunkTimes,
      httpStatus: status,
      usage,
      error,
    });
    try {
      const response = await pool.request({ path, method: 'POST', headers, body: request.body, signal: combined });
      ackNs = clock.nowNs();
      status = response.statusCode;
      const contentType = String(response.headers['content-type'] ?? '');
      if (status >= 400) {
        const text = await response.body.text();
        return fail({ code: status, type: 'HTTPError', message: `HTTP ${status}: ${text.slice(0, MAX_ERROR_EXCERPT)}` });
      }
      if (contentType.includes('text/event-stream')) {
        let done = false;
        let finished = false;
        let streamError: ErrorDetails | null = null;
        let nowNs = ackNs;
        const parser = createParser({
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
              streamError = { code: null, type: 'MalformedStream', message: `SSE data is not JSON (${event.data.length} chars)` };
              return;
            }
            if (chunk.error) {
              const message = typeof chunk.error === 'object' && chunk.error !== null && 'message' in chunk.error ? String((chunk.error as { message: unknown }).message) : String(chunk.error);
              streamError = { code: null, type: 'StreamError', message: message.slice(0, MAX_ERROR_EXCERPT) };
              return;
            }
            if (hasContent(chunk)) chunkTimes.push(nowNs);
            if (hasFinish(chunk)) finished = true;
            const u = usageOf(chunk.usage);
            if (u) usage = u;
          },
        });
        const decoder = new TextDecoder();
        for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
          // One timestamp per network read: events parsed from the same read arrived together.
          nowNs = clock.nowNs();
          parser.feed(decoder.decode(bytes, { stream: true }));
          // A server that reports an error and keeps the stream open must not turn it into a
          // timeout; leaving the loop destroys the body (and that connection).
          if (streamError) break;
        }
        const endNs = clock.nowNs();
        if (streamError) return fail(streamError);
        if (!done && !finished) return fail({ code: null, type: 'StreamTruncated', message: 'stream ended without [DONE] or a finish_reason' });
        return { requestStartNs: startNs, requestAckNs: ackNs, requestEndNs: endNs, contentChunkNs: chunkTimes, httpStatus: status, usage, error: null };
      }
      const text = await response.body.text();
      const endNs = clock.nowNs();
      let parsed: StreamChunk;
      try {
        parsed = JSON.parse(text) as StreamChunk;
      } catch {
        return fail({ code: status, type: 'MalformedResponse', message: `response is not JSON (${text.length} chars, content-type ${contentType || 'none'})` });
      }
      usage = usageOf(parsed.usage);
      return { requestStartNs: startNs, requestAckNs: ackNs, requestEndNs: endNs, contentChunkNs: [], httpStatus: status, usage, error: null };
    } catch (error) {
      if (timeout.aborted) return fail({ code: 408, type: 'TimeoutError', message: `no complete response within ${options.timeoutMs} ms` });
      if (signal?.aborted) return fail({ code: 499, type: 'CancelledError', message: 'request cancelled' });
      const err = error as { code?: string; message?: string; name?: string };
      return fail({ code: null, type: 'ConnectionError', message: `${err.code ?? err.name ?? 'error'}: ${(err.message ?? String(error)).slice(0, MAX_ERROR_EXCERPT)}` });
    }
  }

  return {
    name: options.name,
    send,
    close: () => pool.close(),
  };
}
