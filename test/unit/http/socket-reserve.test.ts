/**
 * The socket reserve (lambdas/adapters/http/socket-reserve.ts) under an undici pool, against a
 * real loopback server that counts its connections: spares opened ahead serve the pool's new
 * connections (and are not replaced); a spare that is not clean (closed or written to by the
 * peer, idle too long) is never handed to a request.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createSocketReserve, type SocketReserve } from '../../../lambdas/adapters/http/socket-reserve';
import { until } from '../../support/until';

const RESPONSE = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok';

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

/** A wait, not a check on time: long enough for a worker at the lowest priority on a busy machine. */
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
  it('warm(n) opens n connections before any request; the pool\'s first connections are those, not replaced', async () => {
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
