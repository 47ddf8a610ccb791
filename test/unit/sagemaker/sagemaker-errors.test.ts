/**
 * SageMaker failures as records (adapters/sagemaker/sagemaker-errors.ts), from the error
 * objects the AWS SDK raises: names the response chose are types only when they are names,
 * and what the response said is an excerpt, or nothing with excerpts off (0). The real SDK
 * against a real server: test/e2e/sagemaker-hostile.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { sageMakerErrorDetails } from '../../../lambdas/adapters/sagemaker/sagemaker-errors';

const PROMPT = 'PROMPT-ECHO-CANARY ' + 'confidential words '.repeat(40);
const ESCAPES = '\u001b]0;PWNED\u0007\u001b[31m';
const named = (name: string, message: string, extra: object = {}) =>
  Object.assign(new Error(message), { name, ...extra });
const service = (name: string, status: number, message: string) =>
  named(name, message, { $fault: 'client', $metadata: { httpStatusCode: status } });

describe('a service error whose name is not a name', () => {
  it.each([
    ['the prompt and 50,000 characters', PROMPT + 'y'.repeat(50_000)],
    ['terminal escapes', ESCAPES],
    ['a phrase', 'Bad Request'],
  ])('%s: HTTPError with the status, the name not kept', (_, name) => {
    for (const excerptChars of [160, 0]) {
      const e = sageMakerErrorDetails(
        service(name, 400, `invalid request: ${PROMPT}`),
        'request',
        400,
        false,
        excerptChars,
      );
      expect(e.type).toBe('HTTPError');
      expect(e.code).toBe(400);
      expect(e.message).not.toContain('yyyy');
      expect(e.message).not.toContain('\u001b');
      expect(e.message.length).toBeLessThanOrEqual('HTTP 400: '.length + 160);
      if (excerptChars === 0) expect(e.message).toBe('HTTP 400 (response text not kept)');
    }
  });

  it("the service's own names stay: ValidationError, ThrottlingException (429), ModelError (the model's status)", () => {
    expect(sageMakerErrorDetails(service('ValidationError', 400, 'bad'), 'request', 400)).toEqual({
      code: 400,
      type: 'ValidationError',
      message: 'bad',
    });
    expect(sageMakerErrorDetails(service('ThrottlingException', 400, 'slow down'), 'request', 400)).toMatchObject({
      code: 429,
      type: 'ThrottlingException',
    });
    expect(
      sageMakerErrorDetails(
        named('ModelError', 'm', { $fault: 'client', $metadata: { httpStatusCode: 424 }, OriginalStatusCode: 413 }),
        'request',
        424,
      ),
    ).toMatchObject({ code: 413, type: 'ModelError' });
  });
});

describe('errors in an event stream', () => {
  it(
    'an error message (`:error-code`, `:error-message`): its code as the type when a name, else StreamError; ' +
      'its message an excerpt',
    () => {
      const quoted = sageMakerErrorDetails(
        named('ModelFailure', `invalid request: ${PROMPT}`),
        'stream',
        200,
        true,
        160,
      );
      expect(quoted).toMatchObject({ code: null, type: 'ModelFailure' });
      expect(quoted.message.length).toBeLessThanOrEqual(160);
      expect(sageMakerErrorDetails(named(`ModelFailure${ESCAPES}`, 'x'), 'stream', 200, true).type).toBe('StreamError');
      expect(
        sageMakerErrorDetails(named('ModelFailure', `invalid request: ${PROMPT}`), 'stream', 200, true, 0).message,
      ).toBe('response text not kept');
    },
  );

  it('read before send resolves (the SDK reads the first message): the same, not a decoding failure', () => {
    expect(
      sageMakerErrorDetails(named('UnmodeledStreamFault', `{"message":"${PROMPT}"}`), 'request', 200, true, 0),
    ).toEqual({ code: null, type: 'UnmodeledStreamFault', message: 'response text not kept' });
  });

  it('ModelStreamError: its ErrorCode and Message are response text', () => {
    const e = named('ModelStreamError', `failed on: ${PROMPT}`, { ErrorCode: `E${ESCAPES}` });
    expect(sageMakerErrorDetails(e, 'stream', 200, true, 160).message.length).toBeLessThanOrEqual(160);
    expect(sageMakerErrorDetails(e, 'stream', 200, true, 160).message).not.toContain('\u001b');
    expect(sageMakerErrorDetails(e, 'stream', 200, true, 0)).toEqual({
      code: null,
      type: 'ModelStreamError',
      message: 'response text not kept',
    });
  });

  it("the SDK's own decoding errors are MalformedStream, their text (it may quote the body) an excerpt", () => {
    const e = sageMakerErrorDetails(
      new SyntaxError(`Unexpected token 'P', "${PROMPT}" is not valid JSON`),
      'stream',
      200,
      true,
      0,
    );
    expect(e).toEqual({
      code: null,
      type: 'MalformedStream',
      message: 'the event stream could not be decoded (response text not kept)',
    });
    expect(sageMakerErrorDetails(new Error('Truncated event message received.'), 'stream', 200, true).message).toBe(
      'the event stream could not be decoded: Truncated event message received.',
    );
  });
});

describe('transport and local failures keep their own text', () => {
  it('connection refused, missing credentials', () => {
    expect(
      sageMakerErrorDetails(named('Error', 'connect ECONNREFUSED 127.0.0.1:9', { code: 'ECONNREFUSED' }), 'request'),
    ).toMatchObject({ code: null, type: 'ConnectionError', message: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9' });
    expect(
      sageMakerErrorDetails(
        named('CredentialsProviderError', 'Could not load credentials from any providers'),
        'request',
      ),
    ).toMatchObject({ type: 'CredentialsError' });
  });
});
