/**
 * What the bundled mocks (mock-server.ts, mock-sagemaker.ts) share: one write scheduler for
 * every pending token, listening, the standalone process's start and stop, and the numeric
 * option parser of their command lines.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidArgumentError } from 'commander';

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
