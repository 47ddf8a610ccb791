/**
 * Connections opened before they are needed, for an HTTP target's undici pool.
 *
 * A pool opens a connection when every one it has is busy; a cold one has none, so its first
 * request waits for a connection of its own (DNS, TCP, TLS), and so does every request that
 * finds the others busy while those connect. The fire function opens a few ahead, shortly
 * before its first due time (handlers/fire-warm-up.ts), so that the first requests of a cold
 * invocation go out on connections that are already there: without it, the first request
 * of a warmed-up cold invocation reaches the wire after a connect the requests after it do not
 * wait for (test/integration/fire-warm-up.test.ts).
 *
 * How the reserve opens, hands over and closes its spares, and why: createSocketReserve.
 */
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';
import { clientTlsContext } from './tls-context';

type Connector = buildConnector.connector;
type ConnectOptions = buildConnector.Options;
type Callback = buildConnector.Callback;

export interface SocketReserveOptions {
  /** Spares unused for this long are closed and not replaced (ms). */
  maxIdleMs?: number;
  /** undici's connect timeout (ms); undici's default is 10 s. */
  connectTimeoutMs?: number;
  /** Spares being opened at once, at most (default MAX_OPENING). */
  maxOpening?: number;
  /** Tests: the connector that opens sockets (default undici's buildConnector). */
  base?: Connector;
  /** Tests: the clock the idle limit is measured on (ms). */
  nowMs?: () => number;
}

export interface SocketReserveStats {
  /** Spare sockets ready now. */
  spare: number;
  /** Spares being opened. */
  opening: number;
  /** Spares asked for that wait their turn to be opened (maxOpening). */
  queued: number;
  /** Connections the pool asked for, and how many of them a spare served. */
  requested: number;
  handed: number;
  /** Spares dropped: closed or written to by the peer, or failed to open; closed by us as idle. */
  dropped: number;
  expired: number;
}

/** How `warm` opens its spares. */
export interface WarmOptions {
  /** Only as many as can be ready within this (ms), by the connects so far. */
  withinMs?: number;
  /** At most this many being opened at once (at most `maxOpening`): each TLS handshake that completes is a turn of this event loop. */
  atOnce?: number;
}

export interface SocketReserve {
  /** undici's `connect` option. */
  readonly connect: Connector;
  /** Opens sockets until `spares` are ready or being opened (WarmOptions: how many by when, how many at once). */
  warm(spares: number, options?: WarmOptions): void;
  stats(): SocketReserveStats;
  /** Destroys every spare; no more are opened. */
  close(): void;
}

/** Spares being opened at once, by default. */
export const MAX_OPENING = 32;
/**
 * Expired spares are closed SWEEP_BATCH at a time, SWEEP_PAUSE_MS apart: hundreds of TLS
 * connections closed at once cost the server tens of ms of its event loop in one burst (the
 * requests arriving meanwhile wait for it); 400 a second is a few ms of it every 20 ms.
 */
const SWEEP_BATCH = 8;
const SWEEP_PAUSE_MS = 20;

interface Spare {
  socket: Socket;
  since: number;
  drop: () => void;
}

/** The options undici passes its connector for this origin (undici lib/dispatcher/client.js, connect()). */
function connectOptionsOf(origin: URL): ConnectOptions {
  let hostname = origin.hostname;
  // undici strips an IPv6 literal's brackets before connecting.
  if (hostname.startsWith('[') && hostname.endsWith(']')) hostname = hostname.slice(1, -1);
  return {
    hostname,
    host: origin.host,
    protocol: origin.protocol,
    port: origin.port,
    servername: null,
    localAddress: null,
  } as unknown as ConnectOptions;
}

