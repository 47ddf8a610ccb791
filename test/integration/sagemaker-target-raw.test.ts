/**
 * The SageMaker target with the real AWS SDK v3 against a raw HTTP server in place of the service
 * (answers SageMaker does not send: a proxy's HTML page, a plain body for a stream, an error in the
 * model's stream, a stall), and the CLI's mock-sagemaker subcommand. The target against the mock
 * SageMaker runtime: sagemaker-target.test.ts.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SageMakerTargetOptions } from '../../lambdas/adapters/sagemaker/sagemaker-target';
import { encodePayloadPart } from '../../lambdas/mocks/mock-sagemaker';
import type { TargetClient } from '../../lambdas/ports';
import { cliScript, REPO_ROOT } from '../support/processes';
import { chat, REGION, request, sageMakerTestEnv, sageMakerTestTarget } from '../support/sagemaker-target-fixture';
import { setEnv } from '../support/set-env';

let dir: string;
let restoreEnv = () => {};
const targets: TargetClient[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sagemaker-target-raw-'));
  restoreEnv = setEnv({
    ...sageMakerTestEnv(dir),
  });
});

afterAll(async () => {
  await Promise.all(targets.map((t) => t.close()));
  restoreEnv();
  await rm(dir, { recursive: true, force: true });
});

const target = (extra: Partial<SageMakerTargetOptions> = {}) => sageMakerTestTarget(targets, extra);

describe('responses that are not what SageMaker sends', () => {
  /** A raw HTTP server in place of the service, and a target (with its own client) aimed at it. */
  async function rawTarget(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
    extra: Partial<SageMakerTargetOptions> = {},
  ) {
    const server = createHttpServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const client = new SageMakerRuntimeClient({
      endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      region: REGION,
      maxAttempts: 1,
    });
    const t = target({ client, ...extra });
    return {
      t,
      async close() {
        client.destroy();
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  it("an HTML error page (a proxy's) -> HTTPError with its status, without the page", async () => {
    const raw = await rawTarget((req, res) => {
      req.resume();
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body>Bad Gateway, secret upstream name</body></html>');
    });
    for (const streaming of [false, true]) {
      const result = await raw.t.send(request(chat(), { streaming }));
      expect(result.error).toMatchObject({ code: 502, type: 'HTTPError' });
      expect(result.error!.message).not.toMatch(/html|secret/i);
    }
    await raw.close();
  });

  it('a 200 stream that is not an event stream -> MalformedStream', async () => {
    const raw = await rawTarget((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('plain text, not an event stream at all');
    });
    const result = await raw.t.send(request(chat(), { streaming: true }));
    expect(result.error).toMatchObject({ code: null, type: 'MalformedStream' });
    await raw.close();
  });

  it("an error object in the model's stream -> StreamError, the chunks before it kept, the stream let go", async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((r) => (closed = r));
    const raw = await rawTarget((req, res) => {
      req.resume();
      res.on('close', () => closed());
      res.writeHead(200, {
        'content-type': 'application/vnd.amazon.eventstream',
        'x-amzn-sagemaker-content-type': 'text/event-stream',
      });
      res.write(
        encodePayloadPart(Buffer.from(`data: ${JSON.stringify({ choices: [{ delta: { content: 'a' } }] })}\n\n`)),
      );
      res.write(
        encodePayloadPart(Buffer.from(`data: ${JSON.stringify({ error: { message: 'CUDA out of memory' } })}\n\n`)),
      );
      // ...and keeps the stream open: the target must not wait for its end.
    });
    const result = await raw.t.send(request(chat(), { streaming: true }));
    expect(result.error).toMatchObject({ code: null, type: 'StreamError', message: 'CUDA out of memory' });
    expect(result.contentChunkNs).toHaveLength(1);
    // Let go at once (the response destroyed), not when the socket times out 10 s later.
    const closedWithin = await Promise.race([
      connectionClosed.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 1000)),
    ]);
    expect(closedWithin).toBe(true);
    await raw.close();
  });

  it('a stream that stalls after its headers -> TimeoutError, and the connection is let go', async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((r) => (closed = r));
    const raw = await rawTarget(
      (req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
        res.write(
          encodePayloadPart(Buffer.from(`data: ${JSON.stringify({ choices: [{ delta: { content: 'a' } }] })}\n\n`)),
        );
        res.on('close', () => closed());
      },
      { timeoutMs: 200 },
    );
    const result = await raw.t.send(request(chat(), { streaming: true }));
    expect(result.error).toMatchObject({ code: 408, type: 'TimeoutError' });
    expect(result.contentChunkNs).toHaveLength(1);
    await connectionClosed;
    await raw.close();
  });
});

describe('the CLI subcommand', () => {
  it('capture-replay mock-sagemaker prints its URL, answers, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [cliScript(), 'mock-sagemaker', '--port', '0', '--ttft-ms', '0', '--no-require-auth'],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
    const { url } = JSON.parse(line) as { url: string };
    const response = await fetch(`${url}/endpoints/any/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: '1,2\n3,4\n',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv');
    expect((await response.text()).trim().split('\n')).toHaveLength(2);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });
});
