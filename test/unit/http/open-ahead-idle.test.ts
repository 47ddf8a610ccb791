/**
 * An HTTP target's `openAhead(n)` counts the pool's idle keep-alive connections (its connections
 * less its requests in flight: lambdas/adapters/http/openai-target.ts) and opens only the rest,
 * against a real loopback server that counts the connections it accepts.
 */
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { until } from '../../support/until';

const RESPONSE =
  'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\n{}';
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Answers each request after `holdMs`, so that requests sent together each need a connection. */
async function countingServer(holdMs: number) {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.on('data', () => setTimeout(() => socket.destroyed || socket.write(RESPONSE), holdMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, sockets };
}

const request = (i: number) => ({
  requestId: `r${i}`,
  correlationId: `c${i}`,
  contentType: 'application/json',
  body: new TextEncoder().encode('{}'),
  streaming: false,
});
/** A wait, not a check on time. */
const soon = (check: () => boolean, what: string) => until(check, what, 10_000, 5);
/** Long enough for connections asked for to have been opened (loopback: well under a millisecond each). */
const settle = () => new Promise((r) => setTimeout(r, 300));

describe('openAhead counts the idle connections', () => {
  it('opens only what the idle ones do not cover, and counts them gone once the server closes them', async () => {
    const server = await countingServer(100);
    const target = createOpenAITarget({
      name: 't',
      baseUrl: server.url,
      timeoutMs: 5_000,
      clock: systemClock,
      reserveConnections: true,
    });
    cleanups.push(() => target.close());
    // Three at once: three connections, idle once answered.
    const results = await Promise.all([0, 1, 2].map((i) => target.send(request(i))));
    expect(results.map((r) => r.error)).toEqual([null, null, null]);
    expect(server.sockets).toHaveLength(3);
    const read = () => server.sockets.reduce((n, s) => n + s.bytesRead, 0);
    const requestBytes = read() / 3;
    // (The pool takes a connection back as idle a moment after its answer is read.)
    await settle();
    // Two in flight hold two of them: five ready asks for four more (one idle).
    const inFlight = [3, 4].map((i) => target.send(request(i)));
    await soon(() => read() === 5 * requestBytes, 'the two sent');
    expect(server.sockets, 'on idle connections').toHaveLength(3);
    target.openAhead(5);
    await soon(() => server.sockets.length === 7, 'four spares');
    await Promise.all(inFlight);
    // Three idle and four spares: seven ready, nothing more for five.
    target.openAhead(5);
    await settle();
    expect(server.sockets).toHaveLength(7);
    // The server closes every connection: none idle, no spare; five are opened.
    for (const s of server.sockets) s.destroy();
    await settle();
    target.openAhead(5);
    await soon(() => server.sockets.length === 12, 'five new');
    await settle();
    expect(server.sockets).toHaveLength(12);
  });
});
