/**
 * A bundled mock of the SageMaker runtime API (REST JSON, as the AWS SDK v3 speaks it), for
 * the demo and the tests: `POST /endpoints/<name>/invocations` (InvokeEndpoint) and
 * `POST /endpoints/<name>/invocations-response-stream` (InvokeEndpointWithResponseStream,
 * AWS event-stream framing made with the SDK's own codec, `PayloadPart` events, and
 * `ModelStreamError` / `InternalStreamFailure` exception events on demand).
 *
 * Point the SDK at it with `AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME=<url>` (any static
 * credentials: the signature is checked for shape, not verified).
 *
 * Models behind the endpoint (`model`, default `auto` = by content type):
 * - chat: JSON with `messages` -> an OpenAI chat.completion; streamed as SSE `data:` chunks
 *   (a role chunk, one chunk per token, a usage chunk, `[DONE]`), or as TGI token events
 *   (`streamFormat: 'tgi'`) or LMI-style JSON lines (`'jsonlines'`);
 * - tabular: `text/csv` -> one score per input row (CSV), JSON `{"instances": [...]}` ->
 *   `{"predictions": [...]}` (any other JSON: the whole body is one instance); Accept
 *   `text/csv` / `application/json` picks the output format. Scores derive from the bytes
 *   of each row (SHA-256), so replaying the same input gives the same output;
 * - anything else (binary): `{"sha256": ..., "bytes": n}` of the body.
 *
 * Timing as mock-server.ts: token k at arrival + ttft + k*itl on an absolute timeline (a
 * non-streamed chat answer at the last token's time, other answers at arrival + ttft), with
 * optional precise timers (timer, then a setImmediate spin over the last 1.5 ms).
 *
 * Errors: `errorRate` x `errorType`, or per request through the custom attributes the
 * endpoint passes to its model (`X-Amzn-SageMaker-Custom-Attributes:
 * mock-error=throttling;mock-status=503`, also `mock-ttft-ms`, `mock-itl-ms`, `mock-tokens`,
 * `mock-stream-format`, `mock-split-parts=1`).
 * Error responses carry `x-amzn-errortype` and a JSON body with `__type` and `message`
 * (ModelError: `OriginalStatusCode`, `OriginalMessage`, `LogStreamArn`, status 424).
 * Stream error types on InvokeEndpoint answer normally (they cannot happen there).
 *
 * Standalone: `node --import tsx lambdas/local/mock-sagemaker.ts --port 0 ...` prints one line
 * `{"url":"http://127.0.0.1:PORT"}` once listening and stops on SIGTERM/SIGINT.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { Command, Option } from 'commander';
import { seededRandom } from '../core/random';
import { commonMockOptions, commonMockSettings, countWords, mockRuntime, numberArg, serveMock, serveUntilSignal, type CommonMockArgs, type ReceivedRequest } from './mock-common';
import { usageErrors } from './cli-usage';

export const MOCK_ERROR_TYPES = ['model', 'throttling', 'validation', 'unavailable', 'internal', 'not-ready', 'dependency', 'stream', 'stream-internal'] as const;
export type MockSageMakerErrorType = (typeof MOCK_ERROR_TYPES)[number];
export const MOCK_MODELS = ['auto', 'chat', 'tabular'] as const;
export type MockSageMakerModel = (typeof MOCK_MODELS)[number];
export const MOCK_STREAM_FORMATS = ['openai', 'tgi', 'jsonlines'] as const;
export type MockStreamFormat = (typeof MOCK_STREAM_FORMATS)[number];

export interface MockSageMakerOptions {
  host?: string;
  port?: number;
  ttftMs?: number;
  itlMs?: number;
  outputTokens?: number;
  /** Fraction of requests answered with `errorType`. */
  errorRate?: number;
  errorType?: MockSageMakerErrorType;
  /** The model's own status inside a ModelError (OriginalStatusCode). Default 500. */
  modelErrorStatus?: number;
  /** Tokens streamed before a stream error. Default: half the output. */
  streamErrorAfter?: number;
  seed?: number;
  model?: MockSageMakerModel;
  streamFormat?: MockStreamFormat;
  /** Split every streamed event across two PayloadParts (clients must buffer across parts). */
  splitParts?: boolean;
  /** Endpoint names that exist (others: ValidationError); any name when absent. */
  endpoints?: string[];
  /** Refuse requests without a SigV4 Authorization header (403). Default true. */
  requireAuth?: boolean;
  logFile?: string;
  recordRequests?: boolean;
  preciseTimers?: boolean;
}

