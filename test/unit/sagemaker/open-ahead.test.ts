/**
 * A SageMaker target's connections opened ahead (adapters/http/agent-reserve.ts): `openAhead(n)`
 * opens n connections to the endpoint the SDK resolves for the client (here
 * AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME) before any request, and the requests that follow go out
 * on them: the server accepts no connection of a request's own. Counted at a local server,
 * not timed. And a request handed over ahead of its due time (`notBeforeNs`) is prepared then
 * and written no earlier than that time.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSageMakerTarget,
  PREPARE_AHEAD_MS,
  sageMakerRuntimeClientConfig,
} from '../../../lambdas/adapters/sagemaker/sagemaker-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { setEnv } from '../../support/set-env';

let server: Server;
let url: string;
const accepted: Socket[] = [];
/** When each request reached the server (this process's clock), by its inference id. */
const arrivedNs = new Map<string, bigint>();
let restore: () => void;

beforeAll(async () => {
  server = createServer((req, res) => {
    arrivedNs.set(String(req.headers['x-amzn-sagemaker-inference-id']), systemClock.nowNs());
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify({
        choices: [{ message: { content: 'ok' } }],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  server.on('connection', (socket) => accepted.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  restore = setEnv({
    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: url,
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_REGION: 'us-east-1',
  });
});

afterAll(async () => {
  restore();
  for (const s of accepted) s.destroy();
  server.close();
});

const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
};

describe('a SageMaker target opens connections ahead', () => {
  it(
    'openAhead(3): three connections before any request, and three requests sent together take them (no ' +
      'connection of their own)',
    async () => {
      const client = new SageMakerRuntimeClient(sageMakerRuntimeClientConfig({ timeoutMs: 10_000, connections: 16 }));
      const target = createSageMakerTarget({
        name: 'S',
        endpointName: 'ep',
        timeoutMs: 10_000,
        clock: systemClock,
        client,
      });
      const before = accepted.length;
      target.openAhead(3);
      await until(() => accepted.length - before === 3);
      expect(accepted.length - before).toBe(3);
      const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
      const results = await Promise.all(
        [0, 1, 2].map((i) =>
          target.send({
            requestId: `r-${i}`,
            correlationId: 'c',
            contentType: 'application/json',
            body,
            streaming: false,
          }),
        ),
      );
      for (const r of results) expect(r.error).toBeNull();
      expect(accepted.length - before, 'no connection opened for a request').toBe(3);
      // Topped up again: the three are idle now, so nothing more is opened for three.
      target.openAhead(3);
      await new Promise((r) => setTimeout(r, 100));
      expect(accepted.length - before).toBe(3);
      await target.close();
      client.destroy();
    },
  );
});

describe('a SageMaker target prepares a request ahead', () => {
  it(
    'asks for requests PREPARE_AHEAD_MS early; one handed over with notBeforeNs starts then and reaches the ' +
      'server no earlier',
    async () => {
      const client = new SageMakerRuntimeClient(sageMakerRuntimeClientConfig({ timeoutMs: 10_000, connections: 4 }));
      const target = createSageMakerTarget({
        name: 'S',
        endpointName: 'ep',
        timeoutMs: 10_000,
        clock: systemClock,
        client,
      });
      expect(target.preparesAheadMs).toBe(PREPARE_AHEAD_MS);
      const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
      const notBeforeNs = systemClock.nowNs() + 80_000_000n;
      const result = await target.send({
        requestId: 'held-1',
        correlationId: 'c',
        contentType: 'application/json',
        body,
        streaming: false,
        notBeforeNs,
      });
      expect(result.error).toBeNull();
      expect(result.requestStartNs).toBe(notBeforeNs);
      expect(result.requestWireNs! >= notBeforeNs, 'written at or after its time').toBe(true);
      expect(arrivedNs.get('held-1')! >= notBeforeNs, 'never early at the server').toBe(true);
      await target.close();
      client.destroy();
    },
  );
});
