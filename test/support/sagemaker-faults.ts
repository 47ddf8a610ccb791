/**
 * Hostile answers on SageMaker's paths, for the fault server (fault-server.ts): what a proxy or
 * an endpoint impostor can send that the real service does not, aimed at what the SageMaker
 * target keeps of it. `/invocations-response-stream` answers as an event stream. The modes
 * (`"fault": "<mode>"` in the request body): respondSageMakerFault.
 */
import type { ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { encodePayloadPart, encodeStreamException } from '../../lambdas/mocks/mock-sagemaker';
import { writeLarge } from './write-large';

/** Retitles the terminal (OSC 0, ended by BEL) and turns the text red (SGR 31). */
export const TERMINAL_ESCAPES = '\u001b]0;PWNED\u0007\u001b[31m';
/** How much of the oversized message's body the server sends (if the client keeps reading). */
export const OVERSIZED_FILL_BYTES = 256 * 1024 * 1024;
/** What the oversized message's prelude claims: 4 GiB less one byte (a uint32 can say no more). */
export const OVERSIZED_CLAIM_BYTES = 0xffff_ffff;

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const CONTENT = encodePayloadPart(
  Buffer.from(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'a' } }] })}\n\n`),
);

/** A message prelude (total length, headers length 0) with its correct CRC32: a parser believes it. */
function prelude(totalBytes: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt32BE(totalBytes, 0);
  out.writeUInt32BE(0, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  return out;
}

function errorFrame(code: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'error' },
      ':error-code': { type: 'string', value: code },
      ':error-message': { type: 'string', value: message },
    },
    body: new Uint8Array(0),
  });
}

/**
 * Answers `fault` on a SageMaker path; false when `fault` is not one of these modes:
 * - `sm-error-frame`: a content part, then an event-stream `error` message whose
 *   `:error-code` carries terminal escapes and whose `:error-message` quotes the prompt;
 * - `sm-exception-echo`: an `exception` message of a type the SDK does not model, its body
 *   quoting the prompt;
 * - `sm-model-stream-error`: a `ModelStreamError` whose `ErrorCode` carries terminal escapes
 *   and whose `Message` quotes the prompt;
 * - `sm-code-echo`: 400 whose JSON `code` (the error's name to the SDK) is the prompt and
 *   50,000 characters more;
 * - `sm-code-escape`: 400 whose JSON `code` is `ESC ]0;PWNED BEL ESC [31m` and whose message
 *   carries escapes too;
 * - `sm-oversized-frame`: a content part, then a well-formed prelude claiming a 4 GiB message,
 *   then 256 MiB of its body for as long as the client reads.
 */
export function respondSageMakerFault(
  fault: string,
  streamPath: boolean,
  prompt: string,
  res: ServerResponse,
): boolean {
  const eventStream = () =>
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-sagemaker-content-type': 'text/event-stream',
    });
  const json = (status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res
      .writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) })
      .end(text);
  };
  switch (fault) {
    case 'sm-error-frame':
      eventStream();
      res.write(CONTENT);
      res.end(errorFrame(`ModelFailure${TERMINAL_ESCAPES}`, `invalid request: ${prompt}${TERMINAL_ESCAPES}`));
      return true;
    case 'sm-exception-echo':
      eventStream();
      res.end(encodeStreamException('UnmodeledStreamFault', { message: `you said: ${prompt}` }));
      return true;
    case 'sm-model-stream-error':
      eventStream();
      res.write(CONTENT);
      res.end(
        encodeStreamException('ModelStreamError', {
          Message: `model failed on: ${prompt}${TERMINAL_ESCAPES}`,
          ErrorCode: `E${TERMINAL_ESCAPES}`,
        }),
      );
      return true;
    case 'sm-code-echo':
      json(400, { code: `${prompt}${'y'.repeat(50_000)}`, message: `invalid request: ${prompt}` });
      return true;
    case 'sm-code-escape':
      json(400, { code: TERMINAL_ESCAPES, message: `bad request${TERMINAL_ESCAPES} in red` });
      return true;
    case 'sm-oversized-frame':
      if (!streamPath) return false;
      eventStream();
      res.write(CONTENT);
      writeLarge(res, prelude(OVERSIZED_CLAIM_BYTES), OVERSIZED_FILL_BYTES, '');
      return true;
    default:
      return false;
  }
}
