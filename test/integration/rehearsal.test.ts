/**
 * The rehearsal before schedule zero (lambdas/local/rehearsal.ts): each target's client code
 * runs against an in-process sink with the plan's own bodies, and nothing reaches the target.
 * The "targets" here are the bundled mocks recording what they receive (an HTTP one, and a
 * SageMaker one that the SDK is pointed at through AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, as a
 * user would).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../lambdas/adapters/system-clock';
import { startMockSageMaker, type MockSageMaker } from '../../lambdas/mocks/mock-sagemaker';
import { startMockServer, type MockServer } from '../../lambdas/mocks/mock-server';
import type { ReplayPlan } from '../../lambdas/core/types';
import { prepareFireWorkers } from '../../lambdas/local/fire-workers';
import { CHEAP_CONNECT_MS } from '../../lambdas/local/open-ahead';
import {
  collectBeforeZero,
  REHEARSAL_BODIES,
  rehearsalPasses,
  rehearsalRequests,
  rehearse,
} from '../../lambdas/local/rehearsal';
import { watchedWires } from '../../lambdas/adapters/wire-stamps';
import { scheduledRequest } from '../support/fixtures';
import { collectionsDuring, MAJOR, MINOR } from '../support/gc-kinds';

const clock = createSystemClock();
let target: MockServer;
let sagemaker: MockSageMaker;
const savedEnv = { ...process.env };

beforeAll(async () => {
  target = await startMockServer({ ttftMs: 0, itlMs: 0, outputTokens: 2 });
  sagemaker = await startMockSageMaker({ ttftMs: 0, itlMs: 0, outputTokens: 2 });
});

afterAll(async () => {
  await target?.close();
  await sagemaker?.close();
});

afterEach(() => {
  process.env = { ...savedEnv };
});

const chat = (i: number, streaming = false) =>
  scheduledRequest(i, i * 10, {
    body: Buffer.from(
      JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: `question ${i}` }],
        stream: streaming,
        max_tokens: 2,
      }),
    ),
    streaming,
  });

describe('rehearsalRequests', () => {
  it("cycles the plan's first bodies, renumbered, due 0.1 ms apart", () => {
    const plan = Array.from({ length: REHEARSAL_BODIES + 10 }, (_, i) => chat(i));
    const batch = rehearsalRequests(plan, 150);
    expect(batch).toHaveLength(150);
    expect(batch.map((r) => r.index)).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(batch[149]?.offsetMs).toBeCloseTo(14.9, 9);
    // Only the first REHEARSAL_BODIES bodies are used, in turn.
    expect(Buffer.from(batch[REHEARSAL_BODIES]?.body ?? []).toString()).toBe(
      Buffer.from(plan[0]?.body ?? []).toString(),
    );
    expect(Buffer.from(batch[5]?.body ?? []).toString()).toBe(Buffer.from(plan[5]?.body ?? []).toString());
    expect(rehearsalRequests([], 100)).toEqual([]);
  });
});

describe('rehearse', () => {
  it('an HTTP target: every rehearsal request answered by the sink, none sent to the target', async () => {
    const before = target.requests.length;
    const plan = [chat(0), chat(1, true), chat(2)];
    const result = await rehearse(
      [{ kind: 'http', name: 'A', baseUrl: target.url, path: '/v1/chat/completions', timeoutMs: 5_000 }],
      [plan],
      300,
      clock,
    );
    expect(result).toMatchObject({ requests: 300, succeeded: 300 });
    expect(result.ms).toBeGreaterThan(0);
    expect(target.requests.length).toBe(before);
    // Nothing left waiting for a write stamp.
    expect(watchedWires()).toBe(0);
  });

  it(
    "a SageMaker target: the SDK's own stack against a sink, nothing sent to the endpoint the SDK is " +
      'configured for, no credentials needed',
    async () => {
      process.env.AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME = sagemaker.url;
      process.env.AWS_REGION = 'eu-west-1';
      delete process.env.AWS_ACCESS_KEY_ID;
      delete process.env.AWS_SECRET_ACCESS_KEY;
      process.env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent';
      process.env.AWS_CONFIG_FILE = '/nonexistent';
      const before = sagemaker.requests.length;
      const plan = [
        chat(0),
        chat(1, true),
        scheduledRequest(2, 20, { contentType: 'text/csv', body: Buffer.from('1,2,3\n'), accept: 'text/csv' }),
      ];
      const result = await rehearse(
        [
          {
            kind: 'sagemaker',
            name: 'B',
            sagemaker: { endpointName: 'prod-endpoint', region: 'eu-west-1' },
            timeoutMs: 5_000,
          },
        ],
        [plan],
        150,
        clock,
      );
      expect(result).toMatchObject({ requests: 150, succeeded: 150 });
      expect(sagemaker.requests.length).toBe(before);
    },
  );

  it("the target's API key is not sent, not even to the sink", async () => {
    const authorizations: unknown[] = [];
    let requests = 0;
    const onHeaders = (message: unknown) => {
      requests++;
      const headers = (message as { request: { headers: unknown[] } }).request.headers;
      for (let i = 0; i + 1 < headers.length; i += 2)
        if (String(headers[i]).toLowerCase() === 'authorization') authorizations.push(headers[i + 1]);
    };
    subscribe('undici:client:sendHeaders', onHeaders);
    try {
      const result = await rehearse(
        [
          {
            kind: 'http',
            name: 'A',
            baseUrl: target.url,
            path: '/v1/chat/completions',
            timeoutMs: 5_000,
            apiKey: 'sk-secret',
          },
        ],
        [[chat(0)]],
        50,
        clock,
      );
      expect(result).toMatchObject({ requests: 50, succeeded: 50 });
    } finally {
      unsubscribe('undici:client:sendHeaders', onHeaders);
    }
    expect(requests).toBe(50);
    expect(authorizations).toEqual([]);
  });

  it('several targets: each rehearsed with its own plan; a target with nothing planned is skipped', async () => {
    const before = target.requests.length;
    const specs = [
      { kind: 'http' as const, name: 'A', baseUrl: target.url, path: '/v1/chat/completions', timeoutMs: 5_000 },
      { kind: 'http' as const, name: 'B', baseUrl: target.url, path: '/v1/chat/completions', timeoutMs: 5_000 },
    ];
    const result = await rehearse(specs, [[chat(0)], []], 100, clock);
    expect(result).toMatchObject({ requests: 100, succeeded: 100 });
    expect(target.requests.length).toBe(before);
    expect(await rehearse(specs, [[chat(0)], [chat(1)]], 0, clock)).toMatchObject({ requests: 0, succeeded: 0 });
  });

  it('counts what the sink did not answer: a body the sink rejects is a failed rehearsal request, not an error of the run', async () => {
    const notJson = scheduledRequest(0, 0, { body: Buffer.from('not json') });
    const result = await rehearse(
      [{ kind: 'http', name: 'A', baseUrl: target.url, path: '/v1/chat/completions', timeoutMs: 5_000 }],
      [[notJson, chat(1)]],
      100,
      clock,
    );
    expect(result).toMatchObject({ requests: 100, succeeded: 50 });
  });

  it('two passes: a full collection between them (the second compiles what it dropped); none with one pass or nothing rehearsed', async () => {
    let sent = 0;
    const onHeaders = () => sent++;
    const sentAtCollection: number[] = [];
    const collect = () => sentAtCollection.push(sent);
    const spec = {
      kind: 'http' as const,
      name: 'A',
      baseUrl: target.url,
      path: '/v1/chat/completions',
      timeoutMs: 5_000,
    };
    subscribe('undici:client:sendHeaders', onHeaders);
    try {
      const result = await rehearse([spec], [[chat(0)]], 40, clock, 2, collect);
      expect(result).toMatchObject({ requests: 80, succeeded: 80 });
      expect(sentAtCollection).toEqual([40]);
      expect(sent).toBe(80);
      expect(await rehearse([spec], [[chat(0)]], 40, clock, 1, collect)).toMatchObject({ requests: 40 });
      await rehearse([spec], [[]], 40, clock, 2, collect);
      await rehearse([spec], [[chat(0)]], 0, clock, 2, collect);
      expect(sentAtCollection).toEqual([40]);
    } finally {
      unsubscribe('undici:client:sendHeaders', onHeaders);
    }
  });
});

describe('rehearsalPasses', () => {
  const cheap = { ms: 0.4, tls: false };
  it('two only when every target connects cheaply (no TLS, under CHEAP_CONNECT_MS); one without a preflight', () => {
    expect(rehearsalPasses([cheap], 1)).toBe(2);
    expect(rehearsalPasses([cheap, cheap], 2)).toBe(2);
    expect(rehearsalPasses([cheap, { ms: 0.4, tls: true }], 2)).toBe(1);
    expect(rehearsalPasses([{ ms: CHEAP_CONNECT_MS, tls: false }], 1)).toBe(1);
    expect(rehearsalPasses([cheap, null], 2)).toBe(1);
    expect(rehearsalPasses([cheap], 2)).toBe(1);
    expect(rehearsalPasses(undefined, 1)).toBe(1);
  });
});

describe('collectBeforeZero', () => {
  /** The collections collectBeforeZero makes after `prepare` (a rehearsal, or a replay's preparation). */
  const collections = async (prepare: () => Promise<unknown>) => {
    await prepare();
    return (await collectionsDuring(collectBeforeZero)).kinds;
  };
  const spec = { kind: 'http' as const, name: 'A', baseUrl: '', path: '/v1/chat/completions', timeoutMs: 5_000 };

  it('after a second pass, scavenges only; after one pass, a full collection', async () => {
    const after2 = await collections(() => rehearse([{ ...spec, baseUrl: target.url }], [[chat(0)]], 10, clock, 2));
    expect(after2).not.toContain(MAJOR);
    expect(after2.filter((k) => k === MINOR)).toHaveLength(2);
    const after1 = await collections(() => rehearse([{ ...spec, baseUrl: target.url }], [[chat(0)]], 10, clock, 1));
    expect(after1).toContain(MAJOR);
  });

  it("a replay that rehearses nothing forgets an earlier replay's second pass in this process: it collects in full", async () => {
    const specs = [{ ...spec, baseUrl: target.url }];
    await rehearse(specs, [[chat(0)]], 10, clock, 2);
    const prepare = prepareFireWorkers(1, {
      wait: 'precise',
      specs,
      onError: () => undefined,
      rehearsal: 0,
      clock,
      started: () => undefined,
      connects: [{ ms: 0.3, tls: false }],
    });
    const after = await collections(() => prepare([{ requests: [chat(0)] } as unknown as ReplayPlan], 'parallel'));
    expect(after).toContain(MAJOR);
  });
});
