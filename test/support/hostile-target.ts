/**
 * A capture and a target that put markup in everything they control, for the report's
 * browser test of a real run: the capture's event and inference ids, prompts and model names;
 * the target's answers (model names, content, ids), its error bodies (OpenAI `type`, `code`
 * and `message`; SageMaker's JSON `code`, which the SDK makes the error type, 50,000
 * characters long after the markup; a ModelError quoting the prompt) and stream errors.
 * Request `i` of the capture gets answer `i % 3` (0: an answer, 1: an error status, 2: a
 * stream error on the HTTP path, a ModelError on SageMaker's).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen } from '../../lambdas/mocks/common';

/** Characters after the markup in the SageMaker error `code` that becomes the error type. */
export const HUGE_ERROR_TAIL = 50_000;

function respond(markup: string, req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const sagemaker = /^\/endpoints\/[^/]+\/invocations/.test(req.url ?? '');
  let payload: { i?: number; stream?: boolean; messages?: { content?: string }[] } = {};
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    // A body that is not JSON answers like index 0.
  }
  const prompt = (payload.messages ?? []).map((m) => m.content ?? '').join(' ');
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(value);
    res
      .writeHead(status, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(text)),
        ...headers,
      })
      .end(text);
  };
  const usage = { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 };
  const answer = {
    id: markup,
    object: 'chat.completion',
    model: markup,
    choices: [{ index: 0, message: { role: 'assistant', content: `${markup} ${prompt}` }, finish_reason: 'stop' }],
    usage,
  };
  switch ((payload.i ?? 0) % 3) {
    case 1:
      if (sagemaker)
        return json(400, { code: `${markup}${'x'.repeat(HUGE_ERROR_TAIL)}`, message: `${markup} ${prompt}` });
      return json(400, {
        error: { message: `${markup} ${prompt}`, type: `${markup}${'x'.repeat(HUGE_ERROR_TAIL)}`, code: markup },
      });
    case 2:
      if (sagemaker) {
        const message = `Received client error (400) from primary with message "${markup} ${prompt}"`;
        return json(
          424,
          { __type: 'ModelError', message, OriginalStatusCode: 400, OriginalMessage: `${markup} ${prompt}` },
          { 'x-amzn-errortype': 'ModelError' },
        );
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(
        `data: ${JSON.stringify({
          id: markup,
          model: markup,
          object: 'chat.completion.chunk',
          choices: [{ index: 0, delta: { role: 'assistant', content: markup }, finish_reason: null }],
        })}\n\n` +
          `data: ${JSON.stringify({ error: { message: `${markup} ${prompt}`, type: markup, code: markup } })}\n\n` +
          'data: [DONE]\n\n',
      );
      return;
    default:
      return json(200, answer);
  }
}

/** The hostile target on a free local port: OpenAI's chat path and SageMaker's InvokeEndpoint path. */
export async function startHostileTarget(markup: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => respond(markup, req, res, Buffer.concat(parts)));
  });
  const { url } = await listen(server, { port: 0 });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * `n` Data Capture lines with `markup` in every field a capture controls: the event id
 * (with the index, so each is its own request), the inference id, the prompt and the model;
 * requests 2, 5, 8... ask for a stream. All in one captured second.
 */
export function hostileCaptureLines(markup: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const body = JSON.stringify({
      model: markup,
      messages: [{ role: 'user', content: markup }],
      stream: i % 3 === 2,
      i,
    });
    return JSON.stringify({
      captureData: {
        endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data: body, encoding: 'JSON' },
        endpointOutput: {
          observedContentType: 'application/json',
          mode: 'OUTPUT',
          data: JSON.stringify({ model: markup, usage: { prompt_tokens: 7, completion_tokens: 5 } }),
          encoding: 'JSON',
        },
      },
      eventMetadata: { eventId: `${markup}-${i}`, inferenceId: markup, inferenceTime: '2026-04-29T00:00:00Z' },
      eventVersion: '0',
    });
  });
}
