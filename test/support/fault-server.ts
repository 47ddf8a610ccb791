/**
 * A hostile target, for the tests of what the CLI keeps of responses: an OpenAI-compatible
 * chat path and SageMaker's InvokeEndpoint path, each answering with the fault the request
 * asks for in its body (`"fault": "<mode>"`, sent byte for byte from the capture), so one
 * capture file exercises every fault in one run. The modes: respondFault.
 *
 * Standalone: `node --import tsx test/support/fault-server.ts --port 0` prints
 * `{"url": ...}` once listening and stops on SIGTERM/SIGINT.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { listen, serveUntilSignal } from '../../lambdas/mocks/common';
import { respondSageMakerFault } from './sagemaker-faults';
import { writeLarge } from './write-large';

export const FAULT_BODY_BYTES = 50 * 1024 * 1024;
export const REDIRECT_LOCATION =
  'http://replay-user:hunter2@elsewhere.invalid/v1/chat/completions?api_key=SECRETKEY123';

/** `head`, then `event` `count` times, then `tail`, respecting backpressure. */
function writeEvents(res: ServerResponse, head: string, event: string, count: number, tail: string): void {
  const bytes = Buffer.from(event);
  let left = count;
  res.write(head);
  const pump = () => {
    while (left > 0) {
      left--;
      if (!res.write(bytes)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end(tail);
  };
  res.on('close', () => (left = 0));
  pump();
}

const answer = (usage: unknown, content = 'fine') =>
  JSON.stringify({
    id: 'chatcmpl-fault',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage,
  });
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const USAGE = { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 };

function promptOf(payload: { messages?: { content?: unknown }[] }): string {
  return (payload.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : '')).join(' ');
}

function respond(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const sagemaker = /^\/endpoints\/[^/]+\/invocations/.test(req.url ?? '');
  let payload: { fault?: string; stream?: boolean; messages?: { content?: unknown }[] };
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('not json');
    return;
  }
  const fault = payload.fault ?? 'ok';
  const stream = payload.stream === true && !sagemaker;
  const prompt = promptOf(payload);
  if (sagemaker && respondSageMakerFault(fault, (req.url ?? '').includes('/invocations-response-stream'), prompt, res))
    return;
  respondFault({ res, sagemaker, stream, prompt }, fault);
}

/** One request's response and what the fault's answer depends on. */
interface FaultReply {
  res: ServerResponse;
  /** Asked on SageMaker's InvokeEndpoint path rather than the chat path. */
  sagemaker: boolean;
  /** A streaming request on the chat path: answered as SSE where the fault allows. */
  stream: boolean;
  prompt: string;
}

function json(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    })
    .end(text);
}

function sse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

/** A normal answer (SSE when streaming) carrying `usage`. */
function usageAnswer({ res, stream }: FaultReply, usage: unknown): void {
  if (stream) {
    sse(res);
    res.end(
      chunk({ role: 'assistant' }) +
        chunk({ content: 'a' }) +
        chunk({ content: 'b' }, 'stop') +
        `data: ${JSON.stringify({ choices: [], usage })}\n\n` +
        'data: [DONE]\n\n',
    );
  } else json(res, 200, answer(usage));
}

/**
 * Answers `fault` on either path (`sm-*` modes, SageMaker's paths only, are respondSageMakerFault's). The response to a
 * streaming request, `"stream": true`, is SSE where it matters:
 * - `ok`, `ok-stream`: a normal answer, usage {3, 5};
 * - `redirect`: 302 to a URL with credentials in it;
 * - `error-50mb`: status 500 (SageMaker path: 502 without a SageMaker error type, as a proxy
 *   would) with a 50 MB body that starts by echoing the prompt;
 * - `error-echo`: 400 whose JSON error message echoes the prompt (SageMaker path: a
 *   ModelError quoting it);
 * - `ok-error-object`: 200 with `{"error": {...}}` (streaming: a content chunk, then an error
 *   event);
 * - `ok-50mb`: 200 with a 50 MB answer (its usage after the content);
 * - `usage-huge` / `usage-fraction` / `usage-negative`: 200 with usage 1e308 / 0.5 / -1;
 * - `truncated-stream`: SSE that ends after two chunks, without [DONE] or a finish_reason;
 * - `slow-body`: 200 whose body trickles one byte every 200 ms and never ends;
 * - `sse-huge-event`: SSE whose first event is a 50 MB data line;
 * - `html-200`: 200 `text/html` (a web server's welcome page) to whatever was asked.
 */
