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
 * Its models (chat, tabular, binary), timing, slots and error injection (per request through
 * the custom attributes `mock-error=...`) are in docs/sagemaker-targets.md#the-bundled-mock.
 * Standalone: `capture-replay mock-sagemaker ...` (options in cli.ts) prints one line
 * `{"url":"http://127.0.0.1:PORT"}` once listening and stops on SIGTERM/SIGINT.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { seededRandom } from '../core/random';
import {
  buildMockSageMakerProgram,
  MOCK_ERROR_TYPES,
  MOCK_STREAM_FORMATS,
  runStandalone,
  type MockSageMakerErrorType,
  type MockSageMakerModel,
  type MockStreamFormat,
} from './cli';
import {
  countWords,
  mockRuntime,
  MOCK_WORDS,
  serveMock,
  type MockGenerationOptions,
  type MockHandle,
  type MockRuntime,
  type ReceivedRequest,
} from './common';

export {
  MOCK_ERROR_TYPES,
  MOCK_MODELS,
  MOCK_STREAM_FORMATS,
  type MockSageMakerErrorType,
  type MockSageMakerModel,
  type MockStreamFormat,
} from './cli';

export interface MockSageMakerOptions extends MockGenerationOptions {
  /** What `errorRate` of the requests are answered with. Default `model`. */
  errorType?: MockSageMakerErrorType;
  /** The model's own status inside a ModelError (OriginalStatusCode). Default 500. */
  modelErrorStatus?: number;
  /** Tokens streamed before a stream error. Default: half the output. */
  streamErrorAfter?: number;
  model?: MockSageMakerModel;
  streamFormat?: MockStreamFormat;
  /** Split every streamed event across two PayloadParts (clients must buffer across parts). */
  splitParts?: boolean;
  /** Endpoint names that exist (others: ValidationError); any name when absent. */
  endpoints?: string[];
  /** Refuse requests without a SigV4 Authorization header (403). Default true. */
  requireAuth?: boolean;
}

/** A request as the mock received it (common.ts). */
export type ReceivedSageMakerRequest = ReceivedRequest;

export type MockSageMaker = MockHandle;

const ROUTE = /^\/endpoints\/([^/]+)\/(invocations|invocations-response-stream)$/;
const ACCOUNT = '123456789012';
const ERROR_NAMESPACE = ':http://internal.amazon.com/coral/com.amazon.sagemaker.runtime/';
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

/** One event-stream exception message (a modeled error of the ResponseStream union, or any other type a test needs). */
export function encodeStreamException(type: string, payload: Record<string, unknown>): Uint8Array {
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

function serviceError(
  status: number,
  type: string,
  message: string,
  extra: Record<string, unknown> = {},
): ServiceError {
  return { status, type, body: { __type: type, message, ...extra } };
}

function modelError(endpoint: string, originalStatus: number, originalMessage: string): ServiceError {
  const kind = originalStatus >= 500 ? 'server' : 'client';
  const message =
    `Received ${kind} error (${originalStatus}) from primary with message "${originalMessage}". See ` +
    `https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#logEventViewer:` +
    `group=/aws/sagemaker/Endpoints/${endpoint} in account ${ACCOUNT} for more information.`;
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
    const instances =
      parsed && typeof parsed === 'object' && Array.isArray((parsed as { instances?: unknown }).instances)
        ? (parsed as { instances: unknown[] }).instances
        : null;
    scores = instances ? instances.map((instance) => score6(JSON.stringify(instance))) : [score6(body)];
  }
  const wantCsv = accept === 'text/csv' || (accept !== 'application/json' && inputType === 'text/csv');
  if (wantCsv) return { contentType: 'text/csv', body: Buffer.from(scores.map(String).join('\n') + '\n') };
  return { contentType: 'application/json', body: Buffer.from(JSON.stringify({ predictions: scores })) };
}

function binaryAnswer(body: Buffer): ModelAnswer {
  return {
    contentType: 'application/json',
    body: Buffer.from(JSON.stringify({ sha256: createHash('sha256').update(body).digest('hex'), bytes: body.length })),
  };
}

function streamErrorMessage(type: 'stream' | 'stream-internal'): Uint8Array {
  return type === 'stream'
    ? encodeStreamException('ModelStreamError', {
        Message: 'injected model stream error',
        ErrorCode: 'ModelStreamError',
      })
    : encodeStreamException('InternalStreamFailure', { Message: 'injected internal stream failure' });
}

const SIGV4_AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=\S+\/\d{8}\/[a-z0-9-]+\/sagemaker\/aws4_request, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/;