/** A request as the mock received it (mock-common.ts). */
export type ReceivedSageMakerRequest = ReceivedRequest;

export interface MockSageMaker {
  url: string;
  port: number;
  requests: ReceivedSageMakerRequest[];
  close(): Promise<void>;
}

const ROUTE = /^\/endpoints\/([^/]+)\/(invocations|invocations-response-stream)$/;
const ACCOUNT = '123456789012';
const ERROR_NAMESPACE = ':http://internal.amazon.com/coral/com.amazon.sagemaker.runtime/';
const WORDS = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit'];
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream message: a PayloadPart with these bytes. */
export function encodePayloadPart(bytes: Uint8Array): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'event' },
      ':event-type': { type: 'string', value: 'PayloadPart' },
      ':content-type': { type: 'string', value: 'application/octet-stream' },
    },
    body: bytes,
  });
}

/** One event-stream exception message (a modeled error of the ResponseStream union). */
export function encodeStreamException(type: 'ModelStreamError' | 'InternalStreamFailure', payload: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'exception' },
      ':exception-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

interface ServiceError {
  status: number;
  type: string;
  body: Record<string, unknown>;
}

function serviceError(status: number, type: string, message: string, extra: Record<string, unknown> = {}): ServiceError {
  return { status, type, body: { __type: type, message, ...extra } };
}

function modelError(endpoint: string, originalStatus: number, originalMessage: string): ServiceError {
  const kind = originalStatus >= 500 ? 'server' : 'client';
  const message = `Received ${kind} error (${originalStatus}) from primary with message "${originalMessage}". See https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#logEventViewer:group=/aws/sagemaker/Endpoints/${endpoint} in account ${ACCOUNT} for more information.`;
  return {
    status: 424,
    type: 'ModelError',
    body: {
      __type: 'ModelError',
      ErrorCode: kind === 'server' ? 'INTERNAL_FAILURE_FROM_MODEL' : 'CLIENT_ERROR_FROM_MODEL',
      LogStreamArn: `arn:aws:logs:us-east-1:${ACCOUNT}:log-group:/aws/sagemaker/Endpoints/${endpoint}`,
      message,
      OriginalMessage: originalMessage,
      OriginalStatusCode: originalStatus,
    },
  };
}

/** The request-level error for an injected error type; null for the stream-only types. */
function injectedError(type: MockSageMakerErrorType, endpoint: string, modelStatus: number): ServiceError | null {
  switch (type) {
    case 'model':
      return modelError(endpoint, modelStatus, 'injected failure');
    case 'throttling':
      // AWS's common errors: ThrottlingException is an HTTP 400.
      return serviceError(400, 'ThrottlingException', 'Rate exceeded');
    case 'validation':
      return serviceError(400, 'ValidationError', 'injected validation error');
    case 'unavailable':
      return serviceError(503, 'ServiceUnavailable', 'injected service unavailable');
    case 'internal':
      return serviceError(500, 'InternalFailure', 'injected internal failure');
    case 'not-ready':
      return serviceError(429, 'ModelNotReadyException', 'injected: model not ready');
    case 'dependency':
      return serviceError(530, 'InternalDependencyException', 'injected internal dependency failure');
    default:
      return null;
  }
}

/** `mock-error=throttling;mock-status=503` (`;` or `,` separated) from the custom attributes. */
export function parseMockAttributes(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of (raw ?? '').split(/[;,]/)) {
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    const key = item.slice(0, eq).trim().toLowerCase();
    if (key.startsWith('mock-')) out[key] = item.slice(eq + 1).trim();
  }
  return out;
}

/** A deterministic score in [0, 1) for a row: the first 32 bits of its SHA-256. */
export function rowScore(bytes: Uint8Array | string): number {
  return createHash('sha256').update(bytes).digest().readUInt32BE(0) / 2 ** 32;
}

const score6 = (bytes: Uint8Array | string) => Number(rowScore(bytes).toFixed(6));


const baseType = (contentType: string | undefined) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();
const isJsonType = (type: string) => type === 'application/json' || type.endsWith('+json');

interface ModelAnswer {
  contentType: string;
  body: Buffer;
}

