/**
 * A rotating API key, in parts: SecretApiKey over a stub reader (the Powertools cache's
 * options, one forced read for many refusals, spaced forced reads, a failed read keeping the
 * known key), and the HTTP target's one refresh, one retry on 401/403 against a real socket.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import type { ApiKeySource, TargetRequest } from '../../../lambdas/ports';
import { FORCED_READ_MIN_INTERVAL_MS, SecretApiKey, type SecretReader } from '../../../lambdas/runtime/secrets';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A reader answering from `secret.value` (or failing when it is an Error) once `gate` opens, recording each call's options. */
function stubReader(secret: { value: string | Error }) {
  const calls: { maxAge: number; forceFetch?: boolean }[] = [];
  let gate: Promise<void> = Promise.resolve();
  return {
    calls,
    async get(_name: string, options: { maxAge: number; forceFetch?: boolean }) {
      calls.push(options);
      await gate;
      if (secret.value instanceof Error) throw secret.value;
      return secret.value;
    },
    /** Holds the reads from now on until the returned function is called. */
    hold(): () => void {
      let open!: () => void;
      gate = new Promise<void>((r) => (open = r));
      return open;
    },
  } satisfies SecretReader & Record<string, unknown>;
}

describe('SecretApiKey', () => {
  it('reads through the cache with maxAge, and only refresh forces a read', async () => {
    const reader = stubReader({ value: 'k1' });
    const key = new SecretApiKey({ reader, secretId: 's', field: undefined, maxAgeSeconds: 300 });
    expect(() => key.current()).toThrow(/not been read/);
    await key.update();
    expect(key.current()).toBe('k1');
    expect(reader.calls).toEqual([{ maxAge: 300 }]);
    await key.refreshed('k1');
    expect(reader.calls[1]).toEqual({ maxAge: 300, forceFetch: true });
  });

  it('a JSON secret is read by its field, as at the first read', async () => {
    const key = new SecretApiKey({
      reader: stubReader({ value: '{"api_key":"sk-2"}' }),
      secretId: 's',
      field: 'api_key',
      maxAgeSeconds: 60,
    });
    await key.update();
    expect(key.current()).toBe('sk-2');
  });

  it('many refusals of the same key at once: one forced read, every caller gets the new key', async () => {
    const secret = { value: 'k1' };
    const reader = stubReader(secret);
    const key = new SecretApiKey({ reader, secretId: 's', field: undefined, maxAgeSeconds: 300 });
    await key.update();
    secret.value = 'k2';
    const release = reader.hold();
    const waiting = Array.from({ length: 20 }, () => key.refreshed('k1'));
    release();
    expect(await Promise.all(waiting)).toEqual(Array.from({ length: 20 }, () => 'k2'));
    expect(reader.calls.filter((c) => c.forceFetch)).toHaveLength(1);
    // A refusal of the old key after the refresh: the new key, no read.
    expect(await key.refreshed('k1')).toBe('k2');
    expect(reader.calls.filter((c) => c.forceFetch)).toHaveLength(1);
  });

  it('an unchanged key: null, and forced reads at most once per interval', async () => {
    let now = 1_000_000;
    const reader = stubReader({ value: 'k1' });
    const key = new SecretApiKey({ reader, secretId: 's', field: undefined, maxAgeSeconds: 300, nowMs: () => now });
    await key.update();
    expect(await key.refreshed('k1')).toBeNull();
    now += FORCED_READ_MIN_INTERVAL_MS - 1;
    expect(await key.refreshed('k1')).toBeNull();
    expect(reader.calls.filter((c) => c.forceFetch)).toHaveLength(1);
    now += 1;
    expect(await key.refreshed('k1')).toBeNull();
    expect(reader.calls.filter((c) => c.forceFetch)).toHaveLength(2);
  });

  it('a failed read keeps the known key (and says so); with no key known it throws', async () => {
    const secret: { value: string | Error } = { value: 'k1' };
    const stale: unknown[] = [];
    const key = new SecretApiKey({
      reader: stubReader(secret),
      secretId: 's',
      field: undefined,
      maxAgeSeconds: 300,
      onStaleKey: (e) => stale.push(e),
    });
    await key.update();
    secret.value = new Error('ThrottlingException');
    await key.update();
    expect(key.current()).toBe('k1');
    expect(await key.refreshed('k1')).toBeNull();
    expect(stale).toHaveLength(2);
    const fresh = new SecretApiKey({
      reader: stubReader({ value: new Error('AccessDenied') }),
      secretId: 's',
      field: undefined,
      maxAgeSeconds: 300,
    });
    await expect(fresh.update()).rejects.toThrow(/AccessDenied/);
  });
});

