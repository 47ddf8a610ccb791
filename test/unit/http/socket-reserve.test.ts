/**
 * The socket reserve (lambdas/adapters/http/socket-reserve.ts) under an undici pool, against a
 * real loopback server that counts its connections: spares opened ahead serve the pool's new
 * connections (and are not replaced); a spare that is not clean (closed or written to by the
 * peer, idle too long) is never handed to a request.
 */
import { EventEmitter } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createSocketReserve, type SocketReserve } from '../../../lambdas/adapters/http/socket-reserve';
import { until } from '../../support/until';

const RESPONSE = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok';

/** A connected socket as far as the reserve looks at one. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  writable = true;
  readableEnded = false;
  readableLength = 0;
  destroy() {
    this.destroyed = true;
    return this;
  }
}

interface CountingServer {
  server: Server;
  origin: URL;
  sockets: Socket[];
  /** Requests answered, by the connection they came on (its index in `sockets`). */
  answeredOn: number[];
  /** Milliseconds to hold each answer (so that concurrent requests each need a connection). */
  holdMs: number;
}

const open: { pools: Pool[]; reserves: SocketReserve[]; servers: Server[] } = { pools: [], reserves: [], servers: [] };

afterEach(async () => {
  for (const reserve of open.reserves.splice(0)) reserve.close();
  await Promise.all(open.pools.splice(0).map((pool) => pool.destroy()));
  for (const server of open.servers.splice(0)) server.close();
});

async function countingServer(holdMs = 0): Promise<CountingServer> {
  const state = { sockets: [] as Socket[], answeredOn: [] as number[], holdMs };
  const server = createServer((socket) => {
    const id = state.sockets.push(socket) - 1;
    socket.on('error', () => undefined);
    socket.on('data', () => {
      setTimeout(() => {
        state.answeredOn.push(id);
        if (!socket.destroyed) socket.write(RESPONSE);
      }, state.holdMs);
    });
  });
  open.servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return Object.assign(state, { server, origin: new URL(`http://127.0.0.1:${port}`) });
}

/** A wait, not a check on time: long enough for a worker on a busy machine. */
const soon = (check: () => boolean, what: string) => until(check, what, 10_000, 5);

function poolWith(origin: URL, reserve: SocketReserve): Pool {
  open.reserves.push(reserve);
  const pool = new Pool(origin.origin, { connections: 64, connect: reserve.connect });
  open.pools.push(pool);
  return pool;
}

const get = async (pool: Pool) => {
  const response = await pool.request({ path: '/', method: 'POST', body: 'x' });
  await response.body.text();
  return response.statusCode;
};

