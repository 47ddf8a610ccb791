/**
 * A bundled OpenAI-compatible mock server, for the demo, the tests and the benchmarks: chat
 * completions, streaming (SSE) and not, with a configurable time to first token,
 * inter-token latency, output length and error rate, deterministic under a seed.
 *
 * Timing: token k of a stream is written at arrival + ttft + k*itl on an absolute timeline,
 * so timer jitter never accumulates across tokens. prompt_tokens is the number of
 * whitespace-separated words in all message contents (deterministic, no tokenizer).
 *
 * Standalone: `node --import tsx lambdas/local/mock-server.ts --port 8000 ...` prints one line
 * `{"url":"http://127.0.0.1:PORT"}` once listening and stops on SIGTERM/SIGINT.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { seededRandom } from '../core/random';
import { commonMockOptions, commonMockSettings, countWords, mockRuntime, serveMock, serveUntilSignal, type CommonMockArgs, type ReceivedRequest } from './mock-common';
import { usageErrors } from './cli-usage';

export interface MockServerOptions {
  host?: string;
  port?: number;
  ttftMs?: number;
  itlMs?: number;
  outputTokens?: number;
  errorRate?: number;
  seed?: number;
  logFile?: string;
  recordRequests?: boolean;
  apiKey?: string;
  /**
   * Finish each wait with a short spin (as the replay clock does) so tokens leave within
   * ~0.1 ms of their due time instead of a timer's ~1 ms. Costs CPU at high load; the lag
   * benchmark turns it off.
   */
  preciseTimers?: boolean;
}

export type { ReceivedRequest } from './mock-common';

export interface MockServer {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

const CHAT_PATH = /\/chat\/completions$|\/invocations$/;


function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const WORDS = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit'];

export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const ttftMs = options.ttftMs ?? 20;
  const itlMs = options.itlMs ?? 5;
  const outputTokens = options.outputTokens ?? 16;
  const errorRate = options.errorRate ?? 0;
  const random = seededRandom(options.seed ?? 42);
  const runtime = mockRuntime(options);
  const { scheduler } = runtime;
  let sequence = 0;

  const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
    runtime.receive(
      req,
      ({ arrivalNs, headers, body }) => ({
        arrival_ns: arrivalNs.toString(),
        method: req.method,
        path: req.url,
        headers: {
          'x-request-id': headers['x-request-id'],
          'x-correlation-id': headers['x-correlation-id'],
          'content-type': headers['content-type'],
          'authorization-present': headers.authorization !== undefined,
        },
        body_sha256: createHash('sha256').update(body).digest('hex'),
        body_base64: body.toString('base64'),
      }),
      ({ body }, arrivalMs) => respond(req, res, body, arrivalMs),
    );
  });

  function respond(req: IncomingMessage, res: ServerResponse, body: Buffer, arrivalMs: number): void {
    if (req.method !== 'POST' || !CHAT_PATH.test((req.url ?? '').split('?')[0] ?? '')) {
      json(res, 404, { error: { message: `no route for ${req.method} ${req.url}`, type: 'not_found' } });
      return;
    }
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      json(res, 401, { error: { message: 'invalid or missing API key', type: 'authentication_error' } });
      return;
    }
    let payload: { stream?: unknown; stream_options?: { include_usage?: unknown }; max_tokens?: unknown; max_completion_tokens?: unknown; messages?: unknown; model?: unknown };
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      json(res, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error' } });
      return;
    }
    if (errorRate > 0 && random() < errorRate) {
      json(res, 500, { error: { message: 'injected failure', type: 'server_error' } });
      return;
    }
    const cap = [payload.max_tokens, payload.max_completion_tokens].find((v): v is number => typeof v === 'number' && v >= 1);
    const n = Math.max(1, Math.min(outputTokens, cap ?? outputTokens));
    const promptTokens = countWords(payload.messages);
    const id = `chatcmpl-mock-${++sequence}`;
    const model = typeof payload.model === 'string' ? payload.model : 'mock-model';
    const usage = { prompt_tokens: promptTokens, completion_tokens: n, total_tokens: promptTokens + n };
    // Absolute due times from the arrival, so lateness of one token never shifts the next.
    const dueMs = (k: number) => arrivalMs + ttftMs + k * itlMs;
    const at = (due: number, fn: () => void) => {
      if (due <= performance.now()) fn();
      else scheduler.at(due, fn);
    };

    if (payload.stream !== true) {
      at(dueMs(n - 1), () =>
        json(res, 200, {
          id,
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: Array.from({ length: n }, (_, k) => WORDS[k % WORDS.length]).join(' ') }, finish_reason: 'stop' }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const event = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.write(event({ role: 'assistant' }, null));
    let closed = false;
    res.on('close', () => (closed = true));
    const writeToken = (k: number) => {
      if (closed) return;
      const last = k === n - 1;
      let out = event({ content: (k === 0 ? '' : ' ') + WORDS[k % WORDS.length] }, last ? 'stop' : null);
      if (last) {
        if (payload.stream_options?.include_usage === true) out += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [], usage })}\n\n`;
        out += 'data: [DONE]\n\n';
        res.end(out);
        return;
      }
      res.write(out);
      at(dueMs(k + 1), () => writeToken(k + 1));
    };
    at(dueMs(0), () => writeToken(0));
  }

  return serveMock(server, options, runtime);
}

/** The standalone process: arguments as after `mock-server`. */
export async function runMockServerCli(args: string[]): Promise<void> {
  const program = commonMockOptions(usageErrors(new Command('mock-server'), 'mock-server').description('OpenAI-compatible mock server for capture-replay'), {
    port: 8000,
    ttftHelp: 'time to first token',
    errorRateHelp: 'fraction of requests answered with HTTP 500',
    logHelp: 'append one JSON line per received request (arrival time, ids, body)',
  }).option('--api-key <key>', 'require Authorization: Bearer <key>');
  program.parse(args, { from: 'user' });
  const o = program.opts<CommonMockArgs & { apiKey?: string }>();
  const server = await startMockServer({ ...commonMockSettings(o), ...(o.apiKey ? { apiKey: o.apiKey } : {}) });
  serveUntilSignal(server);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runMockServerCli(process.argv.slice(2));
}
