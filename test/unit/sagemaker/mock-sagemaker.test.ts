/**
 * The bundled mock SageMaker runtime over raw HTTP (the SDK's side is the integration
 * test's): routes, auth, error shapes, the tabular and binary models, event-stream framing.
 */
import { createHash } from 'node:crypto';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { afterEach, describe, expect, it } from 'vitest';
import {
  rowScore,
  startMockSageMaker,
  type MockSageMaker,
  type MockSageMakerOptions,
} from '../../../lambdas/mocks/mock-sagemaker';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function mock(options: MockSageMakerOptions = {}): Promise<MockSageMaker> {
  const server = await startMockSageMaker({ ttftMs: 0, itlMs: 0, outputTokens: 3, ...options });
  cleanups.push(() => server.close());
  return server;
}

const AUTH =
  `AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/sagemaker/aws4_request, SignedHeaders=host;x-amz-date, ` +
  `Signature=${'a'.repeat(64)}`;

function invoke(server: MockSageMaker, path: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  return fetch(server.url + path, {
    method: 'POST',
    body,
    headers: { authorization: AUTH, 'content-type': 'application/json', ...headers },
  });
}

const chat = JSON.stringify({ messages: [{ role: 'user', content: 'hi there' }] });

/** The event-stream messages of a body, each cut at its prelude's total length and decoded by the SDK's codec. */
function messages(bytes: Uint8Array) {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: { headers: Record<string, unknown>; body: string }[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    const length = view.getUint32(offset, false);
    const m = codec.decode(bytes.subarray(offset, offset + length));
    out.push({
      headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, v.value])),
      body: toUtf8(m.body),
    });
    offset += length;
  }
  return out;
}

