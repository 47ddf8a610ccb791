/**
 * A SageMaker runtime sink for the fire function's rehearsal (core/fire/rehearsal.ts), and the
 * runtime client both drivers point at their sink. The sink answers at once, in the function's
 * own process on the loopback:
 * - `POST /endpoints/<name>/invocations` (InvokeEndpoint): a chat completion for a JSON chat
 *   body, the body itself for anything else (CSV, binary), with the content type asked for;
 * - `POST /endpoints/<name>/invocations-response-stream` (InvokeEndpointWithResponseStream):
 *   AWS event-stream `PayloadPart` events (the SDK's own codec) carrying OpenAI-style SSE
 *   chunks, then `[DONE]`, the common shape of a streaming LLM container.
 * Anything else is a 404. Nothing it answers is a result; it exists so that the SDK's stack
 * and the target's decoding run before the first due time.
 */
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { ServerResponse } from 'node:http';
import { startSink, type RehearsalSink } from '../http/rehearsal-sink';
import { sageMakerRuntimeClientConfig } from './sagemaker-target';

const ROUTE = /^\/endpoints\/[^/]+\/(invocations|invocations-response-stream)$/;
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const CONTENT_CHUNKS = 4;

function payloadPart(text: string): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'event' },
      ':event-type': { type: 'string', value: 'PayloadPart' },
      ':content-type': { type: 'string', value: 'application/octet-stream' },
    },
    body: fromUtf8(text),
  });
}

const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const USAGE = { prompt_tokens: 4, completion_tokens: CONTENT_CHUNKS, total_tokens: 4 + CONTENT_CHUNKS };

function isChat(body: Buffer): boolean {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as { messages?: unknown }).messages);
  } catch {
    return false;
  }
}

function stream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'application/vnd.amazon.eventstream',
    'x-amzn-sagemaker-content-type': 'text/event-stream',
    'x-amzn-requestid': 'rehearsal',
  });
  for (let i = 0; i < CONTENT_CHUNKS; i++)
    res.write(
      payloadPart(
        sse({
          id: 'rehearsal',
          object: 'chat.completion.chunk',
          choices: [{ index: 0, delta: { content: 'ok ' }, finish_reason: null }],
        }),
      ),
    );
  res.write(
    payloadPart(
      sse({
        id: 'rehearsal',
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        usage: USAGE,
      }),
    ),
  );
  res.end(payloadPart('data: [DONE]\n\n'));
}

export function startSageMakerSink(): Promise<RehearsalSink> {
  return startSink((req, res, body) => {
    const route = ROUTE.exec(req.url ?? '');
    if (req.method !== 'POST' || !route) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
      return;
    }
    if (route[1] === 'invocations-response-stream') return stream(res);
    const chat = isChat(body);
    const answer = chat
      ? Buffer.from(
          JSON.stringify({
            id: 'rehearsal',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
            usage: USAGE,
          }),
        )
      : body;
    const contentType = chat
      ? 'application/json'
      : String(req.headers.accept ?? req.headers['content-type'] ?? 'application/octet-stream');
    res
      .writeHead(200, {
        'content-type': contentType,
        'content-length': answer.length,
        'x-amzn-invoked-production-variant': 'AllTraffic',
        'x-amzn-requestid': 'rehearsal',
      })
      .end(answer);
  });
}

/**
 * The SDK's own stack (middleware, signing, node:http) pointed at a sink, with made-up
 * credentials and region: nothing it sends can reach AWS.
 */
export function rehearsalSageMakerClient(sinkUrl: string, timeoutMs: number): SageMakerRuntimeClient {
  return new SageMakerRuntimeClient({
    ...sageMakerRuntimeClientConfig({ timeoutMs }),
    region: 'us-east-1',
    endpoint: sinkUrl,
    credentials: { accessKeyId: 'REHEARSAL', secretAccessKey: 'REHEARSAL' },
  });
}
