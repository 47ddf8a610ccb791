/**
 * The bundled mock server over real HTTP on 127.0.0.1: routes and status codes, response
 * shapes, token timing on the absolute timeline, output length, seeded error injection, the
 * request log (the standalone process: test/e2e/mock-server-process.test.ts).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { seededRandom } from '../../../lambdas/core/random';
import { startMockServer, type MockServer, type MockServerOptions } from '../../../lambdas/mocks/mock-server';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function mock(options: MockServerOptions = {}): Promise<MockServer> {
  const server = await startMockServer(options);
  cleanups.push(() => server.close());
  return server;
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mock-server-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
}

const chat = (extra: object = {}) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi there' }], ...extra });

/** The JSON payloads of an SSE body, `[DONE]` kept as the string. */
function events(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice(6))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

describe('routes and status codes', () => {
  it.each([
    ['POST', '/v1/chat/completions', 200],
    ['POST', '/openai/v1/chat/completions', 200], // a path prefix, as behind a gateway
    ['POST', '/invocations', 200], // SageMaker-style
    ['POST', '/v1/chat/completions?api-version=1', 200],
    ['POST', '/v1/completions', 404],
    ['POST', '/v1/chat/completions/extra', 404],
    ['GET', '/v1/chat/completions', 404],
  ])('%s %s -> %i', async (method, path, status) => {
    const server = await mock({ ttftMs: 0, itlMs: 0, outputTokens: 1 });
    const response = await fetch(server.url + path, {
      method,
      ...(method === 'POST' ? { body: chat(), headers: { 'content-type': 'application/json' } } : {}),
    });
    expect(response.status).toBe(status);
    await response.arrayBuffer();
  });

  it('answers a body that is not JSON with 400', async () => {
    const server = await mock();
    const response = await post(`${server.url}/v1/chat/completions`, '{"messages": [');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });

  it.each(['null', '5', '"text"', '[]'])('answers a JSON body that is not an object (%s) with 400', async (body) => {
    const server = await mock();
    const response = await post(`${server.url}/v1/chat/completions`, body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { message: 'request body is not a JSON object', type: 'invalid_request_error' },
    });
  });

  it('requires the API key when one is set', async () => {
    const server = await mock({ apiKey: 'sekrit', ttftMs: 0, itlMs: 0, outputTokens: 1 });
    const url = `${server.url}/v1/chat/completions`;
    expect((await post(url, chat())).status).toBe(401);
    expect((await post(url, chat(), { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(url, chat(), { authorization: 'sekrit' })).status).toBe(401);
    expect((await post(url, chat(), { authorization: 'Bearer sekrit' })).status).toBe(200);
  });
});

describe('response shapes', () => {
  it('streams a role-only first chunk, n content chunks, a usage-only chunk, then [DONE]', async () => {
    const server = await mock({ ttftMs: 1, itlMs: 1, outputTokens: 3 });
    const response = await post(
      `${server.url}/v1/chat/completions`,
      chat({ stream: true, stream_options: { include_usage: true } }),
    );
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const got = events(await response.text()) as {
      choices?: { delta: Record<string, string>; finish_reason: string | null }[];
      usage?: unknown;
    }[];
    expect(got).toHaveLength(1 + 3 + 1 + 1);
    expect(got[0]!.choices![0]).toEqual({ index: 0, delta: { role: 'assistant' }, finish_reason: null });
    expect(got.slice(1, 4).map((e) => e.choices![0]!.delta.content)).toEqual(['lorem', ' ipsum', ' dolor']);
    expect(got.slice(1, 4).map((e) => e.choices![0]!.finish_reason)).toEqual([null, null, 'stop']);
    // "hi there": two words of prompt.
    expect(got[4]).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } });
    expect(got[5]).toBe('[DONE]');
  });

  it('leaves the usage chunk out unless include_usage asks for it', async () => {
    const server = await mock({ ttftMs: 0, itlMs: 0, outputTokens: 2 });
    const got = events(await (await post(`${server.url}/v1/chat/completions`, chat({ stream: true }))).text());
    expect(got).toHaveLength(1 + 2 + 1);
    expect(got.some((e) => typeof e === 'object' && e !== null && 'usage' in e)).toBe(false);
  });

  it('answers non-streaming with one chat.completion and its usage', async () => {
    const server = await mock({ ttftMs: 0, itlMs: 0, outputTokens: 4 });
    const body = await (await post(`${server.url}/v1/chat/completions`, chat({ model: 'my-model' }))).json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'my-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'lorem ipsum dolor sit' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 },
    });
  });

  it.each([
    // [body fields, outputTokens, expected n]
    [{}, 5, 5],
    [{ max_tokens: 3 }, 5, 3],
    [{ max_tokens: 30 }, 5, 5],
    [{ max_completion_tokens: 2 }, 5, 2],
    [{ max_tokens: 0 }, 5, 5], // not a usable cap: ignored
    [{ max_tokens: 'seven' }, 5, 5],
  ])('output length for %j with outputTokens %i is %i', async (fields, outputTokens, n) => {
    const server = await mock({ ttftMs: 0, itlMs: 0, outputTokens });
    const body = (await (await post(`${server.url}/v1/chat/completions`, chat(fields))).json()) as {
      usage: { completion_tokens: number };
    };
    expect(body.usage.completion_tokens).toBe(n);
  });

  it.each([
    [
      'string contents across messages',
      [
        { role: 'system', content: 'be  brief' },
        { role: 'user', content: ' one\ttwo\nthree ' },
      ],
      5,
    ],
    [
      'content parts, text only',
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a b' },
            { type: 'image_url', image_url: { url: 'x' } },
            { type: 'text', text: 'c' },
          ],
        },
      ],
      3,
    ],
    ['no content', [{ role: 'assistant', tool_calls: [] }], 0],
  ])('prompt_tokens counts whitespace-separated words: %s', async (_name, messages, words) => {
    const server = await mock({ ttftMs: 0, itlMs: 0, outputTokens: 1 });
    const body = (await (await post(`${server.url}/v1/chat/completions`, JSON.stringify({ messages }))).json()) as {
      usage: { prompt_tokens: number };
    };
    expect(body.usage.prompt_tokens).toBe(words);
  });
});

