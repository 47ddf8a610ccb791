/**
 * The HTTP target against real sockets on 127.0.0.1: the bundled mock server, and small
 * hand-written servers for the SSE shapes real stacks produce (and break).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import type { TargetRequest } from '../../../lambdas/ports';
import { startMockServer, type MockServer } from '../../../lambdas/mocks/mock-server';
import { REPO_ROOT } from '../../support/processes';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function request(
  streaming: boolean,
  body = `{"messages":[{"role":"user","content":"one two three"}],"stream":${streaming}}`,
): TargetRequest {
  return {
    requestId: 'req-1',
    correlationId: 'corr-1',
    contentType: 'application/json',
    body: Buffer.from(body),
    streaming,
  };
}

async function mock(options: Parameters<typeof startMockServer>[0] = {}): Promise<MockServer> {
  const server = await startMockServer(options);
  cleanups.push(() => server.close());
  return server;
}

function target(url: string, extra: Partial<Parameters<typeof createOpenAITarget>[0]> = {}) {
  const t = createOpenAITarget({ name: 't', baseUrl: url, timeoutMs: 5000, clock: systemClock, ...extra });
  cleanups.push(() => t.close());
  return t;
}

/** A raw server that writes the given pieces, pausing between them, then ends (or destroys). */
async function rawServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function sse(pieces: string[], opts: { destroy?: boolean; gapMs?: number } = {}) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const next = () => {
      if (i < pieces.length) {
        res.write(pieces[i++]);
        setTimeout(next, opts.gapMs ?? 2);
      } else if (opts.destroy) res.socket?.destroy();
      else res.end();
    };
    next();
  };
}

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

