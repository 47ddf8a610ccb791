/**
 * What of an error reaches a record, whatever the target sent: the one rule for every target
 * (HTTP and SageMaker), applied where a result becomes a record (record-metrics.ts), where
 * the run manifest counts failures by type (export/manifest.ts), and by the targets
 * themselves before they hand a result back.
 *
 * The rule, field by field: ERROR_TEXT_LIMITS; as the user sees it:
 * docs/outputs.md#responses-what-is-read-what-is-kept.
 */
import { stripUrlCredentials } from '../redact';
import type { ErrorDetails } from '../types';

/**
 * - `type` is a name: a letter, then letters, digits or `_`, at most 64 characters (every
 *   error class and AWS exception name is one). Anything else (a target that put its prompt,
 *   50,000 characters or terminal escapes in its error code) is `other`.
 * - `message` is printable text: control characters (C0, DEL, C1), line and paragraph
 *   separators and bidirectional overrides become blanks, runs of blanks one space; at most
 *   `messageChars` characters, cut with an ellipsis. Of these, the response's own text is an
 *   excerpt the target already cut (response-body.ts `responseExcerpt`, 160 characters, none
 *   with `--no-response-excerpts`); the rest is ours.
 * - URL credentials are removed (redact.ts).
 * - `code` is an HTTP-like status (a whole number 0-999) or null.
 */
export const ERROR_TEXT_LIMITS = {
  /** Characters of an error type. */
  typeChars: 64,
  /** Characters of an error message: our text around an excerpt of the response's. */
  messageChars: 400,
} as const;

/** The type of an error whose own name cannot be recorded. */
export const UNNAMED_ERROR_TYPE = 'other';

const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** True when `name` may be recorded as an error type as it is. */
export function isErrorTypeName(name: string): boolean {
  return name.length <= ERROR_TEXT_LIMITS.typeChars && NAME.test(name);
}

/** `type` when it is a name, else `other`. */
export function recordedErrorType(type: string): string {
  return isErrorTypeName(type) ? type : UNNAMED_ERROR_TYPE;
}

/**
 * Characters that move the cursor, retitle or recolour a terminal, or reorder the text around
 * them: C0, DEL, C1, U+2028/U+2029, and the bidirectional marks, embeddings, overrides and
 * isolates (U+061C, U+200E/F, U+202A-E, U+2066-9).
 */
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\s]+/g;

/** `text` with control characters and runs of blanks as one space, trimmed. */
export function printableText(text: string): string {
  return text.replace(UNPRINTABLE, ' ').trim();
}

/** `text` (already printable) cut to `chars` characters with an ellipsis, never inside a surrogate pair. */
export function cutText(text: string, chars: number): string {
  if (chars <= 0) return '';
  if (text.length <= chars) return text;
  let cut = text.slice(0, Math.max(0, chars - 1));
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut + '…';
}

function recordedCode(code: unknown): number | null {
  return typeof code === 'number' && Number.isInteger(code) && code >= 0 && code <= 999 ? code : null;
}

/** The error as a record may hold it (see the header). */
export function recordedError(error: ErrorDetails): ErrorDetails {
  const message = typeof error.message === 'string' ? error.message : String(error.message);
  return {
    code: recordedCode(error.code),
    type: recordedErrorType(typeof error.type === 'string' ? error.type : ''),
    message: cutText(printableText(stripUrlCredentials(message)), ERROR_TEXT_LIMITS.messageChars),
  };
}