function respondFault(reply: FaultReply, fault: string): void {
  const { res, sagemaker, stream, prompt } = reply;
  switch (fault) {
    case 'ok':
    case 'ok-stream':
      return usageAnswer(reply, USAGE);
    case 'redirect':
      res
        .writeHead(302, { location: REDIRECT_LOCATION, 'content-type': 'text/html' })
        .end(`<a href="${REDIRECT_LOCATION}">Found</a>`);
      return;
    case 'error-50mb':
      if (sagemaker) {
        res.writeHead(502, { 'content-type': 'text/html' });
        writeLarge(res, `<html><body>Bad gateway. ECHO: ${prompt} `, FAULT_BODY_BYTES, '</body></html>');
      } else {
        res.writeHead(500, { 'content-type': 'text/plain' });
        writeLarge(res, `internal error. ECHO: ${prompt} `, FAULT_BODY_BYTES, '');
      }
      return;
    case 'error-echo':
      if (sagemaker) {
        const message = `Received client error (400) from primary with message "invalid request: ${prompt}"`;
        return json(
          res,
          424,
          JSON.stringify({
            __type: 'ModelError',
            message,
            OriginalStatusCode: 400,
            OriginalMessage: `invalid request: ${prompt}`,
          }),
          { 'x-amzn-errortype': 'ModelError' },
        );
      }
      return json(
        res,
        400,
        JSON.stringify({ error: { message: `invalid request: ${prompt}`, type: 'invalid_request_error' } }),
      );
    case 'ok-error-object':
      if (stream) {
        sse(res);
        res.end(
          chunk({ role: 'assistant' }) +
            chunk({ content: 'a' }) +
            `data: ${JSON.stringify({ error: { message: `overloaded; you said: ${prompt}`, type: 'server_error' } })}\n\n` +
            'data: [DONE]\n\n',
        );
        return;
      }
      return json(
        res,
        200,
        JSON.stringify({ error: { message: `overloaded; you said: ${prompt}`, type: 'server_error', code: 503 } }),
      );
    case 'ok-50mb':
      return largeAnswer(reply);
    case 'usage-huge':
      return usageAnswer(reply, { prompt_tokens: 1e308, completion_tokens: 1e308, total_tokens: 1e308 });
    case 'usage-fraction':
      return usageAnswer(reply, { prompt_tokens: 0.5, completion_tokens: 0.5, total_tokens: 1 });
    case 'usage-negative':
      return usageAnswer(reply, { prompt_tokens: -1, completion_tokens: -1, total_tokens: -2 });
    case 'truncated-stream':
      sse(res);
      res.end(chunk({ role: 'assistant' }) + chunk({ content: 'a' }));
      return;
    case 'slow-body': {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"choices":[');
      const timer = setInterval(() => res.write(' '), 200);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case 'html-200':
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome to nginx!</body></html>');
      return;
    case 'sse-huge-event':
      sse(res);
      writeLarge(res, 'data: {"choices":[{"index":0,"delta":{"content":"', FAULT_BODY_BYTES, '"}}]}\n\n');
      return;
    default:
      return json(res, 400, JSON.stringify({ error: { message: `unknown fault ${fault}` } }));
  }
}

/** `ok-50mb`: a 200 whose answer is 50 MB, its usage after the content. */
function largeAnswer({ res, stream }: FaultReply): void {
  if (stream) {
    // 50 MB of content in 64 KiB chunks (each a normal-sized SSE event).
    sse(res);
    writeEvents(
      res,
      chunk({ role: 'assistant' }),
      chunk({ content: 'x'.repeat(65536) }),
      Math.ceil(FAULT_BODY_BYTES / 65536),
      chunk({}, 'stop') + `data: ${JSON.stringify({ choices: [], usage: USAGE })}\n\ndata: [DONE]\n\n`,
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  writeLarge(
    res,
    '{"id":"chatcmpl-fault","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"',
    FAULT_BODY_BYTES,
    `"},"finish_reason":"stop"}],"usage":${JSON.stringify(USAGE)}}`,
  );
}

export async function startFaultServer(port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => respond(req, res, Buffer.concat(parts)));
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
  const at = process.argv.indexOf('--port');
  const server = await startFaultServer(at > 0 ? Number(process.argv[at + 1]) : 0);
  serveUntilSignal(server);
}

/** A prompt to recognise in outputs: a target's echo of it must not get past the excerpt rules. */
export const SECRET_PROMPT = 'PROMPT-ECHO-CANARY ' + 'confidential words of the customer '.repeat(30);

/** One SageMaker Data Capture line whose request asks the fault server for `fault`. */
export function faultCaptureLine(
  index: number,
  fault: string,
  options: { stream?: boolean; timeMs?: number; prompt?: string } = {},
): string {
  const body = JSON.stringify({
    model: 'm',
    messages: [{ role: 'user', content: options.prompt ?? SECRET_PROMPT }],
    stream: options.stream ?? false,
    fault,
  });
  const time = new Date(options.timeMs ?? Date.UTC(2026, 3, 29, 0, 0, 0)).toISOString().replace(/\.\d+Z$/, 'Z');
  return JSON.stringify({
    captureData: {
      endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data: body, encoding: 'JSON' },
      endpointOutput: {
        observedContentType: 'application/json',
        mode: 'OUTPUT',
        data: '{"usage":{"prompt_tokens":3,"completion_tokens":5}}',
        encoding: 'JSON',
      },
    },
    eventMetadata: { eventId: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`, inferenceTime: time },
    eventVersion: '0',
  });
}