describe('timing', () => {
  // Lower bounds are exact (the server must never write a token early); upper bounds are
  // loose because the machine is shared.
  it.each([true, false])(
    'token k is never written before arrival + ttft + k*itl (preciseTimers %s)',
    async (preciseTimers) => {
      const ttftMs = 15;
      const itlMs = 7;
      const server = await mock({ ttftMs, itlMs, outputTokens: 6, preciseTimers });
      const target = createOpenAITarget({ name: 't', baseUrl: server.url, timeoutMs: 5000, clock: systemClock });
      cleanups.push(() => target.close());
      for (let round = 0; round < 3; round++) {
        const result = await target.send({
          requestId: `r${round}`,
          correlationId: 'c',
          contentType: 'application/json',
          body: Buffer.from(chat({ stream: true })),
          streaming: true,
        });
        expect(result.error).toBeNull();
        expect(result.contentChunkNs).toHaveLength(6);
        const arrivalNs = server.requests[round]!.arrivalNs;
        result.contentChunkNs.forEach((t, k) => {
          const lateMs = Number(t - arrivalNs) / 1e6 - (ttftMs + k * itlMs);
          expect(lateMs).toBeGreaterThanOrEqual(0);
          expect(lateMs).toBeLessThan(250);
        });
      }
    },
  );

  it('answers non-streaming requests no earlier than arrival + ttft + (n-1)*itl', async () => {
    const server = await mock({ ttftMs: 10, itlMs: 5, outputTokens: 4 });
    const target = createOpenAITarget({ name: 't', baseUrl: server.url, timeoutMs: 5000, clock: systemClock });
    cleanups.push(() => target.close());
    const result = await target.send({
      requestId: 'r',
      correlationId: 'c',
      contentType: 'application/json',
      body: Buffer.from(chat()),
      streaming: false,
    });
    expect(result.error).toBeNull();
    const ms = Number(result.requestAckNs! - server.requests[0]!.arrivalNs) / 1e6;
    expect(ms).toBeGreaterThanOrEqual(10 + 3 * 5);
    expect(ms).toBeLessThan(250);
  });
});

