/**
 * An OpenAI-compatible target that accepts one API key at a time, the one it was last given:
 * a provider's key rotated under a running replay.
 *
 * Standalone: `node --import tsx test/support/key-server.ts --port 0 --key <key>` prints
 * `{"url": ...}` once listening and stops on SIGTERM/SIGINT.
 * - POST (any path): 200 with a small chat answer for `Authorization: Bearer <current key>`,
 *   401 with an OpenAI-style error otherwise.
 * - PUT /_key, body the new key: from then on only that key is accepted.
 * - GET /_seen: the chat requests so far, in arrival order: `[{"key", "status"}]`.
 */
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { listen, serveUntilSignal } from '../../lambdas/mocks/common';

export interface SeenRequest {
  key: string;
  status: number;
}

export async function startKeyServer(initialKey: string, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  let current = initialKey;
  const seen: SeenRequest[] = [];
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      if (req.method === 'PUT' && req.url === '/_key') {
        current = Buffer.concat(parts).toString('utf8');
        res.writeHead(204).end();
        return;
      }
      if (req.method === 'GET' && req.url === '/_seen') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen));
        return;
      }
      const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const status = key === current ? 200 : 401;
      seen.push({ key, status });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(
        status === 200
          ? JSON.stringify({
              id: 'c',
              object: 'chat.completion',
              choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 1, completion_tokens: 1 },
            })
          : JSON.stringify({
              error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
            }),
      );
    });
  });
  const { url } = await listen(server, { port });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (name: string) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? process.argv[at + 1] : undefined;
  };
  const key = arg('--key');
  if (!key) throw new Error('key-server: --key <key> is required');
  serveUntilSignal(await startKeyServer(key, Number(arg('--port') ?? 0)));
}