/**
 * The reserve is undici's own connector (`buildConnector`, so TCP and TLS are set up exactly
 * as undici would) with a stock of sockets opened ahead of time:
 *
 * - `warm(n)`: opens sockets until n are spare (or being opened), at most `maxOpening` at once
 *   (the next as one is made): a burst of connects beyond a server's accept backlog (511 for
 *   Node's servers) loses SYNs that come back only after TCP's 1 s retransmission, and spreads
 *   the handshakes' CPU rather than paying it in one turn. `withinMs`: only those that
 *   can be ready within it: no spare is started once the connects so far say it would
 *   complete later (their mean time, start to ready): hundreds of TLS handshakes can take a
 *   server seconds, and a spare still being made when the requests start is a handshake both
 *   sides pay in the schedule, queued ahead of the connections the requests open. `atOnce`:
 *   fewer at a time, for spares opened while requests are being sent (handlers/fire-warm-up.ts):
 *   handshakes that complete together are one long turn of the event loop, and a request due
 *   in it waits for all of them.
 * - TLS spares share one client context (tls-context.ts).
 * - The pool's connector takes a spare when it has one (handed over on a microtask: undici
 *   ignores a connection that completes inside its own resume loop), else opens one as undici
 *   would. A spare taken is not replaced: the reserve is for the start, the pool's keep-alive
 *   connections are for the rest.
 * - A spare is never handed over unless it is clean: a spare the peer closed, reset, or sent
 *   bytes on (a server's idle-timeout response) is destroyed. A spare unused for
 *   `maxIdleMs` (default 4 s, under the 5 s idle timeout of Node's and uvicorn's servers) is
 *   closed by us, so that a server closing it as idle cannot race a request onto it; a few at
 *   a time (SWEEP_BATCH every SWEEP_PAUSE_MS), so that hundreds of spares opened together and
 *   left unused do not stall either side's event loop in one burst.
 * - A failed warm-up connection is no request's failure: it is counted and dropped (the
 *   request that needs a connection then opens its own, and that failure is recorded).
 */
export function createSocketReserve(origin: URL, options: SocketReserveOptions = {}): SocketReserve {
  return new Reserve(origin, options);
}

class Reserve implements SocketReserve {
  private readonly base: Connector;
  private readonly maxIdleMs: number;
  private readonly nowMs: () => number;
  private readonly target: ConnectOptions;
  private readonly maxOpening: number;
  /** Being opened at once, at most: the last warm's `atOnce`, within maxOpening. */
  private atOnce: number;
  private readonly spares: Spare[] = [];
  /** Spares still to open (warm's ask, less those ready and being opened). */
  private pending = 0;
  private opening = 0;
  /** No spare is started that would be ready after this (nowMs), if set. */
  private readyBy: number | null = null;
  /** Spares made, and the sum of their times from start to ready (ms). */
  private made = 0;
  private makingMs = 0;
  private closed = false;
  private readonly counts = { requested: 0, handed: 0, dropped: 0, expired: 0 };
  private sweeper: NodeJS.Timeout | null = null;
  private sweepPending = false;

  constructor(origin: URL, options: SocketReserveOptions) {
    this.base =
      options.base ??
      buildConnector({
        ...(options.connectTimeoutMs !== undefined ? { timeout: options.connectTimeoutMs } : {}),
        ...(origin.protocol === 'https:' ? { secureContext: clientTlsContext() } : {}),
      });
    this.maxIdleMs = options.maxIdleMs ?? 4_000;
    this.maxOpening = Math.max(1, options.maxOpening ?? MAX_OPENING);
    this.atOnce = this.maxOpening;
    this.nowMs = options.nowMs ?? (() => performance.now());
    this.target = connectOptionsOf(origin);
  }

  /** A property, not a method: undici calls it unbound. */
  readonly connect: Connector = (opts: ConnectOptions, callback: Callback) => {
    this.counts.requested++;
    const socket = this.closed ? null : this.take();
    if (!socket) return this.base(opts, callback);
    this.counts.handed++;
    // undici calls its connector from inside its resume loop, which ignores a connection that
    // completes there; on a microtask the request is written as soon as the loop returns.
    queueMicrotask(() => callback(null, socket));
    return socket;
  };