describe('error injection', () => {
  it('fails exactly the requests the seeded PRNG picks', async () => {
    const seed = 7;
    const rate = 0.3;
    const random = seededRandom(seed);
    const expected = Array.from({ length: 20 }, () => (random() < rate ? 500 : 200));
    const server = await mock({ errorRate: rate, seed, ttftMs: 0, itlMs: 0, outputTokens: 1 });
    const got: number[] = [];
    for (let i = 0; i < 20; i++) {
      const response = await post(`${server.url}/v1/chat/completions`, chat());
      got.push(response.status);
      await response.arrayBuffer();
    }
    expect(got).toEqual(expected);
    expect(got).toContain(500);
    expect(got).toContain(200);
  });

  it('does not spend a draw on requests rejected before it (bad JSON, unknown path)', async () => {
    const server = await mock({ errorRate: 0.5, seed: 1, ttftMs: 0, itlMs: 0, outputTokens: 1 });
    const random = seededRandom(1);
    const first = random() < 0.5 ? 500 : 200;
    await (await post(`${server.url}/v1/chat/completions`, 'nope')).arrayBuffer();
    await (await post(`${server.url}/elsewhere`, chat())).arrayBuffer();
    const response = await post(`${server.url}/v1/chat/completions`, chat());
    expect(response.status).toBe(first);
  });
});

describe('request record and log', () => {
  it('records each request with its bytes and headers, and logs one JSON line each', async () => {
    const dir = await tempDir();
    const logFile = join(dir, 'requests.jsonl');
    const server = await startMockServer({ ttftMs: 0, itlMs: 0, outputTokens: 1, logFile, apiKey: 'k' });
    // Bytes that a re-serialisation would change: spacing, key order, an escaped character.
    const bodies = ['{ "messages":[{"role":"user","content":"caf\\u00e9"}] ,"stream":false}', chat()];
    for (const [i, body] of bodies.entries()) {
      const response = await post(`${server.url}/v1/chat/completions`, body, {
        'x-request-id': `req-${i}`,
        'x-correlation-id': `corr-${i}`,
        authorization: i === 0 ? 'Bearer k' : 'Bearer no',
      });
      await response.arrayBuffer();
    }
    const recorded = server.requests.map((r) => ({ ...r }));
    await server.close(); // flushes the log
    expect(recorded.map((r) => r.body.toString('utf8'))).toEqual(bodies);
    expect(recorded.map((r) => [r.method, r.path, r.headers['x-request-id']])).toEqual([
      ['POST', '/v1/chat/completions', 'req-0'],
      ['POST', '/v1/chat/completions', 'req-1'],
    ]);
    const lines = (await readFile(logFile, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    lines.forEach((line, i) => {
      expect(line).toEqual({
        arrival_ns: recorded[i]!.arrivalNs.toString(),
        method: 'POST',
        path: '/v1/chat/completions',
        // Logged even when the key is wrong: the log is of what arrived.
        headers: {
          'x-request-id': `req-${i}`,
          'x-correlation-id': `corr-${i}`,
          'content-type': 'application/json',
          'authorization-present': true,
        },
        body_sha256: createHash('sha256').update(bodies[i]!).digest('hex'),
        body_base64: Buffer.from(bodies[i]!).toString('base64'),
      });
    });
  });

  it('keeps nothing in memory when recordRequests is false', async () => {
    const server = await mock({ recordRequests: false, ttftMs: 0, itlMs: 0, outputTokens: 1 });
    await (await post(`${server.url}/v1/chat/completions`, chat())).arrayBuffer();
    expect(server.requests).toEqual([]);
  });
});
