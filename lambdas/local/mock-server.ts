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
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { epochNowNs } from '../adapters/system-clock';
import { seededRandom } from '../core/random';
import { listen, numberArg, serveUntilSignal, WriteScheduler } from './mock-common';
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

export interface ReceivedRequest {
  arrivalNs: bigint;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface MockServer {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

const CHAT_PATH = /\/chat\/completions$|\/invocations$/;

function countWords(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let words = 0;
  for (const m of messages) {
    const content = (m as { content?: unknown })?.content;
    const texts = typeof content === 'string' ? [content] : Array.isArray(content) ? content.map((p) => (p as { text?: unknown })?.text).filter((t): t is string => typeof t === 'string') : [];
    for (const text of texts) words += text.split(/\s+/).filter(Boolean).length;
  }
  return words;
}

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
  const recordRequests = options.recordRequests ?? true;
  const precise = options.preciseTimers ?? true;
  const requests: ReceivedRequest[] = [];
  const log: WriteStream | null = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : null;
  // Precise: wake 1.5 ms early and spin (as the replay clock does); plain: the timer alone.
  const scheduler = new WriteScheduler(precise ? 1.5 : 0);
  let sequence = 0;

  const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
    const arrivalNs = epochNowNs();
    // The same instant on the monotonic clock the scheduler runs on.
    const arrivalMs = performance.now();
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      if (recordRequests) requests.push({ arrivalNs, method: req.method ?? '', path: req.url ?? '', headers, body });
      log?.write(
        JSON.stringify({
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
        }) + '\n',
      );
      respond(req, res, body, arrivalMs);
    });
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

  const { url, port } = await listen(server, options);
  return {
    url,
    port,
    requests,
    async close() {
      scheduler.stop();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      if (log) await new Promise<void>((r) => log.end(r));
    },
  };
}

/** The standalone process: arguments as after `mock-server`. */
export async function runMockServerCli(args: string[]): Promise<void> {
  const program = usageErrors(new Command('mock-server'), 'mock-server')
    .description('OpenAI-compatible mock server for capture-replay')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 = any free port)', numberArg('--port', 0, 65535), 8000)
    .option('--ttft-ms <ms>', 'time to first token', numberArg('--ttft-ms', 0), 20)
    .option('--itl-ms <ms>', 'inter-token latency', numberArg('--itl-ms', 0), 5)
    .option('--output-tokens <n>', 'output length (capped by the request max_tokens)', numberArg('--output-tokens', 1), 16)
    .option('--error-rate <rate>', 'fraction of requests answered with HTTP 500', numberArg('--error-rate', 0, 1), 0)
    .option('--seed <n>', 'seed for error injection', numberArg('--seed', 0), 42)
    .option('--log <file>', 'append one JSON line per received request (arrival time, ids, body)')
    .option('--api-key <key>', 'require Authorization: Bearer <key>')
    .option('--no-precise-timers', 'plain timers (~1 ms late) instead of timer + spin: less CPU at high load');
  program.parse(args, { from: 'user' });
  const o = program.opts<{ host: string; port: number; ttftMs: number; itlMs: number; outputTokens: number; errorRate: number; seed: number; log?: string; apiKey?: string; preciseTimers: boolean }>();
  const server = await startMockServer({
    host: o.host,
    port: o.port,
    ttftMs: o.ttftMs,
    itlMs: o.itlMs,
    outputTokens: Math.round(o.outputTokens),
    errorRate: o.errorRate,
    seed: o.seed,
    recordRequests: false,
    preciseTimers: o.preciseTimers,
    ...(o.log ? { logFile: o.log } : {}),
    ...(o.apiKey ? { apiKey: o.apiKey } : {}),
  });
  serveUntilSignal(server);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runMockServerCli(process.argv.slice(2));
}