/** The tabular model: CSV rows or JSON instances -> one deterministic score each. */
function tabularAnswer(body: Buffer, inputType: string, accept: string, parsed: unknown): ModelAnswer {
  let scores: number[];
  if (inputType === 'text/csv') {
    const rows = body.toString('utf8').split(/\r?\n/);
    if (rows.length > 0 && rows[rows.length - 1] === '') rows.pop();
    scores = rows.map((row) => score6(row));
  } else {
    const instances = parsed && typeof parsed === 'object' && Array.isArray((parsed as { instances?: unknown }).instances) ? ((parsed as { instances: unknown[] }).instances) : null;
    scores = instances ? instances.map((instance) => score6(JSON.stringify(instance))) : [score6(body)];
  }
  const wantCsv = accept === 'text/csv' || (accept !== 'application/json' && inputType === 'text/csv');
  if (wantCsv) return { contentType: 'text/csv', body: Buffer.from(scores.map(String).join('\n') + '\n') };
  return { contentType: 'application/json', body: Buffer.from(JSON.stringify({ predictions: scores })) };
}

function binaryAnswer(body: Buffer): ModelAnswer {
  return { contentType: 'application/json', body: Buffer.from(JSON.stringify({ sha256: createHash('sha256').update(body).digest('hex'), bytes: body.length })) };
}

