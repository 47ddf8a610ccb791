/**
 * An OpenAI-compatible sink for the fire function's rehearsal (core/fire/rehearsal.ts): a
 * node:http server in the function's own process on the loopback, answering every chat
 * request at once, streamed (SSE content chunks, a finish chunk, usage when asked, [DONE]) when
 * the body asks for `"stream": true`, else one chat.completion JSON. A body that is not a JSON
 * object gets a 400, as a server would. It exists so that the target's client code runs before
 * the first due time; nothing it answers is a result.
 *
 * The CLI rehearses against its bundled mock server instead (lambdas/local/rehearsal.ts); the
 * mocks are command-line programs, not part of the Lambda bundle.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RehearsalSink {
  url: string;
  close(): Promise<void>;
}

/** Content chunks in a streamed answer: enough to run the per-chunk path more than once. */
const CONTENT_CHUNKS = 4;

function chunk(delta: Record<string, unknown>, finish: string | null, usage?: Record<string, number>): string {
  return (
    `data: ` +
    JSON.stringify({
      id: 'rehearsal',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    }) +
    `\n\n`
  );
}

const USAGE = { prompt_tokens: 4, completion_tokens: CONTENT_CHUNKS, total_tokens: 4 + CONTENT_CHUNKS };

function answer(res: ServerResponse, body: string): void {
  let request: { stream?: unknown; stream_options?: { include_usage?: unknown } } | null = null;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) request = parsed;
  } catch {
    request = null;
  }
  if (!request) {
    res
      .writeHead(400, { 'content-type': 'application/json' })
      .end('{"error":{"message":"the body is not a JSON object"}}');
    return;
  }
  if (request.stream === true) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (let i = 0; i < CONTENT_CHUNKS; i++) res.write(chunk({ content: 'ok ' }, null));
    res.write(chunk({}, 'stop'));
    if (request.stream_options?.include_usage === true)
      res.write(
        `data: ${JSON.stringify({ id: 'rehearsal', object: 'chat.completion.chunk', choices: [], usage: USAGE })}\n\n`,
      );
    res.end('data: [DONE]\n\n');
    return;
  }
  const text = JSON.stringify({
    id: 'rehearsal',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: USAGE,
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

/** Starts a sink on a free loopback port; `handle` answers one request's body. */
export async function startSink(
  handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void,
): Promise<RehearsalSink> {
  const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => handle(req, res, Buffer.concat(parts)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function startOpenAISink(): Promise<RehearsalSink> {
  return startSink((_req, res, body) => answer(res, body.toString('utf8')));
}