/** The endpoint and operation a request calls, or the service's refusal (no such operation, no signature, no such endpoint). */
function route(
  req: IncomingMessage,
  headers: Record<string, string>,
  requireAuth: boolean,
  endpoints: Set<string> | null,
): { endpoint: string; streaming: boolean } | ServiceError {
  const path = (req.url ?? '').split('?')[0] ?? '';
  const match = ROUTE.exec(path);
  if (req.method !== 'POST' || !match)
    return {
      status: 404,
      type: 'UnknownOperationException',
      body: { __type: 'UnknownOperationException', message: `no operation for ${req.method} ${path}` },
    };
  const endpoint = decodeURIComponent(match[1]!);
  if (requireAuth && !SIGV4_AUTHORIZATION.test(headers.authorization ?? ''))
    return {
      status: 403,
      type: 'MissingAuthenticationTokenException',
      body: { __type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' },
    };
  if (endpoints && !endpoints.has(endpoint))
    return serviceError(400, 'ValidationError', `Endpoint ${endpoint} of account ${ACCOUNT} not found.`);
  return { endpoint, streaming: match[2] === 'invocations-response-stream' };
}

/** A number from the custom attributes (`mock-ttft-ms=5`), or the fallback when absent or not a number >= 0. */
function numberAttribute(attributes: Record<string, string>, key: string, fallback: number): number {
  const v = Number(attributes[key]);
  return attributes[key] !== undefined && Number.isFinite(v) && v >= 0 ? v : fallback;
}

/** A chat request the model generates for: its identity, length, usage and token timeline. */
interface ChatGeneration {
  id: string;
  model: string;
  n: number;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  word: (k: number) => string;
  fullText: string;
  dueMs: (k: number) => number;
}

/** Where and how an answer goes out. */
interface Reply {
  res: ServerResponse;
  requestId: string;
  variant: string;
  at: (due: number, fn: () => void) => void;
}

function answerNonChat(
  reply: Reply,
  answer: ModelAnswer,
  streaming: boolean,
  streamError: 'stream' | 'stream-internal' | null,
  dueMs: number,
): void {
  const { res, requestId, variant } = reply;
  reply.at(dueMs, () => {
    if (!streaming) {
      res.writeHead(200, {
        'content-type': answer.contentType,
        'content-length': answer.body.length,
        'x-amzn-invoked-production-variant': variant,
        'x-amzn-requestid': requestId,
      });
      res.end(answer.body);
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-sagemaker-content-type': answer.contentType,
      'x-amzn-invoked-production-variant': variant,
      'x-amzn-requestid': requestId,
    });
    if (streamError) res.end(streamErrorMessage(streamError));
    else res.end(encodePayloadPart(answer.body));
  });
}

function answerChatWhole(reply: Reply, g: ChatGeneration): void {
  const { res, requestId, variant } = reply;
  reply.at(g.dueMs(g.n - 1), () => {
    const text = JSON.stringify({
      id: g.id,
      object: 'chat.completion',
      model: g.model,
      choices: [{ index: 0, message: { role: 'assistant', content: g.fullText }, finish_reason: 'stop' }],
      usage: g.usage,
    });
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'x-amzn-invoked-production-variant': variant,
      'x-amzn-requestid': requestId,
    });
    res.end(text);
  });
}

/** The model's bytes for token k in `format`: an OpenAI chunk (with usage and [DONE] after the last), a TGI event or a JSON line. */
function tokenEvent(g: ChatGeneration, format: MockStreamFormat, k: number): string {
  const last = k === g.n - 1;
  if (format === 'openai') {
    let out = openAiChunk(g, { content: g.word(k) }, last ? 'stop' : null);
    if (last)
      out +=
        `data: ` +
        JSON.stringify({ id: g.id, object: 'chat.completion.chunk', model: g.model, choices: [], usage: g.usage }) +
        `\n\ndata: [DONE]\n\n`;
    return out;
  }
  const token = { id: 1000 + (k % MOCK_WORDS.length), text: g.word(k), logprob: -0.25, special: false };
  const event = {
    token,
    generated_text: last ? g.fullText : null,
    details: last ? { finish_reason: 'length', generated_tokens: g.n, seed: null } : null,
  };
  return format === 'tgi' ? `data:${JSON.stringify(event)}\n\n` : `${JSON.stringify(event)}\n`;
}

function openAiChunk(g: ChatGeneration, delta: object, finish: string | null): string {
  return (
    `data: ` +
    JSON.stringify({
      id: g.id,
      object: 'chat.completion.chunk',
      model: g.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    }) +
    `\n\n`
  );
}