export async function startMockSageMaker(options: MockSageMakerOptions = {}): Promise<MockSageMaker> {
  const defaults = { ttftMs: options.ttftMs ?? 20, itlMs: options.itlMs ?? 5, outputTokens: options.outputTokens ?? 16 };
  const errorRate = options.errorRate ?? 0;
  const errorType = options.errorType ?? 'model';
  const modelErrorStatus = options.modelErrorStatus ?? 500;
  const modelKind = options.model ?? 'auto';
  const streamFormat = options.streamFormat ?? 'openai';
  const requireAuth = options.requireAuth ?? true;
  const endpoints = options.endpoints ? new Set(options.endpoints) : null;
  const random = seededRandom(options.seed ?? 42);
  const runtime = mockRuntime(options);
  const { scheduler: timers } = runtime;
  let sequence = 0;

  const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
    runtime.receive(
      req,
      ({ arrivalNs, headers, body }) => ({
        arrival_ns: arrivalNs.toString(),
        method: req.method,
        path: req.url,
        headers,
        body_bytes: body.length,
        body_sha256: createHash('sha256').update(body).digest('hex'),
        body_base64: body.toString('base64'),
      }),
      ({ headers, body }, arrivalMs) => respond(req, res, headers, body, arrivalMs),
    );
  });

  function sendError(res: ServerResponse, error: ServiceError, requestId: string): void {
    const text = JSON.stringify(error.body);
    res.writeHead(error.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'x-amzn-errortype': error.type + ERROR_NAMESPACE,
      'x-amzn-requestid': requestId,
    });
    res.end(text);
  }

  function respond(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, body: Buffer, arrivalMs: number): void {
    const requestId = randomUUID();
    const path = (req.url ?? '').split('?')[0] ?? '';
    const match = ROUTE.exec(path);
    if (req.method !== 'POST' || !match) {
      sendError(res, { status: 404, type: 'UnknownOperationException', body: { __type: 'UnknownOperationException', message: `no operation for ${req.method} ${path}` } }, requestId);
      return;
    }
    const endpoint = decodeURIComponent(match[1]!);
    const streaming = match[2] === 'invocations-response-stream';
    if (requireAuth && !/^AWS4-HMAC-SHA256 Credential=\S+\/\d{8}\/[a-z0-9-]+\/sagemaker\/aws4_request, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/.test(headers.authorization ?? '')) {
      sendError(res, { status: 403, type: 'MissingAuthenticationTokenException', body: { __type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' } }, requestId);
      return;
    }
    if (endpoints && !endpoints.has(endpoint)) {
      sendError(res, serviceError(400, 'ValidationError', `Endpoint ${endpoint} of account ${ACCOUNT} not found.`), requestId);
      return;
    }
    const attributes = parseMockAttributes(headers['x-amzn-sagemaker-custom-attributes']);
    const numberAttr = (key: string, fallback: number) => {
      const v = Number(attributes[key]);
      return attributes[key] !== undefined && Number.isFinite(v) && v >= 0 ? v : fallback;
    };
    const ttftMs = numberAttr('mock-ttft-ms', defaults.ttftMs);
    const itlMs = numberAttr('mock-itl-ms', defaults.itlMs);
    const outputTokens = Math.max(1, Math.round(numberAttr('mock-tokens', defaults.outputTokens)));
    let injected: MockSageMakerErrorType | null = null;
    if (attributes['mock-error'] && (MOCK_ERROR_TYPES as readonly string[]).includes(attributes['mock-error'])) injected = attributes['mock-error'] as MockSageMakerErrorType;
    else if (errorRate > 0 && random() < errorRate) injected = errorType;
    const requestError = injected ? injectedError(injected, endpoint, numberAttr('mock-status', modelErrorStatus)) : null;
    if (requestError) {
      sendError(res, requestError, requestId);
      return;
    }
    const streamError = streaming && (injected === 'stream' || injected === 'stream-internal') ? injected : null;

    const inputType = baseType(headers['content-type']);
    const accept = baseType(streaming ? headers['x-amzn-sagemaker-accept'] : headers.accept);
    let parsed: unknown = undefined;
    if (isJsonType(inputType)) {
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        sendError(res, modelError(endpoint, 400, 'request body is not JSON'), requestId);
        return;
      }
    }
    const messages = parsed && typeof parsed === 'object' ? (parsed as { messages?: unknown }).messages : undefined;
    const isChat = Array.isArray(messages) && modelKind !== 'tabular';
    if (modelKind === 'chat' && !isChat) {
      sendError(res, modelError(endpoint, 400, 'expected a JSON body with messages'), requestId);
      return;
    }
    const variant = headers['x-amzn-sagemaker-target-variant'] ?? 'AllTraffic';
    const dueMs = (k: number) => arrivalMs + ttftMs + k * itlMs;
    const at = (due: number, fn: () => void) => timers.at(due, fn);

    if (!isChat) {
      const answer = isJsonType(inputType) || inputType === 'text/csv' ? tabularAnswer(body, inputType, accept, parsed) : binaryAnswer(body);
      at(dueMs(0), () => {
        if (!streaming) {
          res.writeHead(200, { 'content-type': answer.contentType, 'content-length': answer.body.length, 'x-amzn-invoked-production-variant': variant, 'x-amzn-requestid': requestId });
          res.end(answer.body);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-sagemaker-content-type': answer.contentType, 'x-amzn-invoked-production-variant': variant, 'x-amzn-requestid': requestId });
        if (streamError) res.end(streamErrorMessage(streamError));
        else res.end(encodePayloadPart(answer.body));
      });
      return;
    }

    const payload = parsed as { max_tokens?: unknown; max_completion_tokens?: unknown; model?: unknown };
    const cap = [payload.max_tokens, payload.max_completion_tokens].find((v): v is number => typeof v === 'number' && v >= 1);
    const n = Math.max(1, Math.min(outputTokens, cap ?? outputTokens));
    const promptTokens = countWords(messages);
    const id = `chatcmpl-sagemaker-mock-${++sequence}`;
    const model = typeof payload.model === 'string' ? payload.model : 'mock-model';
    const usage = { prompt_tokens: promptTokens, completion_tokens: n, total_tokens: promptTokens + n };
    const word = (k: number) => (k === 0 ? '' : ' ') + WORDS[k % WORDS.length];
    const fullText = Array.from({ length: n }, (_, k) => word(k)).join('');

    if (!streaming) {
      at(dueMs(n - 1), () => {
        const text = JSON.stringify({ id, object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: fullText }, finish_reason: 'stop' }], usage });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-amzn-invoked-production-variant': variant, 'x-amzn-requestid': requestId });
        res.end(text);
      });
      return;
    }

    const format = (MOCK_STREAM_FORMATS as readonly string[]).includes(attributes['mock-stream-format'] ?? '') ? (attributes['mock-stream-format'] as MockStreamFormat) : streamFormat;
    const splitParts = attributes['mock-split-parts'] !== undefined ? attributes['mock-split-parts'] === '1' || attributes['mock-split-parts'] === 'true' : (options.splitParts ?? false);
    const modelContentType = format === 'jsonlines' ? 'application/jsonlines' : 'text/event-stream';
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-sagemaker-content-type': modelContentType, 'x-amzn-invoked-production-variant': variant, 'x-amzn-requestid': requestId });
    // Headers leave now, as a container's do when it starts streaming (not with the first token).
    res.flushHeaders();
    let closed = false;
    res.on('close', () => (closed = true));
    /** The model's bytes as PayloadParts: one per event, or each event cut in two. */
    const frames = (text: string): Buffer => {
      const bytes = Buffer.from(text);
      if (!splitParts || bytes.length < 2) return Buffer.from(encodePayloadPart(bytes));
      const cut = Math.floor(bytes.length / 2);
      return Buffer.concat([encodePayloadPart(bytes.subarray(0, cut)), encodePayloadPart(bytes.subarray(cut))]);
    };
    const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const tokenEvent = (k: number): string => {
      const last = k === n - 1;
      if (format === 'openai') {
        let out = chunk({ content: word(k) }, last ? 'stop' : null);
        if (last) out += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [], usage })}\n\ndata: [DONE]\n\n`;
        return out;
      }
      const token = { id: 1000 + (k % WORDS.length), text: word(k), logprob: -0.25, special: false };
      const event = { token, generated_text: last ? fullText : null, details: last ? { finish_reason: 'length', generated_tokens: n, seed: null } : null };
      return format === 'tgi' ? `data:${JSON.stringify(event)}\n\n` : `${JSON.stringify(event)}\n`;
    };
    if (format === 'openai') res.write(frames(chunk({ role: 'assistant' }, null)));
    const errorAfter = Math.min(n, Math.max(0, options.streamErrorAfter ?? Math.floor(n / 2)));
    const writeToken = (k: number) => {
      if (closed) return;
      if (streamError && k === errorAfter) {
        res.end(streamErrorMessage(streamError));
        return;
      }
      const data = frames(tokenEvent(k));
      if (k === n - 1) {
        res.end(data);
        return;
      }
      res.write(data);
      at(dueMs(k + 1), () => writeToken(k + 1));
    };
    at(dueMs(0), () => writeToken(0));
  }

  function streamErrorMessage(type: 'stream' | 'stream-internal'): Uint8Array {
    return type === 'stream'
      ? encodeStreamException('ModelStreamError', { Message: 'injected model stream error', ErrorCode: 'ModelStreamError' })
      : encodeStreamException('InternalStreamFailure', { Message: 'injected internal stream failure' });
  }

  return serveMock(server, options, runtime);
}

/** The standalone process: arguments as after `mock-sagemaker`. */
export async function runMockSageMakerCli(args: string[]): Promise<void> {
  const program = commonMockOptions(
    usageErrors(new Command('mock-sagemaker'), 'mock-sagemaker').description(
      'mock SageMaker runtime (InvokeEndpoint, InvokeEndpointWithResponseStream) for capture-replay; point the SDK at it with AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME',
    ),
    {
      port: 8080,
      ttftHelp: 'time to first token (first answer byte for non-chat models)',
      errorRateHelp: 'fraction of requests answered with --error-type',
      logHelp: 'append one JSON line per received request (arrival time, path, headers, body)',
    },
  )
    .addOption(new Option('--error-type <type>', 'injected error').choices([...MOCK_ERROR_TYPES]).default('model'))
    .option('--model-error-status <status>', "the model's status inside a ModelError", numberArg('--model-error-status', 100, 599), 500)
    .option('--stream-error-after <n>', 'tokens streamed before a stream error (default: half)', numberArg('--stream-error-after', 0))
    .addOption(new Option('--model <kind>', 'the model behind every endpoint (auto: by content type)').choices([...MOCK_MODELS]).default('auto'))
    .addOption(new Option('--stream-format <format>', 'how the chat model streams').choices([...MOCK_STREAM_FORMATS]).default('openai'))
    .option('--split-parts', 'split every streamed event across two PayloadParts', false)
    .option('--endpoint <name>', 'an endpoint that exists (repeat; default: any name)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--no-require-auth', 'accept requests without a SigV4 Authorization header');
  program.parse(args, { from: 'user' });
  const o = program.opts<
    CommonMockArgs & {
      errorType: MockSageMakerErrorType;
      modelErrorStatus: number;
      streamErrorAfter?: number;
      model: MockSageMakerModel;
      streamFormat: MockStreamFormat;
      splitParts: boolean;
      endpoint?: string[];
      requireAuth: boolean;
    }
  >();
  const server = await startMockSageMaker({
    ...commonMockSettings(o),
    errorType: o.errorType,
    modelErrorStatus: Math.round(o.modelErrorStatus),
    model: o.model,
    streamFormat: o.streamFormat,
    splitParts: o.splitParts,
    requireAuth: o.requireAuth,
    ...(o.streamErrorAfter !== undefined ? { streamErrorAfter: Math.round(o.streamErrorAfter) } : {}),
    ...(o.endpoint ? { endpoints: o.endpoint } : {}),
  });
  serveUntilSignal(server);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runMockSageMakerCli(process.argv.slice(2));
}
