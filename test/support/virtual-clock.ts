import type { Clock, TargetClient, TargetRequest } from '../../lambdas/ports';
import type { ErrorDetails, TargetResult } from '../../lambdas/core/types';

/**
 * A deterministic Clock for tests. Time stands still while anything can still run; when all
 * that is left is waiting (one setImmediate turn with nothing resolved), it jumps to the
 * earliest pending due time. So a 24-hour schedule runs in milliseconds, and "when" is exact.
 */
export class VirtualClock implements Clock {
  private now: bigint;
  private readonly waiters: { at: bigint; resolve: () => void }[] = [];
  private pending = false;

  constructor(startNs = 1_800_000_000_000_000_000n) {
    this.now = startNs;
  }

  nowNs(): bigint {
    return this.now;
  }

  waitUntil(at: bigint, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (at <= this.now) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = { at, resolve };
      this.waiters.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason);
        },
        { once: true },
      );
      this.schedule();
    });
  }

  /** Moves time forward (never back) and releases every wait that is due. */
  advanceTo(ns: bigint): void {
    if (ns > this.now) this.now = ns;
    this.waiters.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    while (this.waiters.length > 0 && (this.waiters[0] as { at: bigint }).at <= this.now)
      (this.waiters.shift() as { resolve: () => void }).resolve();
  }

  /** Milliseconds since `from`. */
  msSince(from: bigint): number {
    return Number(this.now - from) / 1e6;
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      if (this.waiters.length === 0) return;
      this.waiters.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      const next = (this.waiters[0] as { at: bigint }).at;
      if (next > this.now) this.now = next;
      while (this.waiters.length > 0 && (this.waiters[0] as { at: bigint }).at <= this.now)
        (this.waiters.shift() as { resolve: () => void }).resolve();
      if (this.waiters.length > 0) this.schedule();
    });
  }
}

export interface FakeBehaviour {
  latencyMs?: number;
  /** Content chunks spread evenly after ttftMs. */
  ttftMs?: number;
  chunks?: number;
  completionTokens?: number;
  error?: ErrorDetails;
  throws?: string;
}

/** A target whose responses take virtual time, for fire-loop tests. Records what it was sent. */
export class FakeTarget implements TargetClient {
  readonly sent: { request: TargetRequest; atNs: bigint }[] = [];

  constructor(
    readonly name: string,
    private readonly clock: VirtualClock,
    private readonly behaviour: (request: TargetRequest) => FakeBehaviour = () => ({}),
  ) {}

  async send(request: TargetRequest): Promise<TargetResult> {
    const start = this.clock.nowNs();
    this.sent.push({ request, atNs: start });
    const b = this.behaviour(request);
    if (b.throws) throw new Error(b.throws);
    const latencyNs = BigInt(Math.round((b.latencyMs ?? 10) * 1e6));
    const chunks: bigint[] = [];
    if (b.chunks && b.chunks > 0) {
      const ttftNs = BigInt(Math.round((b.ttftMs ?? 0) * 1e6));
      const step = b.chunks > 1 ? (latencyNs - ttftNs) / BigInt(b.chunks - 1) : 0n;
      for (let i = 0; i < b.chunks; i++) chunks.push(start + ttftNs + step * BigInt(i));
    }
    await this.clock.waitUntil(start + latencyNs);
    return {
      requestStartNs: start,
      requestAckNs: start,
      requestEndNs: this.clock.nowNs(),
      contentChunkNs: chunks,
      httpStatus: b.error ? (b.error.code ?? null) : 200,
      usage: b.completionTokens !== undefined ? { promptTokens: 5, completionTokens: b.completionTokens } : null,
      error: b.error ?? null,
    };
  }

  async close(): Promise<void> {}
}