describe('against the mock server', () => {
  it('streams: one content timestamp per token, in order, usage from the last chunk, exact body and headers', async () => {
    const server = await mock({ ttftMs: 20, itlMs: 5, outputTokens: 6 });
    const body =
      '{"messages":[{"role":"user","content":"one two three"}],"stream":true,"stream_options":{"include_usage":true}}';
    const result = await target(server.url, { apiKey: 'k' }).send(request(true, body));
    expect(result.error).toBeNull();
    expect(result.contentChunkNs).toHaveLength(6);
    expect([...result.contentChunkNs].sort((a, b) => (a < b ? -1 : 1))).toEqual(result.contentChunkNs);
    expect(result.usage).toEqual({ promptTokens: 3, completionTokens: 6 });
    // Pick-up, then the write to the socket, then the response.
    expect(result.requestWireNs).toBeTypeOf('bigint');
    expect(result.requestStartNs <= result.requestWireNs! && result.requestWireNs! <= result.requestAckNs!).toBe(true);
    expect(result.contentChunkNs[5]! <= result.requestEndNs).toBe(true);
    // TTFT (from the wire, as records measure it) is at least the configured 20 ms (loose upper bound: busy machines exist).
    const ttftMs = Number(result.contentChunkNs[0]! - result.requestWireNs!) / 1e6;
    expect(ttftMs).toBeGreaterThanOrEqual(19.5);
    expect(ttftMs).toBeLessThan(500);
    const received = server.requests[0]!;
    expect(received.body.toString()).toBe(body);
    expect(received.headers).toMatchObject({
      'x-request-id': 'req-1',
      'x-correlation-id': 'corr-1',
      'content-type': 'application/json',
      authorization: 'Bearer k',
    });
  });

  it('non-streaming: usage from the JSON body, no chunks', async () => {
    const server = await mock({ ttftMs: 5, itlMs: 1, outputTokens: 4 });
    const result = await target(server.url).send(request(false));
    expect(result).toMatchObject({
      error: null,
      httpStatus: 200,
      contentChunkNs: [],
      usage: { promptTokens: 3, completionTokens: 4 },
    });
  });

  it.each([
    // [base URL suffix, path option, path the server sees]
    ['', undefined, '/v1/chat/completions'],
    ['/', undefined, '/v1/chat/completions'],
    ['/openai', undefined, '/openai/v1/chat/completions'],
    ['/openai/', 'v1/chat/completions', '/openai/v1/chat/completions'],
    ['', '/invocations', '/invocations'],
  ])('base URL +%j with path %j posts to %s', async (suffix, path, expected) => {
    const server = await mock({ ttftMs: 0, itlMs: 0, outputTokens: 1 });
    const result = await target(server.url + suffix, path === undefined ? {} : { path }).send(request(false));
    expect(result.error).toBeNull();
    expect(server.requests.map((r) => r.path)).toEqual([expected]);
  });

  it('sends no Authorization header without an API key', async () => {
    const server = await mock({ ttftMs: 0, itlMs: 0, outputTokens: 1 });
    await target(server.url).send(request(false));
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('honours max_tokens for the output length', async () => {
    const server = await mock({ outputTokens: 50, ttftMs: 1, itlMs: 0 });
    const result = await target(server.url).send(
      request(true, '{"messages":[],"stream":true,"max_tokens":3,"stream_options":{"include_usage":true}}'),
    );
    expect(result.contentChunkNs).toHaveLength(3);
    expect(result.usage?.completionTokens).toBe(3);
  });

  it('HTTP errors become error results with the status', async () => {
    const failing = await mock({ errorRate: 1 });
    expect((await target(failing.url).send(request(true))).error).toMatchObject({
      code: 500,
      type: 'HTTPError',
      message: expect.stringContaining('injected failure'),
    });
    const locked = await mock({ apiKey: 'secret' });
    expect((await target(locked.url).send(request(true))).error).toMatchObject({ code: 401, type: 'HTTPError' });
    expect((await target(locked.url).send(request(false, 'not json'))).error?.code).toBe(401);
  });

  it('error injection is deterministic under a seed', async () => {
    const pattern = async (seed: number) => {
      const server = await mock({ errorRate: 0.5, seed, ttftMs: 0, itlMs: 0, outputTokens: 1 });
      const t = target(server.url);
      const out: boolean[] = [];
      for (let i = 0; i < 16; i++) out.push((await t.send(request(false))).error === null);
      return out;
    };
    const a = await pattern(3);
    expect(await pattern(3)).toEqual(a);
    expect(a.filter(Boolean).length).toBeGreaterThan(2);
    expect(a.filter(Boolean).length).toBeLessThan(14);
  });
});

describe('transport failures', () => {
  it('times out a server that never answers', async () => {
    const url = await rawServer(() => undefined);
    const result = await target(url, { timeoutMs: 150 }).send(request(true));
    expect(result.error).toMatchObject({ code: 408, type: 'TimeoutError' });
    expect(Number(result.requestEndNs - result.requestStartNs) / 1e6).toBeGreaterThanOrEqual(140);
  });

  it('reports a refused connection', async () => {
    const url = await rawServer(() => undefined);
    const port = new URL(url).port;
    await cleanups.pop()!(); // close it: nothing listens there now
    const result = await target(`http://127.0.0.1:${port}`).send(request(true));
    expect(result.error).toMatchObject({
      code: null,
      type: 'ConnectionError',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('reports a connection reset mid-stream, keeping the chunks seen so far', async () => {
    const url = await rawServer(
      sse([chunk({ role: 'assistant' }), chunk({ content: 'a' }), chunk({ content: 'b' })], { destroy: true }),
    );
    const result = await target(url).send(request(true));
    expect(result.error?.type).toBe('ConnectionError');
    expect(result.contentChunkNs).toHaveLength(2);
  });
});

describe('SSE shapes', () => {
  it('role-only first chunk, keep-alive comments, CRLF, usage-only last chunk, [DONE]', async () => {
    const crlf = (s: string) => s.replace(/\n/g, '\r\n');
    const url = await rawServer(
      sse([
        crlf(chunk({ role: 'assistant' })),
        ': keep-alive\r\n\r\n',
        crlf(chunk({ content: 'Hel' })),
        crlf(chunk({ content: 'lo' }, 'stop')),
        crlf(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } })}\n\n`),
        'data: [DONE]\r\n\r\n',
      ]),
    );
    const result = await target(url).send(request(true));
    expect(result.error).toBeNull();
    expect(result.contentChunkNs).toHaveLength(2);
    expect(result.usage).toEqual({ promptTokens: 3, completionTokens: 2 });
  });

  it('events split across TCP writes at odd places parse the same', async () => {
    const whole =
      chunk({ role: 'assistant' }) +
      chunk({ content: 'x' }) +
      chunk({ content: 'y' }) +
      chunk({ reasoning_content: 'hmm' }) +
      chunk({ tool_calls: [{ index: 0 }] }, 'tool_calls') +
      'data: [DONE]\n\n';
    const pieces: string[] = [];
    for (let i = 0; i < whole.length; i += 7) pieces.push(whole.slice(i, i + 7));
    const url = await rawServer(sse(pieces, { gapMs: 0 }));
    const result = await target(url).send(request(true));
    expect(result.error).toBeNull();
    expect(result.contentChunkNs).toHaveLength(4); // content x2, reasoning, tool call; not the role chunk
  });

  it('a data line that is not JSON is a malformed stream', async () => {
    const url = await rawServer(sse([chunk({ content: 'a' }), 'data: {oops\n\n', 'data: [DONE]\n\n']));
    expect((await target(url).send(request(true))).error?.type).toBe('MalformedStream');
  });

  it('an error object in the stream is a stream error', async () => {
    const url = await rawServer(
      sse([chunk({ content: 'a' }), `data: ${JSON.stringify({ error: { message: 'overloaded' } })}\n\n`]),
    );
    expect((await target(url).send(request(true))).error).toMatchObject({ type: 'StreamError', message: 'overloaded' });
  });

  it('an error reported on a stream that stays open ends the request at once, not at the timeout', async () => {
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ content: 'a' }) + 'data: not json\n\n'); // and never ends
    });
    const result = await target(url, { timeoutMs: 10_000 }).send(request(true));
    expect(result.error?.type).toBe('MalformedStream');
    expect(Number(result.requestEndNs - result.requestStartNs) / 1e6).toBeLessThan(5_000);
  });

  it('a stream that ends early is truncated', async () => {
    const url = await rawServer(sse([chunk({ role: 'assistant' }), chunk({ content: 'a' })]));
    const result = await target(url).send(request(true));
    expect(result.error?.type).toBe('StreamTruncated');
    expect(result.contentChunkNs).toHaveLength(1);
  });

  it('a non-streaming 200 that is not JSON is a malformed response', async () => {
    const url = await rawServer((_req, res) => res.end('<html>gateway</html>'));
    expect((await target(url).send(request(false))).error).toMatchObject({ code: 200, type: 'MalformedResponse' });
  });
});

describe('mock server as its own process', () => {
  it('prints its URL, serves, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(REPO_ROOT, 'lambdas/mocks/mock-server.ts'),
        '--port',
        '0',
        '--ttft-ms',
        '1',
        '--itl-ms',
        '0',
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [first] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const { url } = JSON.parse(first) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const result = await target(url).send(request(false));
    expect(result.error).toBeNull();
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  });
});

describe('what counts as a success, and what is kept of a response', () => {
  const json =
    (status: number, body: unknown, headers: Record<string, string> = {}) =>
    (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };

  it('a redirect is an HTTP error, not followed', async () => {
    const url = await rawServer(json(302, 'moved', { location: 'http://elsewhere.invalid/v1' }));
    expect((await target(url).send(request(false))).error).toMatchObject({
      code: 302,
      type: 'HTTPError',
      message: 'HTTP 302: redirect to http://elsewhere.invalid/v1',
    });
  });

  it.each([
    ['an error member', { error: { message: 'model overloaded', type: 'server_error' } }, 'model overloaded'],
    ['a string error', { error: 'bad things' }, 'bad things'],
    ["vLLM's object: error", { object: 'error', message: 'too long', type: 'BadRequestError', code: 400 }, 'too long'],
  ])('a 200 answer carrying %s is a ResponseError', async (_name, body, message) => {
    const url = await rawServer(json(200, body));
    expect((await target(url).send(request(false))).error).toMatchObject({
      code: 200,
      type: 'ResponseError',
      message: `HTTP 200 with an error object: ${message}`,
    });
  });

  it('error: null and a 2xx other than 200 are fine', async () => {
    const url = await rawServer(
      json(201, { choices: [], usage: { prompt_tokens: 2, completion_tokens: 3 }, error: null }),
    );
    expect(await target(url).send(request(false))).toMatchObject({
      error: null,
      httpStatus: 201,
      usage: { promptTokens: 2, completionTokens: 3 },
    });
  });

  it.each([
    [
      { prompt_tokens: 1e308, completion_tokens: 7 },
      { promptTokens: null, completionTokens: 7 },
    ],
    [{ prompt_tokens: 0.5, completion_tokens: 0.5 }, null],
    [{ prompt_tokens: -1, completion_tokens: '3' }, null],
    [
      { prompt_tokens: 10_000_000, completion_tokens: 10_000_001 },
      { promptTokens: 10_000_000, completionTokens: null },
    ],
  ])('usage %j is believed as %j', async (usage, expected) => {
    const url = await rawServer(json(200, { choices: [], usage }));
    expect((await target(url).send(request(false))).usage).toEqual(expected);
    const streamed = await rawServer(
      sse([chunk({ content: 'a' }, 'stop'), `data: ${JSON.stringify({ choices: [], usage })}\n\n`, 'data: [DONE]\n\n']),
    );
    expect((await target(streamed).send(request(true))).usage).toEqual(expected);
  });

  it('an empty or cut-off 2xx body is malformed', async () => {
    expect(
      (await target(await rawServer((_q, res) => res.writeHead(204).end())).send(request(false))).error,
    ).toMatchObject({ code: 204, type: 'MalformedResponse' });
    expect(
      (await target(await rawServer(json(200, '{"choices":[{"message":'))).send(request(false))).error,
    ).toMatchObject({ code: 200, type: 'MalformedResponse' });
    expect((await target(await rawServer(json(200, '[1,2]'))).send(request(false))).error).toMatchObject({
      code: 200,
      type: 'MalformedResponse',
    });
  });

  it("a malformed answer's message names its media type only: the server's content-type text is not kept", async () => {
    const url = await rawServer(
      json(200, '<html>hello</html>', {
        'content-type': `text/html; charset=utf-8; note="you said: ${'secret '.repeat(50)}"`,
      }),
    );
    expect((await target(url, { responseExcerptChars: 0 }).send(request(false))).error).toEqual({
      code: 200,
      type: 'MalformedResponse',
      message: 'response is not one JSON object (18 bytes, content-type text/html)',
    });
    const odd = await rawServer(json(200, 'plain', { 'content-type': 'you said secret things' }));
    expect((await target(odd).send(request(false))).error!.message).toBe(
      'response is not one JSON object (5 bytes, content-type other)',
    );
  });

  it('an error body is cut to the excerpt length; with excerpts off, no response text', async () => {
    const url = await rawServer(json(500, { error: { message: 'you said: ' + 'secret '.repeat(200) } }));
    const cut = (await target(url).send(request(false))).error!;
    expect(cut.message.startsWith('HTTP 500: you said: secret secret')).toBe(true);
    expect(cut.message.length).toBe('HTTP 500: '.length + 160);
    const none = (await target(url, { responseExcerptChars: 0 }).send(request(false))).error!;
    expect(none).toEqual({ code: 500, type: 'HTTPError', message: 'HTTP 500 (response text not kept)' });
    const streamed = await rawServer(
      sse([chunk({ content: 'a' }), `data: ${JSON.stringify({ error: { message: 'secret' } })}\n\n`]),
    );
    expect((await target(streamed, { responseExcerptChars: 0 }).send(request(true))).error).toMatchObject({
      type: 'StreamError',
      message: 'error object in the stream (response text not kept)',
    });
  });

  it('an SSE event over 1 MiB ends the request as a malformed stream', async () => {
    const url = await rawServer(sse([chunk({ content: 'a' }), 'data: ' + 'x'.repeat(1024 * 1024 + 10)]));
    expect((await target(url).send(request(true))).error).toMatchObject({
      code: null,
      type: 'MalformedStream',
      message: expect.stringContaining('exceeds'),
    });
  });
});
