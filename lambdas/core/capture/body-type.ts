/**
 * What a captured input body is: its content type, as declared by `observedContentType` or
 * inferred when the capture has none, and, for a JSON type, whether the body is JSON.
 *
 * Inference (a missing or null `observedContentType`; AIPerf's Data Capture loader and some
 * writers leave it out). SageMaker writes JSON or CSV text only for the content types the
 * endpoint's capture config lists, base64 otherwise
 * (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CaptureContentTypeHeader.html),
 * so the encoding says little: `"encoding": "JSON"` says the data is JSON text, and a body that is
 * one JSON value (any encoding but CSV) is JSON: both are `application/json`, counted in the
 * ingest report as inferred, and checked as a declared JSON type is (a broken body is
 * `bad_inner_json`). Anything else stays unknown, `application/octet-stream`: CSV-looking
 * text is not guessed to be `text/csv` (a chat target drops it as `unsupported_content_type`;
 * a SageMaker target sends it as captured).
 */
import type { CaptureEncoding, RejectReason } from '../types';
import { isJsonText } from './json-check';

/** The content type of an input nothing says anything about. */
export const UNKNOWN_CONTENT_TYPE = 'application/octet-stream';
/** What an input without a content type is taken for when it is JSON. */
export const INFERRED_JSON_CONTENT_TYPE = 'application/json';

const jsonTypeCache = new Map<string, boolean>();
let lastType = '';
let lastTypeIsJson = false;

/** application/json or any +json type, parameters ignored; memoised (a file has a handful, mostly one). */
export function isJsonContentType(contentType: string): boolean {
  if (contentType === lastType) return lastTypeIsJson;
  let known = jsonTypeCache.get(contentType);
  if (known === undefined) {
    const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
    known = type === 'application/json' || type.endsWith('+json');
    if (jsonTypeCache.size < 256) jsonTypeCache.set(contentType, known);
  }
  lastType = contentType;
  lastTypeIsJson = known;
  return known;
}

/** Where JSON.parse gave up, as a number only: its message quotes the input, which may be prompt text. */
export function jsonErrorAt(error: unknown, length: number): string {
  const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined;
  return position === undefined ? `${length} chars` : `at char ${position} of ${length}`;
}

/** Why `text` is not one JSON document, or null; `utf8` is its UTF-8 encoding (the body's bytes). */
export function innerJsonError(text: string, utf8: Uint8Array): string | null {
  if (isJsonText(text, utf8)) return null;
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    return jsonErrorAt(error, text.length);
  }
}

export interface DecodedInput {
  encoding: CaptureEncoding;
  body: Buffer;
}

export type InputType =
  | { ok: true; contentType: string; inferred: boolean }
  | { ok: false; reason: RejectReason; detail: string };

/**
 * The input's content type (declared, else inferred: see the header), or the rejection of a
 * body a JSON type says is JSON and is not. `data` is the capture's text (JSON and CSV
 * encodings: the body itself).
 */
export function inputContentType(declared: string | null | undefined, decoded: DecodedInput, data: string): InputType {
  const text = () => (decoded.encoding === 'BASE64' ? decoded.body.toString('utf8') : data);
  if (declared == null) {
    if (decoded.encoding === 'JSON') {
      const error = innerJsonError(data, decoded.body);
      if (error !== null)
        return {
          ok: false,
          reason: 'bad_inner_json',
          detail: `no content type and encoding JSON, but the data is not JSON (${error})`,
        };
      return { ok: true, contentType: INFERRED_JSON_CONTENT_TYPE, inferred: true };
    }
    if (decoded.encoding === 'BASE64' && decoded.body.length > 0 && innerJsonError(text(), decoded.body) === null)
      return { ok: true, contentType: INFERRED_JSON_CONTENT_TYPE, inferred: true };
    return { ok: true, contentType: UNKNOWN_CONTENT_TYPE, inferred: false };
  }
  // Only the content type says "one JSON document": SageMaker also writes JSON Lines and
  // other JSON-ish types with encoding JSON.
  if (isJsonContentType(declared)) {
    const error = innerJsonError(text(), decoded.body);
    if (error !== null)
      return {
        ok: false,
        reason: 'bad_inner_json',
        detail: `content type ${declared.slice(0, 60)} but the data is not JSON (${error})`,
      };
  }
  return { ok: true, contentType: declared, inferred: false };
}
