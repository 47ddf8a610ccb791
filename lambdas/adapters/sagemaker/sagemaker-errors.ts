/**
 * A SageMaker runtime failure (a service exception, an event-stream error, a transport or SDK
 * error) as AIPerf's error shape.
 *
 * What the service, a proxy or the model sent is response text, whatever field it came in:
 * an error's message, an event-stream `:error-message`, the body of an exception the SDK does
 * not model, and the text of an SDK decoding error (it may quote the body). It reaches a
 * message as an excerpt of `excerptChars` characters, or not at all with 0
 * (`--no-response-excerpts`). An error's *name* comes from the response too (the SDK takes it
 * from `x-amzn-errortype`, the body's `__type` or `code`, an event's `:error-code` or
 * `:exception-type`): it is the record's type only when it is a name
 * (core/metrics/error-details.ts: letters, digits and `_`, at most 64); otherwise the error is
 * an `HTTPError` with its status (a stream's: a `StreamError`) and the name is not kept.
 */
import { isErrorTypeName } from '../../core/metrics/error-details';
import type { ErrorDetails } from '../../core/types';
import { RESPONSE_LIMITS, responseExcerpt, withExcerpt } from '../http/response-body';

/** Our own (or the SDK's) text in a message, not the response's. */
const MAX_OWN_MESSAGE = 300;
export const NOT_KEPT = 'response text not kept';

/** The HTTP status the service models for each of its errors (used when the response had none). */
const MODELED_STATUS: Record<string, number> = {
  ValidationError: 400,
  ModelError: 424,
  ModelNotReadyException: 429,
  ThrottlingException: 429,
  InternalFailure: 500,
  ServiceUnavailable: 503,
  InternalDependencyException: 530,
};

const STREAM_ERRORS = new Set(['ModelStreamError', 'InternalStreamFailure']);
const UNNAMED = new Set(['Unknown', 'UnknownError', 'SageMakerRuntimeServiceException']);
/** JavaScript's own error classes: an error of one of these was raised here (SDK, Node), not named by the response. */
const OWN_ERRORS = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'EvalError',
  'URIError',
  'AggregateError',
  'AbortError',
]);

interface SdkError {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  $fault?: string;
  $metadata?: { httpStatusCode?: number };
  OriginalStatusCode?: unknown;
  ErrorCode?: unknown;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const own = (value: string): string => value.replace(/\s+/g, ' ').trim().slice(0, MAX_OWN_MESSAGE);

/**
 * An SDK error (service exception, stream event error, transport) as AIPerf's error shape.
 * Text the service or the model sent is cut to `excerptChars` (0: left out); see the header.
 */
export function sageMakerErrorDetails(
  error: unknown,
  phase: 'request' | 'stream',
  httpStatus: number | null = null,
  streaming = phase === 'stream',
  excerptChars: number = RESPONSE_LIMITS.excerptChars,
): ErrorDetails {
  const said = (value: string): string =>
    excerptChars <= 0 ? (value.trim() ? NOT_KEPT : '') : responseExcerpt(value, excerptChars);
  const err = (error ?? {}) as SdkError;
  const name = typeof err.name === 'string' ? err.name : 'Error';
  const message = text(err.message);
  if (STREAM_ERRORS.has(name)) {
    const code = text(err.ErrorCode) ? `${text(err.ErrorCode)}: ` : '';
    return { code: null, type: name, message: said(`${code}${message}`) };
  }
  if (err.$fault === 'client' || err.$fault === 'server') {
    if (name === 'ModelError') {
      const original = typeof err.OriginalStatusCode === 'number' ? err.OriginalStatusCode : null;
      return { code: original ?? err.$metadata?.httpStatusCode ?? 424, type: name, message: said(message) };
    }
    const status =
      name === 'ThrottlingException' ? 429 : (err.$metadata?.httpStatusCode ?? MODELED_STATUS[name] ?? null);
    // A response the SDK cannot name (not the service's JSON: a proxy, a load balancer page),
    // or whose error code is not a name (a prompt, 50,000 characters, terminal escapes).
    if (UNNAMED.has(name) || !isErrorTypeName(name))
      return { code: status, type: 'HTTPError', message: withExcerpt(`HTTP ${status ?? '?'}`, message, excerptChars) };
    return { code: status, type: name, message: said(message) };
  }
  // An error status whose body the SDK could not read as the service's error (an HTML page
  // from a proxy): the SDK's message quotes that body, so it is not kept.
  if (phase === 'request' && httpStatus !== null && httpStatus >= 300) {
    const what = OWN_ERRORS.has(name) || name === 'TimeoutError' ? ` (${name})` : '';
    return {
      code: httpStatus,
      type: 'HTTPError',
      message: `HTTP ${httpStatus}: not a SageMaker error response${what}`,
    };
  }
  if (name === 'TimeoutError' || err.code === 'ETIMEDOUT')
    return { code: 408, type: 'TimeoutError', message: own(message) };
  if (name === 'CredentialsProviderError') return { code: null, type: 'CredentialsError', message: own(message) };
  if (/region is missing|invalid region/i.test(message))
    return { code: null, type: 'ConfigurationError', message: own(message) };
  // In a stream (the SDK reads its first message before `send` resolves), an error the
  // service or the model named: an event-stream `error` message (`:error-code`,
  // `:error-message`) or an exception the SDK does not model (its type, its body).
  const inStream = phase === 'stream' || (streaming && httpStatus !== null && httpStatus < 300);
  if (inStream && !err.code && !OWN_ERRORS.has(name)) {
    return { code: null, type: isErrorTypeName(name) ? name : 'StreamError', message: said(message) };
  }
  // The response came (2xx) but could not be decoded: not a connection problem. The SDK's
  // message may quote what it could not decode (a JSON parse error quotes the body).
  const malformed = phase === 'stream' || (httpStatus !== null && httpStatus < 300);
  if (malformed && !err.code) {
    const stream = phase === 'stream' || streaming;
    const detail = (message || String(error)).replace(/\s*Deserialization error:.*$/s, '');
    return {
      code: null,
      type: stream ? 'MalformedStream' : 'MalformedResponse',
      message: withExcerpt(
        stream ? 'the event stream could not be decoded' : 'the response could not be decoded',
        detail,
        excerptChars,
      ),
    };
  }
  return {
    code: null,
    type: 'ConnectionError',
    message: own(`${text(err.code) || name}: ${message || String(error)}`),
  };
}
