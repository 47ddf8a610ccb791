/**
 * The mock server's writes: tokens due at the same moment go out in one write (one chunk of
 * the chunked response), as a server flushes what it has generated; tokens due apart go out
 * apart.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '../../../lambdas/mocks/mock-server';

/** The body chunks (their sizes) of a chunked HTTP response to a streamed chat request, read raw. */
async function chunkSizes(url: string, maxTokens: number): Promise<number[]> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({
    model: 'm',
    stream: true,
    max_tokens: maxTokens,
    messages: [{ role: 'user', content: 'hi' }],
  });
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      text += d;
      // The chunked body's last chunk: the response is whole.
      if (text.endsWith('\r\n0\r\n\r\n')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: ` +
        `application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
  let rest = raw.slice(head.length + 4);
  const sizes: number[] = [];
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return sizes;
    sizes.push(size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

describe('mock server writes', () => {
  let instant: MockServer;
  let spaced: MockServer;
  beforeAll(async () => {
    instant = await startMockServer({ ttftMs: 0, itlMs: 0, outputTokens: 200 });
    spaced = await startMockServer({ ttftMs: 0, itlMs: 100, outputTokens: 200 });
  });
  afterAll(async () => {
    await instant?.close();
    await spaced?.close();
  });

  it('with no inter-token latency: the role event, then the whole answer in one write', async () => {
    const sizes = await chunkSizes(instant.url, 200);
    expect(sizes).toHaveLength(2);
  });

  it(
    'with an inter-token latency: tokens 100 ms apart are written apart (a write each, unless a stall of the ' +
      'loaded machine made some due together)',
    async () => {
      const sizes = await chunkSizes(spaced.url, 5);
      expect(sizes.length).toBeGreaterThan(2);
      expect(sizes.length).toBeLessThanOrEqual(6);
    },
  );
});