/** The model's bytes as PayloadParts: one per event, or each event cut in two. */
function frames(text: string, splitParts: boolean): Buffer {
  const bytes = Buffer.from(text);
  if (!splitParts || bytes.length < 2) return Buffer.from(encodePayloadPart(bytes));
  const cut = Math.floor(bytes.length / 2);
  return Buffer.concat([encodePayloadPart(bytes.subarray(0, cut)), encodePayloadPart(bytes.subarray(cut))]);
}

interface StreamSettings {
  format: MockStreamFormat;
  splitParts: boolean;
  streamError: 'stream' | 'stream-internal' | null;
  /** Tokens written before the stream error. */
  errorAfter: number;
}

function answerChatStream(reply: Reply, g: ChatGeneration, s: StreamSettings): void {
  const { res, requestId, variant } = reply;
  const modelContentType = s.format === 'jsonlines' ? 'application/jsonlines' : 'text/event-stream';
  res.writeHead(200, {
    'content-type': 'application/vnd.amazon.eventstream',
    'x-amzn-sagemaker-content-type': modelContentType,
    'x-amzn-invoked-production-variant': variant,
    'x-amzn-requestid': requestId,
  });
  // Headers leave now, as a container's do when it starts streaming (not with the first token).
  res.flushHeaders();
  let closed = false;
  res.on('close', () => (closed = true));
  if (s.format === 'openai') res.write(frames(openAiChunk(g, { role: 'assistant' }, null), s.splitParts));
  const writeToken = (k: number) => {
    if (closed) return;
    if (s.streamError && k === s.errorAfter) {
      res.end(streamErrorMessage(s.streamError));
      return;
    }
    const data = frames(tokenEvent(g, s.format, k), s.splitParts);
    if (k === g.n - 1) {
      res.end(data);
      return;
    }
    res.write(data);
    reply.at(g.dueMs(k + 1), () => writeToken(k + 1));
  };
  reply.at(g.dueMs(0), () => writeToken(0));
}

/** The request's body as the model reads it: parsed when its type is JSON; a ModelError when that JSON does not parse. */
function readBody(body: Buffer, inputType: string, endpoint: string): { parsed: unknown } | ServiceError {
  if (!isJsonType(inputType)) return { parsed: undefined };
  try {
    return { parsed: JSON.parse(body.toString('utf8')) };
  } catch {
    return modelError(endpoint, 400, 'request body is not JSON');
  }
}

/** The mock's settings, resolved once. */
interface SageMakerSettings {
  ttftMs: number;
  itlMs: number;
  outputTokens: number;
  errorRate: number;
  errorType: MockSageMakerErrorType;
  modelErrorStatus: number;
  modelKind: MockSageMakerModel;
  streamFormat: MockStreamFormat;
  splitParts: boolean;
  streamErrorAfter: number | undefined;
  requireAuth: boolean;
  endpoints: Set<string> | null;
}

function settingsOf(options: MockSageMakerOptions): SageMakerSettings {
  return {
    ttftMs: options.ttftMs ?? 20,
    itlMs: options.itlMs ?? 5,
    outputTokens: options.outputTokens ?? 16,
    errorRate: options.errorRate ?? 0,
    errorType: options.errorType ?? 'model',
    modelErrorStatus: options.modelErrorStatus ?? 500,
    modelKind: options.model ?? 'auto',
    streamFormat: options.streamFormat ?? 'openai',
    splitParts: options.splitParts ?? false,
    streamErrorAfter: options.streamErrorAfter,
    requireAuth: options.requireAuth ?? true,
    endpoints: options.endpoints ? new Set(options.endpoints) : null,
  };
}

interface ChatPayload {
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  model?: unknown;
  messages?: unknown;
}

/** The chat model's generation for `payload`; `timeline` gives a generation of n tokens its slot and its tokens' due times. */
function chatGeneration(
  payload: ChatPayload,
  outputTokens: number,
  sequence: number,
  timeline: (n: number) => (k: number) => number,
): ChatGeneration {
  const cap = [payload.max_tokens, payload.max_completion_tokens].find(
    (v): v is number => typeof v === 'number' && v >= 1,
  );
  const n = Math.max(1, Math.min(outputTokens, cap ?? outputTokens));
  const promptTokens = countWords(payload.messages);
  const word = (k: number) => (k === 0 ? '' : ' ') + MOCK_WORDS[k % MOCK_WORDS.length];
  return {
    id: `chatcmpl-sagemaker-mock-${sequence}`,
    model: typeof payload.model === 'string' ? payload.model : 'mock-model',
    n,
    usage: { prompt_tokens: promptTokens, completion_tokens: n, total_tokens: promptTokens + n },
    word,
    fullText: Array.from({ length: n }, (_, k) => word(k)).join(''),
    dueMs: timeline(n),
  };
}