describe('HTTP target with a rotating key', () => {
  const request: TargetRequest = {
    requestId: 'r-1',
    correlationId: 'c-1',
    contentType: 'application/json',
    body: Buffer.from('{"messages":[]}'),
    streaming: false,
  };

  /** A server that accepts only `accepted.key` and answers `refusal` otherwise; the keys it saw, in order. */
  async function server(accepted: { key: string }, refusal = 401) {
    const seen: string[] = [];
    const s = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        seen.push(key);
        const ok = key === accepted.key;
        res.writeHead(ok ? 200 : refusal, { 'content-type': 'application/json' });
        res.end(
          ok
            ? '{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}'
            : '{"error":{"message":"invalid api key"}}',
        );
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          s.closeAllConnections();
          s.close(() => r());
        }),
    );
    return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen };
  }

  /** A key source holding `keys[0]`, whose refresh moves to the next key (null when there is none). */
  function source(keys: string[]): ApiKeySource & { refreshes: number } {
    let i = 0;
    return {
      refreshes: 0,
      current: () => keys[i]!,
      async refreshed(sent) {
        this.refreshes++;
        if (keys[i] !== sent) return keys[i]!;
        if (i + 1 >= keys.length) return null;
        i++;
        return keys[i]!;
      },
    };
  }

  function target(url: string, apiKeySource: ApiKeySource) {
    const t = createOpenAITarget({ name: 't', baseUrl: url, timeoutMs: 5000, clock: systemClock, apiKeySource });
    cleanups.push(() => t.close());
    return t;
  }

  it.each([401, 403])(
    'a %i with a key that changed: sent again once with the new key, and that result is the request',
    async (status) => {
      const { url, seen } = await server({ key: 'k2' }, status);
      const keys = source(['k1', 'k2']);
      const result = await target(url, keys).send(request);
      expect(result.error).toBeNull();
      expect(result.httpStatus).toBe(200);
      expect(seen).toEqual(['k1', 'k2']);
      expect(keys.refreshes).toBe(1);
    },
  );

  it('a 401 with a key that did not change: the 401 is the result, sent once', async () => {
    const { url, seen } = await server({ key: 'other' });
    const result = await target(url, source(['k1'])).send(request);
    expect(result.error).toMatchObject({ code: 401, type: 'HTTPError' });
    expect(seen).toEqual(['k1']);
  });

  it('a new key refused too: two sends, never a third', async () => {
    const { url, seen } = await server({ key: 'k3' });
    const keys = source(['k1', 'k2', 'k3']);
    const result = await target(url, keys).send(request);
    expect(result.error).toMatchObject({ code: 401 });
    expect(seen).toEqual(['k1', 'k2']);
    expect(keys.refreshes).toBe(1);
  });

  it('other failures do not read the key again', async () => {
    const { url, seen } = await server({ key: 'nobody' }, 500);
    const keys = source(['k1', 'k2']);
    const result = await target(url, keys).send(request);
    expect(result.error).toMatchObject({ code: 500 });
    expect(seen).toEqual(['k1']);
    expect(keys.refreshes).toBe(0);
  });
});
