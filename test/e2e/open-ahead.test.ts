/**
 * The CLI (its own process) opens the connections its first second needs during the lead
 * (lambdas/local/open-ahead.ts), to an HTTP target and to a SageMaker one (the AWS SDK pointed
 * at the same server), against a plain node:net server in this process that counts
 * the TCP connections it accepts and notes how many it had accepted when the first request's
 * bytes arrived. Every answer is held 1.5 s, so that each request of the first second is
 * still in flight when the next comes and needs a connection of its own: opened ahead, they are
 * all there before the first request, and none is opened after it. Counts, not milliseconds:
 * nothing here depends on how fast the machine is (the lead leaves a second for loopback
 * connects). Before, the server saw one connection when the first request arrived (its own),
 * and the other 59 opened one by one as requests found none free.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { writeCaptureFile } from '../support/capture-gen';
import { runCli } from '../support/processes';

/** Requests in the capture's one second: every one of them a connection. */
const FIRST_SECOND = 60;
const HOLD_MS = 1500;
const ANSWER = JSON.stringify({
  id: 'c',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

let dir: string;
let captures: string;
let server: Server;
let url: string;
const seen = { accepted: 0, atFirstRequest: null as number | null, requests: 0 };
const sockets = new Set<Socket>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-e2e-open-ahead-'));
  captures = join(dir, 'captures.jsonl');
  await writeCaptureFile(captures, {
    ratePerSecond: FIRST_SECOND,
    durationSeconds: 1,
    startTime: Date.UTC(2026, 3, 29),
    bodyBytes: 200,
  });
  server = createServer((socket) => {
    seen.accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(
          /\r\ncontent-length:\s*(\d+)/i.exec(buffer.subarray(0, end).toString('latin1'))?.[1] ?? 0,
        );
        if (buffer.length < end + 4 + length) return;
        buffer = buffer.subarray(end + 4 + length);
        if (seen.requests++ === 0) seen.atFirstRequest = seen.accepted;
        setTimeout(() => {
          if (!socket.destroyed)
            socket.write(
              `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ` +
                `${Buffer.byteLength(ANSWER)}\r\nconnection: keep-alive\r\n\r\n${ANSWER}`,
            );
        }, HOLD_MS);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}, 60_000);

beforeEach(() => {
  for (const socket of sockets) socket.destroy();
  Object.assign(seen, { accepted: 0, atFirstRequest: null, requests: 0 });
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

// --no-preflight: the preflight's own connection is not counted; --lead 3000: a second and more for the connections.
const replay = (runId: string, extra: string[], env: NodeJS.ProcessEnv = {}) =>
  runCli(
    [
      'replay',
      captures,
      ...(extra.includes('--target') ? [] : ['--url', url]),
      '--out',
      dir,
      '--run-id',
      runId,
      '--no-progress',
      '--no-preflight',
      '--lead',
      '3000',
      ...extra,
    ],
    { env },
  );

describe("capture-replay replay: the first second's connections opened during the lead", () => {
  it('one thread: the server has every connection the first second needs when the first request arrives, and gets no other', async () => {
    const run = await replay('one', ['--workers', '1']);
    expect(run.code, run.stderr).toBe(0);
    expect(seen.requests).toBe(FIRST_SECOND);
    expect({ atFirstRequest: seen.atFirstRequest, accepted: seen.accepted }).toEqual({
      atFirstRequest: FIRST_SECOND,
      accepted: FIRST_SECOND,
    });
    expect(run.stderr).toContain(
      `Connections: up to ${FIRST_SECOND} to the target opened from 1000 ms before the first request`,
    );
  }, 60_000);

  it("two worker threads: each opens its own share, together the first second's", async () => {
    const run = await replay('two', ['--workers', '2']);
    expect(run.code, run.stderr).toBe(0);
    expect(seen.requests).toBe(FIRST_SECOND);
    expect({ atFirstRequest: seen.atFirstRequest, accepted: seen.accepted }).toEqual({
      atFirstRequest: FIRST_SECOND,
      accepted: FIRST_SECOND,
    });
    expect(run.stderr).toContain(
      `Connections: up to ${FIRST_SECOND} to the target opened by 2 threads from 1000 ms before the first request`,
    );
  }, 60_000);

  it("a SageMaker target: the AWS SDK's agents take the connections opened ahead (the SDK pointed at this server)", async () => {
    const env = {
      AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: url,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDTEST',
      AWS_SECRET_ACCESS_KEY: 'test-secret',
      AWS_PROFILE: '',
      AWS_SESSION_TOKEN: '',
    };
    const run = await replay('sagemaker', ['--target', 'target=sagemaker:demo-endpoint', '--workers', '1'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(seen.requests).toBe(FIRST_SECOND);
    expect({ atFirstRequest: seen.atFirstRequest, accepted: seen.accepted }).toEqual({
      atFirstRequest: FIRST_SECOND,
      accepted: FIRST_SECOND,
    });
  }, 60_000);
});
