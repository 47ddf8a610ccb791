/**
 * What the bundled mocks (mock-server.ts, mock-sagemaker.ts) share while serving: their write
 * timers and generation slots, the request record and log, listening, and the standalone
 * process's start and stop.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { epochNowNs } from '../adapters/system-clock';
import { GenerationSlots } from './capacity';
import { WriteScheduler } from './write-scheduler';

/** Listens on `port` (0: any free one) and `host` (default loopback); the URL it answers on. */
export async function listen(
  server: Server,
  options: { host?: string; port?: number },
): Promise<{ url: string; port: number }> {
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolveListen());
  });
  const port = (server.address() as AddressInfo).port;
  return { url: `http://${options.host ?? '127.0.0.1'}:${port}`, port };
}

/** The words the mocks' chat models answer with, in turn. */
export const MOCK_WORDS = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit'];

/** Words in a chat request's messages (string contents and text parts): the mocks' prompt-token count. */
export function countWords(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let words = 0;
  for (const m of messages) {
    const content = (m as { content?: unknown })?.content;
    const texts =
      typeof content === 'string'
        ? [content]
        : Array.isArray(content)
          ? content.map((p) => (p as { text?: unknown })?.text).filter((t): t is string => typeof t === 'string')
          : [];
    for (const text of texts) words += text.split(/\s+/).filter(Boolean).length;
  }
  return words;
}

/** A request as a mock received it, whole. */
export interface ReceivedRequest {
  arrivalNs: bigint;
  method: string;
  path: string;
  /** String-valued headers, lower-case names (`authorization` included). */
  headers: Record<string, string>;
  body: Buffer;
}

/** What both mocks keep while serving: their write timers, their generation slots, the request log, what they received. */
export interface MockRuntime {
  scheduler: WriteScheduler;
  /** The capacity model (capacity.ts): unlimited unless `slots` is given. */
  slots: GenerationSlots;
  log: WriteStream | null;
  requests: ReceivedRequest[];
  /**
   * Reads a request whole, stamps its arrival (epoch ns for the log, and the monotonic
   * instant the scheduler runs on), records it (in memory unless `recordRequests: false`; in
   * the log as `logLine` makes it), then hands it on.
   */
  receive(
    req: IncomingMessage,
    logLine: (r: ReceivedRequest) => Record<string, unknown>,
    then: (r: ReceivedRequest, arrivalMs: number) => void,
  ): void;
}

/** The settings both mocks take for serving, beside their own. */
export interface MockRuntimeOptions {
  /** Finish each wait with a short spin (as the replay clock does) rather than a timer's ~1 ms lateness. Default true. */
  preciseTimers?: boolean;
  /** Append one JSON line per received request to this file. */
  logFile?: string;
  /** Keep every received request in memory (`requests`). Default true. */
  recordRequests?: boolean;
  /** Concurrent generations (capacity.ts); unlimited when absent. */
  slots?: number;
}

/** What both mocks generate with, beside their runtime settings. */
export interface MockGenerationOptions extends MockRuntimeOptions {
  /** Listen on this address (default 127.0.0.1) and port (default 0: any free one). */
  host?: string;
  port?: number;
  /** Time to first token, ms (default 20). */
  ttftMs?: number;
  /** Inter-token latency, ms (default 5). */
  itlMs?: number;
  /** Output tokens (default 16), capped by the request's max_tokens. */
  outputTokens?: number;
  /** Fraction of requests answered with an injected error (default 0). */
  errorRate?: number;
  /** Seed of the error-injection draws (default 42). */
  seed?: number;
}

/** A running mock: its URL, what it received (unless told not to keep it), and how to stop it. */
export interface MockHandle {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** The timers (precise: wake 1.5 ms early and spin, as the replay clock does; plain: the timer alone), the slots, the log, the record. */
export function mockRuntime(options: MockRuntimeOptions): MockRuntime {
  const log = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : null;
  const requests: ReceivedRequest[] = [];
  const recordRequests = options.recordRequests ?? true;
  return {
    scheduler: new WriteScheduler((options.preciseTimers ?? true) ? 1.5 : 0),
    slots: new GenerationSlots(options.slots ?? Infinity),
    log,
    requests,
    receive(req, logLine, then) {
      const arrivalNs = epochNowNs();
      const arrivalMs = performance.now();
      const parts: Buffer[] = [];
      req.on('data', (chunk: Buffer) => parts.push(chunk));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        const received: ReceivedRequest = {
          arrivalNs,
          method: req.method ?? '',
          path: req.url ?? '',
          headers,
          body: Buffer.concat(parts),
        };
        if (recordRequests) requests.push(received);
        log?.write(JSON.stringify(logLine(received)) + '\n');
        then(received, arrivalMs);
      });
    },
  };
}

/**
 * A mock's HTTP server, listening: each request read whole, recorded, logged (arrival, method,
 * path, body digest and bytes, and the mock's own `logFields`), then answered by `respond`.
 * Returns the mock's handle; `close` stops the timers, the connections and the log.
 */
export async function serveMock(
  options: { host?: string; port?: number },
  runtime: MockRuntime,
  logFields: (r: ReceivedRequest) => Record<string, unknown>,
  respond: (req: IncomingMessage, res: ServerResponse, r: ReceivedRequest, arrivalMs: number) => void,
): Promise<MockHandle> {
  const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
    runtime.receive(
      req,
      (r) => ({
        arrival_ns: r.arrivalNs.toString(),
        method: r.method,
        path: r.path,
        ...logFields(r),
        body_sha256: createHash('sha256').update(r.body).digest('hex'),
        body_base64: r.body.toString('base64'),
      }),
      (r, arrivalMs) => respond(req, res, r, arrivalMs),
    );
  });
  const { url, port } = await listen(server, options);
  const { scheduler, log, requests } = runtime;
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

/** The standalone process: prints `{"url": ...}` once listening, closes and exits on SIGTERM/SIGINT. */
export function serveUntilSignal(server: { url: string; close(): Promise<void> }): void {
  process.stdout.write(JSON.stringify({ url: server.url }) + '\n');
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