describe('routes and auth', () => {
  it('answers InvokeEndpoint with the variant and a request id', async () => {
    const server = await mock();
    const response = await invoke(server, '/endpoints/ep/invocations', chat, {
      'x-amzn-sagemaker-target-variant': 'B',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-amzn-invoked-production-variant')).toBe('B');
    expect(response.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await response.json()).toMatchObject({
      object: 'chat.completion',
      usage: { prompt_tokens: 2, completion_tokens: 3 },
    });
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/endpoints/ep/invocations',
      headers: { authorization: AUTH },
    });
  });

  it.each([
    ['GET', '/endpoints/ep/invocations', 404, 'UnknownOperationException'],
    ['POST', '/endpoints/ep/async-invocations', 404, 'UnknownOperationException'],
    ['POST', '/invocations', 404, 'UnknownOperationException'],
  ])('%s %s -> %i %s', async (method, path, status, type) => {
    const server = await mock();
    const response = await fetch(server.url + path, {
      method,
      headers: { authorization: AUTH },
      ...(method === 'POST' ? { body: chat } : {}),
    });
    expect(response.status).toBe(status);
    expect(response.headers.get('x-amzn-errortype')).toMatch(new RegExp(`^${type}:`));
    expect(await response.json()).toMatchObject({ __type: type });
  });

  it('refuses a request without a SigV4 Authorization (unless told not to)', async () => {
    const strict = await mock();
    for (const authorization of ['', 'Bearer x', AUTH.replace('/sagemaker/', '/s3/')]) {
      const response = await invoke(strict, '/endpoints/ep/invocations', chat, { authorization });
      expect(response.status).toBe(403);
      expect(response.headers.get('x-amzn-errortype')).toMatch(/^MissingAuthenticationTokenException/);
    }
    const lax = await mock({ requireAuth: false });
    expect(
      (
        await fetch(`${lax.url}/endpoints/ep/invocations`, {
          method: 'POST',
          body: chat,
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(200);
  });

  it('only the configured endpoints exist', async () => {
    const server = await mock({ endpoints: ['a'] });
    expect((await invoke(server, '/endpoints/a/invocations', chat)).status).toBe(200);
    const missing = await invoke(server, '/endpoints/b/invocations', chat);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      __type: 'ValidationError',
      message: expect.stringContaining('Endpoint b of account'),
    });
  });
});

describe('error injection', () => {
  it.each([
    ['model', 424, 'ModelError'],
    ['throttling', 400, 'ThrottlingException'],
    ['validation', 400, 'ValidationError'],
    ['unavailable', 503, 'ServiceUnavailable'],
    ['internal', 500, 'InternalFailure'],
    ['not-ready', 429, 'ModelNotReadyException'],
    ['dependency', 530, 'InternalDependencyException'],
  ] as const)('%s -> HTTP %i, x-amzn-errortype and __type %s', async (errorType, status, type) => {
    const server = await mock({ errorRate: 1, errorType });
    const response = await invoke(server, '/endpoints/ep/invocations', chat);
    expect(response.status).toBe(status);
    expect(response.headers.get('x-amzn-errortype')).toMatch(new RegExp(`^${type}:`));
    expect(await response.json()).toMatchObject({ __type: type, message: expect.any(String) });
  });

  it("a ModelError carries the model's status and message", async () => {
    const server = await mock();
    const response = await invoke(server, '/endpoints/ep/invocations', chat, {
      'x-amzn-sagemaker-custom-attributes': 'mock-error=model;mock-status=413',
    });
    expect(await response.json()).toMatchObject({
      OriginalStatusCode: 413,
      OriginalMessage: 'injected failure',
      LogStreamArn: expect.stringContaining('/aws/sagemaker/Endpoints/ep'),
      ErrorCode: 'CLIENT_ERROR_FROM_MODEL',
    });
  });

  it('a chat body that is not JSON is the model answering 400 (a ModelError)', async () => {
    const server = await mock();
    const response = await invoke(server, '/endpoints/ep/invocations', '{"messages": [');
    expect(response.status).toBe(424);
    expect(await response.json()).toMatchObject({ OriginalStatusCode: 400 });
  });

  it('error injection is deterministic under a seed', async () => {
    const pattern = async (seed: number) => {
      const server = await mock({ errorRate: 0.5, seed });
      const out: number[] = [];
      for (let i = 0; i < 12; i++) out.push((await invoke(server, '/endpoints/ep/invocations', chat)).status);
      return out;
    };
    expect(await pattern(7)).toEqual(await pattern(7));
  });
});

describe('models', () => {
  it('tabular CSV: one deterministic score per row, CSV back (or JSON when Accept asks)', async () => {
    const server = await mock();
    const csv = '1,2,3\r\n4,5,6\n7,8,9\n';
    const response = await invoke(server, '/endpoints/ep/invocations', csv, { 'content-type': 'text/csv' });
    expect(response.headers.get('content-type')).toBe('text/csv');
    const lines = (await response.text()).trim().split('\n');
    expect(lines.map(Number)).toEqual(['1,2,3', '4,5,6', '7,8,9'].map((row) => Number(rowScore(row).toFixed(6))));
    const json = await invoke(server, '/endpoints/ep/invocations', csv, {
      'content-type': 'text/csv',
      accept: 'application/json',
    });
    expect(((await json.json()) as { predictions: number[] }).predictions.map(String)).toEqual(lines);
  });

  it('tabular JSON: instances -> predictions; the same input gives the same output', async () => {
    const server = await mock();
    const body = JSON.stringify({ instances: [[1, 2], { a: 'b' }] });
    const a = await (await invoke(server, '/endpoints/ep/invocations', body)).text();
    const b = await (await invoke(server, '/endpoints/ep/invocations', body)).text();
    expect(a).toBe(b);
    expect(JSON.parse(a)).toEqual({
      predictions: [Number(rowScore('[1,2]').toFixed(6)), Number(rowScore('{"a":"b"}').toFixed(6))],
    });
  });

  it('binary: a digest of the body', async () => {
    const server = await mock();
    const bytes = new Uint8Array([0, 1, 2, 255, 254]);
    const response = await invoke(server, '/endpoints/ep/invocations', bytes, { 'content-type': 'image/png' });
    expect(await response.json()).toEqual({ sha256: createHash('sha256').update(bytes).digest('hex'), bytes: 5 });
    expect(server.requests[0]!.body.equals(Buffer.from(bytes))).toBe(true);
  });
});

describe('response streams (event-stream framing)', () => {
  it('openai: PayloadParts with a role chunk, one chunk per token, usage, [DONE]', async () => {
    const server = await mock();
    const response = await invoke(server, '/endpoints/ep/invocations-response-stream', chat);
    expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    expect(response.headers.get('x-amzn-sagemaker-content-type')).toBe('text/event-stream');
    const got = messages(new Uint8Array(await response.arrayBuffer()));
    expect(got.every((m) => m.headers[':message-type'] === 'event' && m.headers[':event-type'] === 'PayloadPart')).toBe(
      true,
    );
    const text = got.map((m) => m.body).join('');
    expect(text).toContain('"role":"assistant"');
    expect(text.match(/"content":/g)).toHaveLength(3);
    expect(text).toContain('"usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('split parts: every event in two PayloadParts, the same bytes joined', async () => {
    const server = await mock();
    const whole = messages(
      new Uint8Array(await (await invoke(server, '/endpoints/ep/invocations-response-stream', chat)).arrayBuffer()),
    );
    const split = messages(
      new Uint8Array(
        await (
          await invoke(server, '/endpoints/ep/invocations-response-stream', chat, {
            'x-amzn-sagemaker-custom-attributes': 'mock-split-parts=1',
          })
        ).arrayBuffer(),
      ),
    );
    expect(split).toHaveLength(whole.length * 2);
    const strip = (s: string) => s.replace(/chatcmpl-sagemaker-mock-\d+/g, 'id');
    expect(strip(split.map((m) => m.body).join(''))).toBe(strip(whole.map((m) => m.body).join('')));
  });

  it.each([
    ['tgi', 'text/event-stream', /^data:\{"token"/],
    ['jsonlines', 'application/jsonlines', /^\{"token"/],
  ])('%s format', async (format, contentType, shape) => {
    const server = await mock({ streamFormat: format as 'tgi' });
    const response = await invoke(server, '/endpoints/ep/invocations-response-stream', chat);
    expect(response.headers.get('x-amzn-sagemaker-content-type')).toBe(contentType);
    const got = messages(new Uint8Array(await response.arrayBuffer()));
    expect(got).toHaveLength(3);
    expect(got[0]!.body).toMatch(shape);
    expect(got[2]!.body).toContain('"generated_tokens":3');
  });

  it.each([
    ['stream', 'ModelStreamError'],
    ['stream-internal', 'InternalStreamFailure'],
  ])('%s: an exception message after half the tokens', async (errorType, type) => {
    const server = await mock({ errorRate: 1, errorType: errorType as 'stream', outputTokens: 4 });
    const got = messages(
      new Uint8Array(await (await invoke(server, '/endpoints/ep/invocations-response-stream', chat)).arrayBuffer()),
    );
    // role chunk + 2 tokens, then the exception
    expect(got).toHaveLength(4);
    expect(got[3]!.headers).toMatchObject({
      ':message-type': 'exception',
      ':exception-type': type,
      ':content-type': 'application/json',
    });
    expect(JSON.parse(got[3]!.body)).toMatchObject({ Message: expect.stringContaining('injected') });
  });

  it('a stream error type on InvokeEndpoint answers normally', async () => {
    const server = await mock({ errorRate: 1, errorType: 'stream' });
    expect((await invoke(server, '/endpoints/ep/invocations', chat)).status).toBe(200);
  });

  it('non-chat bodies stream their answer as one PayloadPart', async () => {
    const server = await mock();
    const response = await invoke(server, '/endpoints/ep/invocations-response-stream', '1,2\n', {
      'content-type': 'text/csv',
    });
    expect(response.headers.get('x-amzn-sagemaker-content-type')).toBe('text/csv');
    const got = messages(new Uint8Array(await response.arrayBuffer()));
    expect(got.map((m) => m.body)).toEqual([`${Number(rowScore('1,2').toFixed(6))}\n`]);
  });
});

describe('capacity (slots, lambdas/mocks/capacity.ts)', () => {
  /** Milliseconds from sending to the whole answer, for two requests sent together, shortest first. */
  async function twoTogether(
    server: MockSageMaker,
    path: string,
    body: string,
    contentType: string,
  ): Promise<[number, number]> {
    const timed = async () => {
      const start = performance.now();
      const response = await invoke(server, path, body, { 'content-type': contentType });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      return performance.now() - start;
    };
    const [a, b] = await Promise.all([timed(), timed()]);
    return a <= b ? [a, b] : [b, a];
  }

  it('one slot: of two tabular requests sent together the second waits for the first (S = TTFT for a non-chat answer)', async () => {
    const server = await mock({ ttftMs: 100, slots: 1 });
    const [first, second] = await twoTogether(server, '/endpoints/ep/invocations', '1,2\n', 'text/csv');
    expect(first).toBeGreaterThanOrEqual(100);
    expect(second).toBeGreaterThanOrEqual(200);
  });

  it('one slot: a chat request holds it for TTFT + (n - 1) * ITL, streamed or not', async () => {
    const server = await mock({ ttftMs: 40, itlMs: 20, outputTokens: 4, slots: 1 });
    const [first, second] = await twoTogether(server, '/endpoints/ep/invocations', chat, 'application/json');
    expect(first).toBeGreaterThanOrEqual(100);
    expect(second).toBeGreaterThanOrEqual(200);
  });

  it('without slots two requests sent together are answered together', async () => {
    const server = await mock({ ttftMs: 300 });
    const [first, second] = await twoTogether(server, '/endpoints/ep/invocations', '1,2\n', 'text/csv');
    expect(first).toBeGreaterThanOrEqual(300);
    // One slot would put the second a whole TTFT after the first.
    expect(second - first).toBeLessThan(150);
  });
});
