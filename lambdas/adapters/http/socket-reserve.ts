/**
 * Connections opened before they are needed, for an HTTP target's undici pool.
 *
 * A pool opens a connection when every one it has is busy; a cold one has none, so its first
 * request waits for a connection of its own (DNS, TCP, TLS), and so does every request that
 * finds the others busy while those connect. The fire function opens a few ahead, shortly
 * before its first due time (handlers/fire-warm-up.ts), so that the first requests of a cold
 * invocation go out on connections that are already there: measured on this machine, the
 * first request of a warmed-up cold invocation still reached the wire 3-15 ms after its
 * pick-up, all of it connecting, when the requests after it took under 2 ms.
 *
 * The reserve is undici's own connector (`buildConnector`, so TCP and TLS are set up exactly
 * as undici would) with a stock of sockets opened ahead of time:
 *
 * - `warm(n)`: opens sockets until n are spare (or being opened).
 * - The pool's connector takes a spare when it has one (handed over on a microtask: undici
 *   ignores a connection that completes inside its own resume loop), else opens one as undici
 *   would. A spare taken is not replaced: the reserve is for the start, the pool's keep-alive
 *   connections are for the rest.
 * - A spare is never handed over unless it is clean: a spare the peer closed, reset, or sent
 *   bytes on (a server's idle-timeout response) is destroyed. A spare unused for
 *   `maxIdleMs` (default 4 s, under the 5 s idle timeout of Node's and uvicorn's servers) is
 *   closed by us, so that a server closing it as idle cannot race a request onto it.
 * - A failed warm-up connection is no request's failure: it is counted and dropped (the
 *   request that needs a connection then opens its own, and that failure is recorded).
 */
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';

type Connector = buildConnector.connector;
type ConnectOptions = buildConnector.Options;
type Callback = buildConnector.Callback;

export interface SocketReserveOptions {
  /** Spares unused for this long are closed and not replaced (ms). */
  maxIdleMs?: number;
  /** undici's connect timeout (ms); undici's default is 10 s. */
  connectTimeoutMs?: number;
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
  /** Connections the pool asked for, and how many of them a spare served. */
  requested: number;
  handed: number;
  /** Spares dropped: closed or written to by the peer, or failed to open; closed by us as idle. */
  dropped: number;
  expired: number;
}

export interface SocketReserve {
  /** undici's `connect` option. */
  readonly connect: Connector;
  /** Opens sockets until `spares` are ready or being opened. */
  warm(spares: number): void;
  stats(): SocketReserveStats;
  /** Destroys every spare; no more are opened. */
  close(): void;
}

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
  return { hostname, host: origin.host, protocol: origin.protocol, port: origin.port, servername: null, localAddress: null } as unknown as ConnectOptions;
}

export function createSocketReserve(origin: URL, options: SocketReserveOptions = {}): SocketReserve {
  const base: Connector = options.base ?? buildConnector(options.connectTimeoutMs !== undefined ? { timeout: options.connectTimeoutMs } : {});
  const maxIdleMs = options.maxIdleMs ?? 4_000;
  const nowMs = options.nowMs ?? (() => performance.now());
  const target = connectOptionsOf(origin);
  const spares: Spare[] = [];
  let wanted = 0;
  let opening = 0;
  let closed = false;
  const counts = { requested: 0, handed: 0, dropped: 0, expired: 0 };
  let sweeper: NodeJS.Timeout | null = null;

  const detach = (spare: Spare) => {
    spare.socket.off('end', spare.drop).off('close', spare.drop).off('error', spare.drop).off('readable', spare.drop);
  };
  const remove = (spare: Spare) => {
    const at = spares.indexOf(spare);
    if (at >= 0) spares.splice(at, 1);
    detach(spare);
  };

  const sweep = () => {
    const now = nowMs();
    for (const spare of [...spares]) {
      if (now - spare.since < maxIdleMs) continue;
      remove(spare);
      spare.socket.destroy();
      counts.expired++;
    }
    if (spares.length === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = null;
    }
  };

  const open = () => {
    opening++;
    base(target, (error, socket) => {
      opening--;
      if (error || !socket) {
        counts.dropped++;
        return;
      }
      const s = socket as Socket;
      if (closed) {
        s.destroy();
        return;
      }
      const spare: Spare = {
        socket: s,
        since: nowMs(),
        drop: () => {
          remove(spare);
          s.destroy();
          counts.dropped++;
        },
      };
      // Nothing may arrive on a connection that carried no request: whatever does (end, bytes,
      // an error) makes it unfit to carry one.
      s.once('end', spare.drop).once('close', spare.drop).once('error', spare.drop).once('readable', spare.drop);
      spares.push(spare);
      if (!sweeper) {
        sweeper = setInterval(sweep, Math.max(50, Math.min(1000, maxIdleMs / 4)));
        sweeper.unref();
      }
    });
  };

  const fill = () => {
    while (!closed && spares.length + opening < wanted) open();
  };

  const take = (): Socket | null => {
    while (spares.length > 0) {
      // The newest first: the oldest are the nearest to their idle limit.
      const spare = spares.pop() as Spare;
      detach(spare);
      const s = spare.socket;
      if (!s.destroyed && s.writable && !s.readableEnded && s.readableLength === 0 && nowMs() - spare.since < maxIdleMs) return s;
      s.destroy();
      counts.dropped++;
    }
    return null;
  };

  const connect: Connector = (opts: ConnectOptions, callback: Callback) => {
    counts.requested++;
    const socket = closed ? null : take();
    if (!socket) return base(opts, callback);
    counts.handed++;
    // undici calls its connector from inside its resume loop, which ignores a connection that
    // completes there; on a microtask the request is written as soon as the loop returns.
    queueMicrotask(() => callback(null, socket));
    return socket;
  };

  return {
    connect,
    warm(n: number) {
      if (closed) return;
      wanted = Math.max(0, Math.floor(n));
      fill();
    },
    stats: () => ({ spare: spares.length, opening, ...counts }),
    close() {
      closed = true;
      wanted = 0;
      for (const spare of spares.splice(0)) {
        detach(spare);
        spare.socket.destroy();
      }
      if (sweeper) clearInterval(sweeper);
      sweeper = null;
    },
  };
}