  warm(n: number, options: WarmOptions = {}): void {
    if (this.closed) return;
    const { withinMs, atOnce } = options;
    this.pending = Math.max(0, Math.floor(n) - this.spares.length - this.opening);
    this.readyBy = withinMs !== undefined && Number.isFinite(withinMs) ? this.nowMs() + Math.max(0, withinMs) : null;
    this.atOnce = atOnce !== undefined && atOnce >= 1 ? Math.min(this.maxOpening, Math.floor(atOnce)) : this.maxOpening;
    this.fill();
  }

  stats(): SocketReserveStats {
    return { spare: this.spares.length, opening: this.opening, queued: this.pending, ...this.counts };
  }

  close(): void {
    this.closed = true;
    this.pending = 0;
    for (const spare of this.spares.splice(0)) {
      detach(spare);
      spare.socket.destroy();
    }
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private remove(spare: Spare): void {
    const at = this.spares.indexOf(spare);
    if (at >= 0) this.spares.splice(at, 1);
    detach(spare);
  }

  /** `next`: the rest of a sweep cut in batches; the interval's own sweep waits for it to end. */
  private sweep(next = false): void {
    if (this.sweepPending && !next) return;
    this.sweepPending = false;
    const now = this.nowMs();
    let closing = 0;
    for (const spare of [...this.spares]) {
      if (now - spare.since < this.maxIdleMs) continue;
      if (closing === SWEEP_BATCH) {
        // The rest a little later: the fire loop, and the server, get on with their work in between.
        this.sweepPending = true;
        setTimeout(() => this.sweep(true), SWEEP_PAUSE_MS).unref();
        return;
      }
      closing++;
      this.remove(spare);
      spare.socket.destroy();
      this.counts.expired++;
    }
    if (this.spares.length === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  /** Opens what warm asked for, at most atOnce at a time, none that would be ready too late. */
  private fill(): void {
    while (!this.closed && this.pending > 0 && this.opening < this.atOnce) {
      if (this.readyBy !== null && this.nowMs() + (this.made > 0 ? this.makingMs / this.made : 0) >= this.readyBy) {
        this.pending = 0;
        return;
      }
      this.pending--;
      this.open();
    }
  }

  private open(): void {
    this.opening++;
    const started = this.nowMs();
    this.base(this.target, (error, socket) => {
      this.opening--;
      if (!error && socket) {
        this.made++;
        this.makingMs += this.nowMs() - started;
      }
      this.fill();
      if (error || !socket) {
        this.counts.dropped++;
        return;
      }
      const s = socket as Socket;
      if (this.closed) {
        s.destroy();
        return;
      }
      const spare: Spare = {
        socket: s,
        since: this.nowMs(),
        drop: () => {
          this.remove(spare);
          s.destroy();
          this.counts.dropped++;
        },
      };
      // Nothing may arrive on a connection that carried no request: whatever does (end, bytes,
      // an error) makes it unfit to carry one.
      s.once('end', spare.drop).once('close', spare.drop).once('error', spare.drop).once('readable', spare.drop);
      this.spares.push(spare);
      if (!this.sweeper) {
        this.sweeper = setInterval(() => this.sweep(), Math.max(50, Math.min(1000, this.maxIdleMs / 4)));
        this.sweeper.unref();
      }
    });
  }

  private take(): Socket | null {
    while (this.spares.length > 0) {
      // The newest first: the oldest are the nearest to their idle limit.
      const spare = this.spares.pop() as Spare;
      detach(spare);
      const s = spare.socket;
      if (
        !s.destroyed &&
        s.writable &&
        !s.readableEnded &&
        s.readableLength === 0 &&
        this.nowMs() - spare.since < this.maxIdleMs
      )
        return s;
      s.destroy();
      this.counts.dropped++;
    }
    return null;
  }
}

function detach(spare: Spare): void {
  spare.socket.off('end', spare.drop).off('close', spare.drop).off('error', spare.drop).off('readable', spare.drop);
}
