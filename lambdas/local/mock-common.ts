/**
 * What the bundled mocks (mock-server.ts, mock-sagemaker.ts) share: one write scheduler for
 * every pending token, listening, the standalone process's start and stop, and the numeric
 * option parser of their command lines.
 */
import type { IncomingMessage, Server } from 'node:http';
import { epochNowNs } from '../adapters/system-clock';
import type { AddressInfo } from 'node:net';
import { createWriteStream, type WriteStream } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';

/**
 * One timer for every pending write of the server instead of one per token: a min-heap of due
 * times, a single setTimeout armed for the earliest and, in precise mode, a single
 * setImmediate spin over the last stretch. Thousands of streams then cost one timer, not
 * thousands of timers and spin loops competing for the same core.
 */
export class WriteScheduler {
  private readonly due: number[] = [];
  private readonly tasks: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private spinning = false;
  private stopped = false;

  constructor(private readonly spinWindowMs: number) {}

  /** Runs `task` once performance.now() reaches `dueMs` (never before). */
  at(dueMs: number, task: () => void): void {
    if (this.stopped) return;
    // Sift up in the parallel arrays (no per-entry object).
    let i = this.due.length;
    this.due.push(dueMs);
    this.tasks.push(task);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.due[parent]! <= dueMs) break;
      this.due[i] = this.due[parent]!;
      this.tasks[i] = this.tasks[parent]!;
      i = parent;
    }
    this.due[i] = dueMs;
    this.tasks[i] = task;
    if (i === 0) this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.due.length = 0;
    this.tasks.length = 0;
  }

  private pop(): () => void {
    const top = this.tasks[0]!;
    const lastDue = this.due.pop()!;
    const lastTask = this.tasks.pop()!;
    const n = this.due.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && this.due[child + 1]! < this.due[child]!) child++;
        if (this.due[child]! >= lastDue) break;
        this.due[i] = this.due[child]!;
        this.tasks[i] = this.tasks[child]!;
        i = child;
      }
      this.due[i] = lastDue;
      this.tasks[i] = lastTask;
    }
    return top;
  }

  private readonly run = (): void => {
    this.timer = null;
    this.timerDue = Infinity;
    this.spinning = false;
    const now = performance.now();
    while (this.due.length > 0 && this.due[0]! <= now) this.pop()();
    this.arm();
  };

  private arm(): void {
    if (this.stopped || this.spinning || this.due.length === 0) return;
    const next = this.due[0]!;
    const waitMs = next - performance.now() - this.spinWindowMs;
    if (waitMs <= 0 && this.spinWindowMs > 0) {
      // Inside the window: yield to I/O once per turn until the due time.
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.timerDue = Infinity;
      this.spinning = true;
      setImmediate(this.run);
      return;
    }
    if (this.timer && this.timerDue <= next) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = next;
    this.timer = setTimeout(this.run, Math.max(0, waitMs));
  }
}

/** Listens on `port` (0: any free one) and `host` (default loopback); the URL it answers on. */
export async function listen(server: Server, options: { host?: string; port?: number }): Promise<{ url: string; port: number }> {
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolveListen());
  });
  const port = (server.address() as AddressInfo).port;
  return { url: `http://${options.host ?? '127.0.0.1'}:${port}`, port };
}

/** Words in a chat request's messages (string contents and text parts): the mocks' prompt-token count. */
export function countWords(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let words = 0;
  for (const m of messages) {
    const content = (m as { content?: unknown })?.content;
    const texts = typeof content === 'string' ? [content] : Array.isArray(content) ? content.map((p) => (p as { text?: unknown })?.text).filter((t): t is string => typeof t === 'string') : [];
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

/** What both mocks keep while serving: their write timers, the request log, what they received. */
export interface MockRuntime {
  scheduler: WriteScheduler;
  log: WriteStream | null;
  requests: ReceivedRequest[];
  /**
   * Reads a request whole, stamps its arrival (epoch ns for the log, and the monotonic
   * instant the scheduler runs on), records it (in memory unless `recordRequests: false`; in
   * the log as `logLine` makes it), then hands it on.
   */
  receive(req: IncomingMessage, logLine: (r: ReceivedRequest) => Record<string, unknown>, then: (r: ReceivedRequest, arrivalMs: number) => void): void;
}

/** The timers (precise: wake 1.5 ms early and spin, as the replay clock does; plain: the timer alone), the log, the record. */
export function mockRuntime(options: { preciseTimers?: boolean; logFile?: string; recordRequests?: boolean }): MockRuntime {
  const log = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : null;
  const requests: ReceivedRequest[] = [];
  const recordRequests = options.recordRequests ?? true;
  return {
    scheduler: new WriteScheduler((options.preciseTimers ?? true) ? 1.5 : 0),
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
        const received: ReceivedRequest = { arrivalNs, method: req.method ?? '', path: req.url ?? '', headers, body: Buffer.concat(parts) };
        if (recordRequests) requests.push(received);
        log?.write(JSON.stringify(logLine(received)) + '\n');
        then(received, arrivalMs);
      });
    },
  };
}

/** Listens, then the mock's handle: its URL and what it received; `close` stops the timers, the connections and the log. */
export async function serveMock(server: Server, options: { host?: string; port?: number }, runtime: MockRuntime): Promise<{ url: string; port: number; requests: ReceivedRequest[]; close(): Promise<void> }> {
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

/** The options both mocks' commands take, with the command's own wording where it differs. */
export function commonMockOptions(command: Command, defaults: { port: number; ttftHelp: string; errorRateHelp: string; logHelp: string }): Command {
  return command
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 = any free port)', numberArg('--port', 0, 65535), defaults.port)
    .option('--ttft-ms <ms>', defaults.ttftHelp, numberArg('--ttft-ms', 0), 20)
    .option('--itl-ms <ms>', 'inter-token latency', numberArg('--itl-ms', 0), 5)
    .option('--output-tokens <n>', 'output length (capped by the request max_tokens)', numberArg('--output-tokens', 1), 16)
    .option('--error-rate <rate>', defaults.errorRateHelp, numberArg('--error-rate', 0, 1), 0)
    .option('--seed <n>', 'seed for error injection', numberArg('--seed', 0), 42)
    .option('--log <file>', defaults.logHelp)
    .option('--no-precise-timers', 'plain timers (~1 ms late) instead of timer + spin: less CPU at high load');
}

export interface CommonMockArgs {
  host: string;
  port: number;
  ttftMs: number;
  itlMs: number;
  outputTokens: number;
  errorRate: number;
  seed: number;
  log?: string;
  preciseTimers: boolean;
}

/** The common options as both mocks' settings (a standalone mock records no requests in memory: it logs them). */
export function commonMockSettings(o: CommonMockArgs) {
  return {
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

export function numberArg(name: string, min: number, max = Infinity) {
  return (raw: string): number => {
    const v = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(v) || v < min || v > max) throw new InvalidArgumentError(`${name} must be a number in [${min}, ${max}] (got "${raw}")`);
    return v;
  };
}
