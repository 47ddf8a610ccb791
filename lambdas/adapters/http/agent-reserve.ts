/**
 * Connections opened ahead for a node:http(s) Agent: the AWS SDK's transport, so a SageMaker
 * target's, as socket-reserve.ts does for an HTTP target's undici pool. An agent opens a
 * connection when it has no idle one for a request, and that request waits for the connect and
 * the TLS handshake; the fire function keeps spares ready while its requests in flight grow
 * (handlers/fire-warm-up.ts), the same way for both kinds of target.
 *
 * The agents (which also take the wire stamp, wire-stamps.ts) use the same reserve, through
 * Node's documented `agent.createConnection(options, callback)`: a new connection for the
 * reserve's origin is a spare when one is ready, else opened as the agent would. Spares are
 * opened by `openAhead(origin, n, options?)` (n less the agent's idle keep-alive sockets for
 * that origin; how many by when and at once: WarmOptions), with the agent's own TLS options.
 */
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Duplex } from 'node:stream';
import { createSocketReserve, type SocketReserve, type WarmOptions } from './socket-reserve';
import { WireStampingHttpAgent, WireStampingHttpsAgent } from '../wire-stamps';

type Callback = (error: Error | null, socket: Duplex | null) => void;
interface Options {
  host?: string | null;
  hostname?: string | null;
  port?: number | string | null;
  servername?: string | null;
}

/** What both agents add: a reserve for one origin, its spares opened by `openAhead`. */
interface Reserving {
  openAhead(origin: URL, connections: number, options?: WarmOptions): void;
  reserveStats(): ReturnType<SocketReserve['stats']> | null;
}

/** Opens one connection to `opts`' host and port as the agent would (TLS with its options for https), calling back once it is ready. */
function opener(tls: boolean, agentOptions: object) {
  return (opts: Options, callback: Callback): Socket => {
    const host = (opts.hostname || opts.host || 'localhost').replace(/^\[(.*)\]$/, '$1');
    const port = Number(opts.port) || (tls ? 443 : 80);
    const servername = opts.servername || (isIP(host) ? undefined : host);
    const socket = tls
      ? tlsConnect({ ...agentOptions, host, port, ...(servername ? { servername } : {}) })
      : netConnect({ host, port });
    const ready = tls ? 'secureConnect' : 'connect';
    const onError = (error: Error) => callback(error, null);
    socket.once('error', onError);
    socket.once(ready, () => {
      socket.off('error', onError);
      callback(null, socket);
    });
    return socket;
  };
}

/** The origin's `host:port` as an agent's options name it. */
function originKey(o: Options, tls: boolean): string {
  const host = (o.hostname || o.host || '').replace(/^\[(.*)\]$/, '$1');
  return `${host}:${Number(o.port) || (tls ? 443 : 80)}`;
}

/** The mixin's state and behaviour, shared by the http and https agents. */
class AgentReserve {
  reserve: SocketReserve | null = null;
  key = '';

  constructor(
    private readonly tls: boolean,
    private readonly agentOptions: () => object,
  ) {}

  openAhead(origin: URL, connections: number, idle: (key: string) => number, options?: WarmOptions): void {
    if (!this.reserve) {
      this.key = originKey({ hostname: origin.hostname, port: origin.port }, this.tls);
      this.reserve = createSocketReserve(origin, { base: opener(this.tls, this.agentOptions()) as never });
    }
    this.reserve.warm(connections - idle(this.key), options);
  }

  /** A spare for the reserve's origin when one is ready, else null (the agent opens one itself). */
  connection(options: Options, callback: Callback): Duplex | null {
    if (!this.reserve || this.reserve.stats().spare === 0 || originKey(options, this.tls) !== this.key) return null;
    return this.reserve.connect(options as never, callback as never) as unknown as Duplex;
  }
}

/** Idle keep-alive sockets an agent holds for `host:port` (its freeSockets' names start with it). */
function idleSockets(agent: { freeSockets: NodeJS.ReadOnlyDict<unknown[]> }, key: string): number {
  let n = 0;
  for (const [name, list] of Object.entries(agent.freeSockets))
    if (name.startsWith(`${key}:`) || name === key) n += list?.length ?? 0;
  return n;
}

// oxlint-disable-next-line typescript/no-explicit-any -- a mixin's base takes any arguments (TypeScript's rule for mixins)
type AgentClass = new (...args: any[]) => WireStampingHttpAgent;

/** The agent `Base` with a reserve: `openAhead(origin, n)`, and new connections to that origin taken from its spares. */
function reserving<B extends AgentClass>(Base: B, tls: boolean) {
  return class extends Base implements Reserving {
    readonly spares = new AgentReserve(tls, () => (this as unknown as { options: object }).options);

    openAhead(origin: URL, connections: number, options?: WarmOptions): void {
      this.spares.openAhead(
        origin,
        connections,
        (key) => idleSockets(this as unknown as { freeSockets: NodeJS.ReadOnlyDict<unknown[]> }, key),
        options,
      );
    }

    reserveStats() {
      return this.spares.reserve?.stats() ?? null;
    }

    override createConnection(options: Options, callback: Callback): Duplex {
      const own = super.createConnection as unknown as (o: Options, c: Callback) => Duplex;
      return this.spares.connection(options, callback) ?? own.call(this, options, callback);
    }

    override destroy(): void {
      this.spares.reserve?.close();
      super.destroy();
    }
  };
}

/** node:http's agent with the wire stamp and a reserve (an endpoint over plain HTTP: mocks, local tests). */
export const ReservingHttpAgent = reserving(WireStampingHttpAgent, false);
/** node:https's agent with the wire stamp and a reserve (a SageMaker runtime endpoint in AWS). */
export const ReservingHttpsAgent = reserving(WireStampingHttpsAgent as unknown as AgentClass, true);
export type ReservingAgent = InstanceType<typeof ReservingHttpAgent>;