export async function startMockSageMaker(options: MockSageMakerOptions = {}): Promise<MockSageMaker> {
  const settings = settingsOf(options);
  const random = seededRandom(options.seed ?? 42);
  const runtime = mockRuntime(options);
  let sequence = 0;

  return serveMock(
    options,
    runtime,
    ({ headers, body }) => ({ headers, body_bytes: body.length }),
    (req, res, { headers, body }, arrivalMs) =>
      respond({ req, res, headers, body, arrivalMs, settings, runtime, draw: random, sequence: () => ++sequence }),
  );
}

/** One received request, with what the mock answers it with. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  headers: Record<string, string>;
  body: Buffer;
  arrivalMs: number;
  settings: SageMakerSettings;
  runtime: MockRuntime;
  /** The error-injection draw (seeded). */
  draw: () => number;
  /** The next chat completion's number. */
  sequence: () => number;
}

function respond(x: Exchange): void {
  const { res, headers, settings } = x;
  const requestId = randomUUID();
  const fail = (error: ServiceError) => sendError(res, error, requestId);
  const routed = route(x.req, headers, settings.requireAuth, settings.endpoints);
  if ('status' in routed) return fail(routed);
  const { endpoint, streaming } = routed;
  const attributes = parseMockAttributes(headers['x-amzn-sagemaker-custom-attributes']);
  let injected: MockSageMakerErrorType | null = null;
  if (attributes['mock-error'] && (MOCK_ERROR_TYPES as readonly string[]).includes(attributes['mock-error']))
    injected = attributes['mock-error'] as MockSageMakerErrorType;
  else if (settings.errorRate > 0 && x.draw() < settings.errorRate) injected = settings.errorType;
  const requestError = injected
    ? injectedError(injected, endpoint, numberAttribute(attributes, 'mock-status', settings.modelErrorStatus))
    : null;
  if (requestError) return fail(requestError);
  const streamError = streaming && (injected === 'stream' || injected === 'stream-internal') ? injected : null;

  const inputType = baseType(headers['content-type']);
  const read = readBody(x.body, inputType, endpoint);
  if ('status' in read) return fail(read);
  const messages =
    read.parsed && typeof read.parsed === 'object' ? (read.parsed as { messages?: unknown }).messages : undefined;
  const isChat = Array.isArray(messages) && settings.modelKind !== 'tabular';
  if (settings.modelKind === 'chat' && !isChat)
    return fail(modelError(endpoint, 400, 'expected a JSON body with messages'));

  const ttftMs = numberAttribute(attributes, 'mock-ttft-ms', settings.ttftMs);
  const itlMs = numberAttribute(attributes, 'mock-itl-ms', settings.itlMs);
  const outputTokens = Math.max(1, Math.round(numberAttribute(attributes, 'mock-tokens', settings.outputTokens)));
  const reply: Reply = {
    res,
    requestId,
    variant: headers['x-amzn-sagemaker-target-variant'] ?? 'AllTraffic',
    at: (due, fn) => x.runtime.scheduler.at(due, fn),
  };
  const timeline = (n: number) => x.runtime.slots.timeline(x.arrivalMs, ttftMs, itlMs, n);
  if (!isChat) {
    const accept = baseType(streaming ? headers['x-amzn-sagemaker-accept'] : headers.accept);
    const answer =
      isJsonType(inputType) || inputType === 'text/csv'
        ? tabularAnswer(x.body, inputType, accept, read.parsed)
        : binaryAnswer(x.body);
    return answerNonChat(reply, answer, streaming, streamError, timeline(1)(0));
  }
  const generation = chatGeneration(read.parsed as ChatPayload, outputTokens, x.sequence(), timeline);
  if (!streaming) return answerChatWhole(reply, generation);
  const format = (MOCK_STREAM_FORMATS as readonly string[]).includes(attributes['mock-stream-format'] ?? '')
    ? (attributes['mock-stream-format'] as MockStreamFormat)
    : settings.streamFormat;
  const splitParts =
    attributes['mock-split-parts'] !== undefined
      ? attributes['mock-split-parts'] === '1' || attributes['mock-split-parts'] === 'true'
      : settings.splitParts;
  const errorAfter = Math.min(generation.n, Math.max(0, settings.streamErrorAfter ?? Math.floor(generation.n / 2)));
  answerChatStream(reply, generation, { format, splitParts, streamError, errorAfter });
}

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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runStandalone(
    buildMockSageMakerProgram(async () => ({ startMockSageMaker })),
    process.argv.slice(2),
  );
}