describe('socket reserve', () => {
  it("warm(n) opens n connections before any request; the pool's first connections are those, not replaced", async () => {
    const server = await countingServer(50);
    const reserve = createSocketReserve(server.origin);
    const pool = poolWith(server.origin, reserve);
    reserve.warm(5);
    await soon(() => reserve.stats().spare === 5 && server.sockets.length === 5, 'five spares');
    expect(server.answeredOn).toEqual([]);

    // Three requests at once, each held 50 ms by the server: three connections, all spares.
    expect(await Promise.all([get(pool), get(pool), get(pool)])).toEqual([200, 200, 200]);
    expect(new Set(server.answeredOn).size).toBe(3);
    expect(server.answeredOn.every((id) => id < 5)).toBe(true);
    // The spares taken are not replaced: two left, five connections in all.
    await new Promise((r) => setTimeout(r, 50));
    expect(server.sockets).toHaveLength(5);
    expect(reserve.stats()).toMatchObject({ spare: 2, opening: 0, requested: 3, handed: 3, dropped: 0 });
    // Warmed again, it tops the spares up to what is asked.
    reserve.warm(4);
    await soon(() => reserve.stats().spare === 4 && server.sockets.length === 7, 'four spares');
  });

  it('a smaller warm closes no spare; warm after close opens nothing', async () => {
    const server = await countingServer();
    const reserve = createSocketReserve(server.origin);
    poolWith(server.origin, reserve);
    reserve.warm(3);
    reserve.warm(1);
    await soon(() => reserve.stats().spare === 3 && server.sockets.length === 3, 'three spares');
    reserve.close();
    expect(reserve.stats().spare).toBe(0);
    reserve.warm(4);
    await new Promise((r) => setTimeout(r, 50));
    expect(server.sockets).toHaveLength(3);
    await soon(() => server.sockets.every((s) => s.destroyed || s.readableEnded), 'the spares closed');
  });

  it('a spare the server closed is dropped, not handed to a request: the request gets a fresh connection', async () => {
    const server = await countingServer();
    const reserve = createSocketReserve(server.origin);
    const pool = poolWith(server.origin, reserve);
    reserve.warm(2);
    await soon(() => reserve.stats().spare === 2 && server.sockets.length === 2, 'two spares');
    for (const socket of server.sockets) socket.end();
    await soon(() => reserve.stats().spare === 0, 'the closed spares dropped');
    expect(reserve.stats().dropped).toBe(2);
    expect(await get(pool)).toBe(200);
    expect(server.answeredOn).toEqual([2]);
    expect(reserve.stats()).toMatchObject({ requested: 1, handed: 0 });
  });

  it('a spare the server wrote to (an idle-timeout answer) is dropped, not handed to a request', async () => {
    const server = await countingServer();
    const reserve = createSocketReserve(server.origin);
    const pool = poolWith(server.origin, reserve);
    reserve.warm(1);
    await soon(() => reserve.stats().spare === 1 && server.sockets.length === 1, 'a spare');
    server.sockets[0]?.write('HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\r\n');
    await soon(() => reserve.stats().spare === 0, 'the written-to spare dropped');
    expect(await get(pool)).toBe(200);
    expect(server.answeredOn).toEqual([1]);
  });

  it('spares idle past maxIdleMs are closed and not replaced', async () => {
    const server = await countingServer();
    let now = 0;
    const reserve = createSocketReserve(server.origin, { maxIdleMs: 200, nowMs: () => now });
    const pool = poolWith(server.origin, reserve);
    reserve.warm(2);
    await soon(() => reserve.stats().spare === 2 && server.sockets.length === 2, 'two spares');
    now = 500;
    await soon(() => reserve.stats().expired === 2, 'the spares expired');
    expect(reserve.stats()).toMatchObject({ spare: 0, opening: 0 });
    await soon(() => server.sockets.every((s) => s.destroyed || s.readableEnded), 'the expired spares closed');
    expect(server.sockets).toHaveLength(2);
    expect(await get(pool)).toBe(200);
    expect(server.answeredOn).toEqual([2]);
  });

  it("opens at most maxOpening at once, the next as one is made: a burst is not thrown at a server's accept backlog", async () => {
    const server = await countingServer();
    const reserve = createSocketReserve(server.origin, { maxOpening: 4 });
    poolWith(server.origin, reserve);
    reserve.warm(10);
    expect(reserve.stats()).toMatchObject({ opening: 4, queued: 6, spare: 0 });
    await soon(() => reserve.stats().spare === 10 && server.sockets.length === 10, 'ten spares');
    expect(reserve.stats()).toMatchObject({ opening: 0, queued: 0 });
  });

  it('warm(n, { atOnce }) opens fewer at a time, within maxOpening; the next warm without it opens at maxOpening again', () => {
    const connects: (() => void)[] = [];
    const base = ((_options: unknown, callback: (error: Error | null, socket: unknown) => void) => {
      connects.push(() => callback(null, new FakeSocket()));
    }) as never;
    const reserve = createSocketReserve(new URL('http://127.0.0.1:9'), { base, maxOpening: 4 });
    open.reserves.push(reserve);
    reserve.warm(5, { atOnce: 2 });
    expect(reserve.stats()).toMatchObject({ opening: 2, queued: 3 });
    connects.shift()?.();
    expect(reserve.stats()).toMatchObject({ spare: 1, opening: 2, queued: 2 });
    // Asked for more than maxOpening allows: maxOpening.
    reserve.warm(10, { atOnce: 8 });
    expect(reserve.stats()).toMatchObject({ spare: 1, opening: 4 });
    reserve.warm(20);
    expect(reserve.stats()).toMatchObject({ opening: 4 });
  });

  it('warm(n, withinMs) starts no spare that its connects so far say would be ready later than that', () => {
    // A connector that connects when told, on a clock the test moves.
    let now = 0;
    const connects: (() => void)[] = [];
    const base = ((_options: unknown, callback: (error: Error | null, socket: unknown) => void) => {
      connects.push(() => callback(null, new FakeSocket()));
    }) as never;
    const reserve = createSocketReserve(new URL('http://127.0.0.1:9'), { base, maxOpening: 2, nowMs: () => now });
    open.reserves.push(reserve);
    reserve.warm(10, { withinMs: 100 });
    expect(reserve.stats()).toMatchObject({ opening: 2, queued: 8 });
    // Each connect takes 40 ms: at 40 ms the next two start (ready by about 80), at 80 none (ready by 120 > 100).
    now = 40;
    connects.shift()?.();
    connects.shift()?.();
    expect(reserve.stats()).toMatchObject({ spare: 2, opening: 2, queued: 6 });
    now = 80;
    connects.shift()?.();
    expect(reserve.stats()).toMatchObject({ spare: 3, opening: 1, queued: 0 });
    connects.shift()?.();
    expect(reserve.stats()).toMatchObject({ spare: 4, opening: 0, queued: 0 });
    expect(connects).toHaveLength(0);
    // Without a bound, warm opens what it is asked for.
    reserve.warm(6);
    expect(reserve.stats()).toMatchObject({ opening: 2, queued: 0 });
  });

  it('many spares expiring together are closed a few at a time, every one in the end', async () => {
    let now = 0;
    const made: FakeSocket[] = [];
    const base = ((_options: unknown, callback: (error: Error | null, socket: unknown) => void) => {
      const socket = new FakeSocket();
      made.push(socket);
      queueMicrotask(() => callback(null, socket));
    }) as never;
    const reserve = createSocketReserve(new URL('http://127.0.0.1:9'), { base, maxIdleMs: 200, nowMs: () => now });
    open.reserves.push(reserve);
    reserve.warm(50);
    await soon(() => reserve.stats().spare === 50, 'fifty spares');
    now = 1_000;
    await soon(() => reserve.stats().expired > 0, 'the first expired');
    // One batch, not all fifty at once; the rest follow.
    expect(reserve.stats().expired).toBeLessThan(50);
    await soon(() => reserve.stats().expired === 50, 'every spare expired');
    expect(made.every((s) => s.destroyed)).toBe(true);
    expect(reserve.stats()).toMatchObject({ spare: 0, dropped: 0 });
  });

  it('a warm-up connection that fails is counted, and the request that needs one still connects (and fails) on its own', async () => {
    const server = await countingServer();
    const closedPort = new URL(server.origin.href);
    await new Promise<void>((resolve) => server.server.close(() => resolve()));
    open.servers.splice(open.servers.indexOf(server.server), 1);
    const reserve = createSocketReserve(closedPort);
    const pool = poolWith(closedPort, reserve);
    reserve.warm(2);
    await soon(() => reserve.stats().dropped === 2 && reserve.stats().opening === 0, 'the failed warm-up counted');
    await expect(get(pool)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
