/**
 * A bundled OpenAI-compatible mock server, for the demo, the tests, the benchmarks and the
 * replay's rehearsal: chat completions, streaming (SSE) and not, with a configurable time to
 * first token, inter-token latency, output length, capacity and error rate, deterministic
 * under a seed.
 *
 * Timing: token k of a stream is written at arrival + wait + ttft + k*itl on an absolute
 * timeline, so timer jitter never accumulates across tokens (tokens due together share a
 * write); the wait for a generation slot is 0 unless `slots` is set (the queueing model:
 * capacity.ts). prompt_tokens is the number of whitespace-separated words in all message
 * contents (deterministic, no tokenizer).
 *
 * Standalone: `capture-replay mock-server ...` (options in cli.ts) prints one line
 * `{"url":"http://127.0.0.1:PORT"}` once listening and stops on SIGTERM/SIGINT.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../core/random';
import { buildMockServerProgram, runStandalone } from './cli';
import { countWords, mockRuntime, MOCK_WORDS, serveMock, type MockGenerationOptions, type MockHandle } from './common';

export interface MockServerOptions extends MockGenerationOptions {
  /** Require `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
}

export type { ReceivedRequest } from './common';

export type MockServer = MockHandle;

const CHAT_PATH = /\/chat\/completions$|\/invocations$/;

interface ChatPayload {
  stream?: unknown;
  stream_options?: { include_usage?: unknown };
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  messages?: unknown;
  model?: unknown;
}

interface Refusal {
  status: number;
  message: string;
  type: string;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The chat request's payload, or why it is refused before generation (no route, wrong key, not JSON). */
function chatPayload(
  req: IncomingMessage,
  body: Buffer,
  apiKey: string | undefined,
): { chat: ChatPayload } | { refusal: Refusal } {
  if (req.method !== 'POST' || !CHAT_PATH.test((req.url ?? '').split('?')[0] ?? ''))
    return { refusal: { status: 404, message: `no route for ${req.method} ${req.url}`, type: 'not_found' } };
  if (apiKey && req.headers.authorization !== `Bearer ${apiKey}`)
    return { refusal: { status: 401, message: 'invalid or missing API key', type: 'authentication_error' } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { refusal: { status: 400, message: 'request body is not JSON', type: 'invalid_request_error' } };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return { refusal: { status: 400, message: 'request body is not a JSON object', type: 'invalid_request_error' } };
  return { chat: parsed as ChatPayload };
}

/** One generation: its identity, length and usage, and when each of its tokens is due. */
interface Generation {
  id: string;
  model: string;
  n: number;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  dueMs: (k: number) => number;
  /** Runs `fn` at `due` (at once when it has passed). */
  at: (due: number, fn: () => void) => void;
}

function answerWhole(res: ServerResponse, g: Generation): void {
  g.at(g.dueMs(g.n - 1), () =>
    json(res, 200, {
      id: g.id,
      object: 'chat.completion',
      model: g.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: Array.from({ length: g.n }, (_, k) => MOCK_WORDS[k % MOCK_WORDS.length]).join(' '),
          },
          finish_reason: 'stop',
        },
      ],
      usage: g.usage,
    }),
  );
}

function answerStream(res: ServerResponse, g: Generation, includeUsage: boolean): void {
  const { id, model, n } = g;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const event = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(event({ role: 'assistant' }, null));
  let closed = false;
  res.on('close', () => (closed = true));
  // Token k and every later one already due go out in one write, as a server flushes what it
  // has generated: with no inter-token latency a whole answer is one write, not one per token.
  const writeTokens = (first: number) => {
    if (closed) return;
    let out = '';
    for (let k = first; ; k++) {
      const last = k === n - 1;
      out += event({ content: (k === 0 ? '' : ' ') + MOCK_WORDS[k % MOCK_WORDS.length] }, last ? 'stop' : null);
      if (last) {
        if (includeUsage)
          out += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [], usage: g.usage })}\n\n`;
        out += 'data: [DONE]\n\n';
        res.end(out);
        return;
      }
      if (g.dueMs(k + 1) > performance.now()) {
        res.write(out);
        g.at(g.dueMs(k + 1), () => writeTokens(k + 1));
        return;
      }
    }
  };
  g.at(g.dueMs(0), () => writeTokens(0));
}

export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const ttftMs = options.ttftMs ?? 20;
  const itlMs = options.itlMs ?? 5;
  const outputTokens = options.outputTokens ?? 16;
  const errorRate = options.errorRate ?? 0;
  const random = seededRandom(options.seed ?? 42);
  const runtime = mockRuntime(options);
  const { scheduler, slots } = runtime;
  const at = (due: number, fn: () => void) => {
    if (due <= performance.now()) fn();
    else scheduler.at(due, fn);
  };
  let sequence = 0;

  function respond(req: IncomingMessage, res: ServerResponse, body: Buffer, arrivalMs: number): void {
    const accepted = chatPayload(req, body, options.apiKey);
    if ('refusal' in accepted) {
      json(res, accepted.refusal.status, { error: { message: accepted.refusal.message, type: accepted.refusal.type } });
      return;
    }
    const { chat } = accepted;
    if (errorRate > 0 && random() < errorRate) {
      json(res, 500, { error: { message: 'injected failure', type: 'server_error' } });
      return;
    }
    const cap = [chat.max_tokens, chat.max_completion_tokens].find((v): v is number => typeof v === 'number' && v >= 1);
    const n = Math.max(1, Math.min(outputTokens, cap ?? outputTokens));
    const promptTokens = countWords(chat.messages);
    const generation: Generation = {
      id: `chatcmpl-mock-${++sequence}`,
      model: typeof chat.model === 'string' ? chat.model : 'mock-model',
      n,
      usage: { prompt_tokens: promptTokens, completion_tokens: n, total_tokens: promptTokens + n },
      // Absolute due times from the start, so lateness of one token never shifts the next.
      dueMs: slots.timeline(arrivalMs, ttftMs, itlMs, n),
      at,
    };
    if (chat.stream === true) answerStream(res, generation, chat.stream_options?.include_usage === true);
    else answerWhole(res, generation);
  }

  return serveMock(
    options,
    runtime,
    ({ headers }) => ({
      headers: {
        'x-request-id': headers['x-request-id'],
        'x-correlation-id': headers['x-correlation-id'],
        'content-type': headers['content-type'],
        'authorization-present': headers.authorization !== undefined,
      },
    }),
    (req, res, { body }, arrivalMs) => respond(req, res, body, arrivalMs),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runStandalone(
    buildMockServerProgram(async () => ({ startMockServer })),
    process.argv.slice(2),
  );
}
